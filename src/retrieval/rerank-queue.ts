/**
 * Concurrency-limited queue in front of the cross-encoder. At most `concurrency` scoring jobs run
 * at once; up to `maxQueue` wait, each at most `waitMs`. A job that cannot get a slot is skipped
 * rather than queued without bound, so a burst of searches keeps its fused order instead of
 * piling up latency. run() never throws: every outcome is a RerankOutcome.
 */
import type { RerankOutcome, Reranker } from './types.ts';

export interface RerankQueueOptions {
  /** The reranker to use, or null with the reason it is not available; read on every call. */
  reranker: () => Reranker | null;
  unavailableReason?: () => string;
  concurrency: number;
  maxQueue: number;
  waitMs: number;
}

interface Waiter {
  grant: () => void;
  cancel: (reason: string) => void;
}

export interface RerankQueueStats {
  running: number;
  queued: number;
  concurrency: number;
  maxQueue: number;
  waitMs: number;
  used: number;
  skipped: number;
  failed: number;
  unavailable: number;
}

export class RerankQueue {
  private readonly opts: RerankQueueOptions;
  private running = 0;
  private readonly waiting: Waiter[] = [];
  private readonly counts = { used: 0, skipped: 0, failed: 0, unavailable: 0 };
  private closed = false;

  constructor(opts: RerankQueueOptions) {
    this.opts = {
      ...opts,
      concurrency: Math.max(1, Math.floor(opts.concurrency)),
      maxQueue: Math.max(0, Math.floor(opts.maxQueue)),
      waitMs: Math.max(0, opts.waitMs),
    };
  }

  async run(query: string, passages: string[], signal?: AbortSignal): Promise<RerankOutcome> {
    const reranker = this.closed ? null : this.opts.reranker();
    if (!reranker) {
      this.counts.unavailable++;
      const reason = this.closed ? 'reranker is shut down' : (this.opts.unavailableReason?.() ?? 'no reranker model is loaded');
      return { status: 'unavailable', reason };
    }
    if (passages.length === 0) {
      this.counts.used++;
      return { status: 'used', scores: [] };
    }
    const slot = await this.acquire(signal);
    if (slot !== true) {
      this.counts.skipped++;
      return { status: 'skipped', reason: slot };
    }
    try {
      if (signal?.aborted) {
        this.counts.skipped++;
        return { status: 'skipped', reason: 'request aborted' };
      }
      const scores = await reranker.score(query, passages, signal);
      if (scores.length !== passages.length || scores.some((s) => !Number.isFinite(s))) {
        throw new Error(`reranker returned ${scores.length} scores for ${passages.length} passages`);
      }
      this.counts.used++;
      return { status: 'used', scores };
    } catch (err) {
      if (signal?.aborted) {
        this.counts.skipped++;
        return { status: 'skipped', reason: 'request aborted' };
      }
      this.counts.failed++;
      return { status: 'failed', reason: `reranking failed: ${err instanceof Error ? err.message : String(err)}` };
    } finally {
      this.release();
    }
  }

  /** true when a slot is held; otherwise the reason none was given. */
  private acquire(signal?: AbortSignal): Promise<true | string> {
    if (signal?.aborted) return Promise.resolve('request aborted');
    if (this.running < this.opts.concurrency && this.waiting.length === 0) {
      this.running++;
      return Promise.resolve(true);
    }
    if (this.waiting.length >= this.opts.maxQueue) {
      return Promise.resolve(`rerank queue full (${this.running} running, ${this.waiting.length} waiting)`);
    }
    if (this.opts.waitMs === 0) return Promise.resolve('rerank queue busy and RERANK_QUEUE_WAIT_MS is 0');
    return new Promise<true | string>((resolve) => {
      const done = (result: true | string) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        const at = this.waiting.indexOf(waiter);
        if (at >= 0) this.waiting.splice(at, 1);
        resolve(result);
      };
      const waiter: Waiter = {
        grant: () => done(true),
        cancel: (reason) => done(reason),
      };
      const onAbort = () => done('request aborted');
      const timer = setTimeout(() => done(`waited ${this.opts.waitMs} ms for a rerank slot`), this.opts.waitMs);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(waiter);
    });
  }

  private release(): void {
    const next = this.waiting[0];
    if (next) {
      // The slot passes straight to the next waiter; `running` stays the same.
      next.grant();
    } else {
      this.running--;
    }
  }

  stats(): RerankQueueStats {
    return {
      running: this.running,
      queued: this.waiting.length,
      concurrency: this.opts.concurrency,
      maxQueue: this.opts.maxQueue,
      waitMs: this.opts.waitMs,
      ...this.counts,
    };
  }

  /** Waiting jobs are skipped; running ones finish. */
  close(): void {
    this.closed = true;
    for (const w of [...this.waiting]) w.cancel('reranker is shut down');
  }
}
