/**
 * The Redis workers' writes to job records. Every change is one read-modify-write transaction in
 * SQLite (store.updateJob) made of job-state.ts's moves, so two workers finishing documents of one
 * job at once serialize on SQLite's write lock and the last one to finish ends the job. An end
 * that cannot be written (a full disk, a locked file) is kept and written again with backoff, so
 * the job converges as soon as storage allows instead of staying `running`.
 *
 * Notices go over the bus ('kb:job'): item events with the fraction of this worker's view, and the
 * job's end, after which its spool folder goes.
 */
import { toolError } from '../errors.ts';
import type { Bus } from '../redis/bus.ts';
import { errorText } from '../util/error-text.ts';
import { END_RETRY_FIRST_MS, END_RETRY_MAX_MS } from './job-end-writer.ts';
import { removeSpool } from './job-spool.ts';
import { endIfDone, endItem, itemEndMessage, itemEvent, jobEndEvent, requeueItem, startItem, TERMINAL_STAGES, type ItemEnd } from './job-state.ts';
import type { JobItem, JobRecord, KbStoreApi } from './types.ts';

/** Document ends kept for another write at most (a full disk under a flood of documents); the reconciler fails what falls out. */
const UNSAVED_ENDS_MAX = 1_024;

export interface WorkerRecordsDeps {
  store: KbStoreApi;
  bus: Bus;
  spoolDir: string;
  onItemFailed?(job: Readonly<JobRecord>, item: Readonly<JobItem>, error: { code: string; message: string }): void;
  onItemCancelled?(job: Readonly<JobRecord>, item: Readonly<JobItem>): void;
  /** A document ended and its job did not: the job may take the next part of its folders. */
  afterItem?(job: JobRecord): void;
  log?: { warn(obj: object, msg?: string): void; info(obj: object, msg?: string): void };
}

export type StartDecision = { kind: 'run'; job: JobRecord; item: JobItem } | { kind: 'skip' } | { kind: 'cancelled' };

interface UnsavedEnd {
  jobId: string;
  index: number;
  end: ItemEnd;
  cancelled: boolean;
}

export class WorkerRecords {
  /** Ends not written yet, by `job:index`, oldest first. */
  private readonly unsaved = new Map<string, UnsavedEnd>();
  private retryTimer: NodeJS.Timeout | null = null;
  private retryDelay = END_RETRY_FIRST_MS;
  private closed = false;

  constructor(private readonly deps: WorkerRecordsDeps) {}

  /**
   * Decides, under the write lock, whether a document runs: not when it ended, cancelled when its
   * job's cancel was asked; a document whose stage says it was running lost its worker (killed,
   * or its lock lapsed) and is taken again here, which the item notes and the job counts.
   */
  start(jobId: string, index: number): StartDecision {
    let decision: 'run' | 'skip' | 'cancelled' = 'skip';
    let ended = false;
    const job = this.deps.store.updateJob(jobId, (j, flags) => {
      const item = j.items[index];
      if (!item || TERMINAL_STAGES.has(item.stage)) return false;
      if (flags.cancelRequested) {
        endItem(item, { stage: 'cancelled', document_id: item.document_id, note: null, error: null });
        ended = endIfDone(j, true);
        decision = 'cancelled';
        return;
      }
      if (item.stage !== 'queued') {
        item.note = `taken again after its worker stopped during "${item.stage}"`;
        j.resumed++;
      }
      startItem(j, item);
      decision = 'run';
    });
    if (!job || decision === 'skip') return { kind: 'skip' };
    if (decision === 'cancelled') {
      this.announceEnd(job, index, ended);
      return { kind: 'cancelled' };
    }
    const item = job.items[index]!;
    this.publish(job, 'progress', item, `${item.source}: downloading`);
    return { kind: 'run', job, item };
  }

  /** Progress within a document, merged into the current record; a cancel seen here aborts it. */
  saveProgress(jobId: string, item: JobItem, ctrl: AbortController): void {
    try {
      this.deps.store.updateJob(jobId, (job, flags) => {
        if (flags.cancelRequested) ctrl.abort(toolError('CONFLICT', `Job ${jobId} was cancelled`));
        const it = job.items[item.index];
        if (!it || TERMINAL_STAGES.has(it.stage)) return false;
        it.stage = item.stage;
        it.document_id = item.document_id;
        it.progress = { ...item.progress };
      });
    } catch (err) {
      this.deps.log?.warn({ event: 'kb.job.save_failed', job: jobId, err: errorText(err) }, 'could not record job progress');
    }
  }

  cancelAsked(jobId: string): boolean {
    try {
      return this.deps.store.jobCancelRequested(jobId);
    } catch {
      return false;
    }
  }

  /** Back to the queue with a note (a retry, a stopping worker); `message` is sent as a progress event. */
  requeue(jobId: string, index: number, note: string, message: string | null): void {
    const job = this.deps.store.updateJob(jobId, (j) => {
      const it = j.items[index];
      if (!it || TERMINAL_STAGES.has(it.stage)) return false;
      requeueItem(it, note);
    });
    if (job && message) this.publish(job, 'progress', job.items[index]!, message);
  }

  /** Records the end of one document; the process that ends the last one ends the job. */
  end(jobId: string, index: number, end: ItemEnd, cancelled = false): void {
    let ended = false;
    let changed = false;
    let job: JobRecord | null;
    try {
      job = this.deps.store.updateJob(jobId, (j, flags) => {
        const it = j.items[index];
        if (!it || !endItem(it, end)) return false;
        changed = true;
        ended = endIfDone(j, flags.cancelRequested);
      });
    } catch (err) {
      this.deps.log?.warn({ event: 'kb.job.save_failed', job: jobId, err: errorText(err) }, 'could not record the end of a document; retrying');
      this.keep({ jobId, index, end, cancelled });
      return;
    }
    if (!job || !changed) return;
    const item = job.items[index]!;
    try {
      if (item.stage === 'failed' && item.error) this.deps.onItemFailed?.(job, item, item.error);
      if (cancelled) this.deps.onItemCancelled?.(job, item);
    } catch (err) {
      this.deps.log?.warn({ event: 'kb.item.record_failed', job: jobId, err: errorText(err) }, 'could not record a failed document');
    }
    this.announceEnd(job, index, ended);
  }

  /** Fails a document whose record still says it runs (BullMQ gave up on it, its worker vanished); nothing when it ended. */
  failIfRunning(jobId: string, index: number, error: { code: string; message: string }): void {
    try {
      const job = this.deps.store.getJob(jobId);
      const item = job?.items[index];
      if (!item || TERMINAL_STAGES.has(item.stage)) return;
      this.end(jobId, index, { stage: 'failed', document_id: item.document_id, note: null, error });
    } catch {
      // the store is away: the next reconcile tries again
    }
  }

  /** Every item ended but the job did not (its last writer died in between): ends it. */
  endIfAllEnded(jobId: string): void {
    let ended = false;
    let job: JobRecord | null = null;
    try {
      job = this.deps.store.updateJob(jobId, (r, flags) => {
        ended = endIfDone(r, flags.cancelRequested);
        if (!ended) return false;
      });
    } catch {
      return; // the next reconcile tries again
    }
    if (job && ended) this.announceJobEnd(job);
  }

  publish(job: JobRecord, type: 'progress' | 'item', item: JobItem, message: string): void {
    // The fraction needs every item's stage: this worker's view, with this item's latest.
    const view = { ...job, items: job.items.map((i) => (i.index === item.index ? item : i)) };
    this.deps.bus.publish('kb:job', { job_id: job.id, event: itemEvent(view, type, item, message) });
  }

  announceJobEnd(job: JobRecord): void {
    this.deps.bus.publish('kb:job', { job_id: job.id, event: jobEndEvent(job) });
    void removeSpool(this.deps.spoolDir, job.id);
  }

  /** One last try for the ends not written yet; what still fails is failed by a reconciler later. */
  close(): void {
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    const pending = [...this.unsaved.values()];
    this.unsaved.clear();
    for (const e of pending) this.end(e.jobId, e.index, e.end, e.cancelled);
  }

  private announceEnd(job: JobRecord, index: number, ended: boolean): void {
    this.publish(job, 'item', job.items[index]!, itemEndMessage(job.items[index]!));
    if (ended) this.announceJobEnd(job);
    else this.deps.afterItem?.(job);
  }

  private keep(e: UnsavedEnd): void {
    const key = `${e.jobId}:${e.index}`;
    this.unsaved.delete(key);
    this.unsaved.set(key, e);
    while (this.unsaved.size > UNSAVED_ENDS_MAX) this.unsaved.delete(this.unsaved.keys().next().value!);
    if (this.retryTimer || this.closed) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      const pending = [...this.unsaved.values()];
      this.unsaved.clear();
      // Each failure puts its end back (keep), which schedules the next try.
      for (const p of pending) this.end(p.jobId, p.index, p.end, p.cancelled);
      this.retryDelay = this.unsaved.size > 0 ? Math.min(END_RETRY_MAX_MS, this.retryDelay * 2) : END_RETRY_FIRST_MS;
    }, this.retryDelay);
    this.retryTimer.unref();
  }
}
