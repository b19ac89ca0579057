/**
 * Admission for extraction jobs. Each running job reserves its child's memory ceiling
 * (EXTRACT_MEMORY_MB) from the process-wide budget (MAX_MEMORY_MB), and at most EXTRACT_CONCURRENCY
 * run at once. Jobs that do not fit wait in a bounded FIFO (EXTRACT_QUEUE_MAX); beyond it they are
 * refused at once with OVERLOADED, which names the limit that is full.
 */
import { toolError } from '../errors.ts';
import { abortError } from '../util/abort.ts';

export interface BudgetLimits {
  concurrency: number;
  perJobMb: number;
  budgetMb: number;
  queueMax: number;
}

interface Waiter {
  resolve: (release: () => void) => void;
  reject: (err: unknown) => void;
  signal: AbortSignal;
  onAbort: () => void;
}

export class MemoryBudget {
  private running = 0;
  private readonly waiters: Waiter[] = [];
  private refused = 0;

  constructor(private readonly limits: BudgetLimits) {}

  /** Jobs that can run at once: the concurrency, or fewer when the budget holds fewer ceilings. */
  get slots(): number {
    return Math.max(1, Math.min(this.limits.concurrency, Math.floor(this.limits.budgetMb / this.limits.perJobMb)));
  }

  stats(): { running: number; queued: number; refused: number; reserved_mb: number; budget_mb: number; slots: number } {
    return {
      running: this.running,
      queued: this.waiters.length,
      refused: this.refused,
      reserved_mb: this.running * this.limits.perJobMb,
      budget_mb: this.limits.budgetMb,
      slots: this.slots,
    };
  }

  /** Resolves to the release function once the job may run. */
  acquire(signal: AbortSignal): Promise<() => void> {
    if (signal.aborted) return Promise.reject(abortError(signal, 'Extraction'));
    if (this.running < this.slots && this.waiters.length === 0) return Promise.resolve(this.grant());
    if (this.waiters.length >= this.limits.queueMax) {
      this.refused++;
      return Promise.reject(toolError('OVERLOADED', `Extraction is at capacity (${this.fullLimit()}) and EXTRACT_QUEUE_MAX=${this.limits.queueMax} calls are already waiting; retry later`));
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        resolve,
        reject,
        signal,
        onAbort: () => {
          const i = this.waiters.indexOf(waiter);
          if (i >= 0) this.waiters.splice(i, 1);
          reject(abortError(signal, 'Extraction'));
        },
      };
      signal.addEventListener('abort', waiter.onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  /** Refuses everything waiting (shutdown). */
  rejectAll(err: unknown): void {
    for (const w of this.waiters.splice(0)) {
      w.signal.removeEventListener('abort', w.onAbort);
      w.reject(err);
    }
  }

  private fullLimit(): string {
    const { concurrency, perJobMb, budgetMb } = this.limits;
    if (this.slots >= concurrency) return `EXTRACT_CONCURRENCY=${concurrency} extractions running`;
    return `MAX_MEMORY_MB=${budgetMb} MB reserved by ${this.running} running extraction${this.running === 1 ? '' : 's'} of EXTRACT_MEMORY_MB=${perJobMb} MB each`;
  }

  private grant(): () => void {
    this.running++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.running--;
      this.pump();
    };
  }

  private pump(): void {
    while (this.running < this.slots && this.waiters.length > 0) {
      const w = this.waiters.shift()!;
      w.signal.removeEventListener('abort', w.onAbort);
      w.resolve(this.grant());
    }
  }
}
