/**
 * Collection searches run a few at a time, each starting in its own event-loop turn. A search's
 * ranking is synchronous CPU (milliseconds at 100k chunks); 32 searches arriving together would
 * otherwise run back to back inside one turn, and /health and small calls would wait behind all
 * of them. Started one turn apart, I/O is served between any two. The wait queue is bounded:
 * past it the answer is OVERLOADED, never an unbounded backlog.
 *
 * "One turn apart" holds between running searches too: a search's turn is requested only once
 * the search before it has run its synchronous part, so the two never share one pass of the
 * event loop's check phase (setImmediate callbacks queued before a pass all run in it). With 32
 * searches queued and a width of 2, the loop's poll phase (/health, new requests) is reached after
 * one search's CPU, not two; the width still lets a search waiting on I/O (a query embedding)
 * overlap another.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { toolError } from '../errors.ts';

export class SearchGate {
  private active = 0;
  private readonly waiting: Array<() => void> = [];
  /** The last search given a turn, until it has run its synchronous part (null: none pending). */
  private lastStart: Promise<void> | null = null;

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
    let resolveMine!: () => void;
    const mine = new Promise<void>((resolve) => (resolveMine = resolve));
    const before = this.lastStart;
    this.lastStart = mine;
    const started = () => {
      resolveMine();
      if (this.lastStart === mine) this.lastStart = null;
    };
    try {
      if (before) await before;
      // A fresh turn: whatever I/O arrived meanwhile is served before this search's CPU work.
      await nextTurn();
      signal?.throwIfAborted();
      const running = fn();
      // fn has returned at its first await: the next search may ask for its own turn.
      started();
      return await running;
    } finally {
      started();
      this.active--;
      this.waiting.shift()?.();
    }
  }

  stats(): { active: number; waiting: number; concurrency: number; queue_max: number } {
    return { active: this.active, waiting: this.waiting.length, concurrency: this.concurrency, queue_max: this.queueMax };
  }
}
