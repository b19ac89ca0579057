/**
 * Collection searches run a few at a time, each starting in its own event-loop turn. A search's
 * ranking is synchronous CPU (milliseconds at 100k chunks); 32 searches arriving together would
 * otherwise run back to back inside one turn, and /health and small calls would wait behind all
 * of them. Started one turn apart, I/O is served between any two. The wait queue is bounded:
 * past it the answer is OVERLOADED, never an unbounded backlog.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { toolError } from '../errors.ts';

export class SearchGate {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(
    private readonly concurrency = 2,
    private readonly queueMax = 256,
  ) {}

  async run<T>(fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (this.active >= this.concurrency) {
      if (this.waiting.length >= this.queueMax) {
        throw toolError('OVERLOADED', `Too many collection searches at once (${this.queueMax} waiting): retry shortly`);
      }
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    }
    this.active++;
    try {
      // A fresh turn: whatever I/O arrived meanwhile is served before this search's CPU work.
      await nextTurn();
      signal?.throwIfAborted();
      return await fn();
    } finally {
      this.active--;
      this.waiting.shift()?.();
    }
  }

  stats(): { active: number; waiting: number; concurrency: number; queue_max: number } {
    return { active: this.active, waiting: this.waiting.length, concurrency: this.concurrency, queue_max: this.queueMax };
  }
}
