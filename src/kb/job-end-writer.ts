/**
 * Ended jobs whose end could not be written (a full disk, a locked file), kept in memory so reads
 * answer them from here (never the stale `running` row) and written again with backoff while the
 * process lives. The spool goes only once the end is written: until then a restart may still
 * resume the job.
 */
import { errorText } from '../util/error-text.ts';
import type { JobRecord, KbStoreApi } from './types.ts';

/** Ended jobs whose end could not be written, kept in memory for reads and retried; beyond this the oldest is dropped (the next start resumes it). */
export const UNSAVED_ENDS_MAX = 256;
/** Backoff of the retries writing unsaved ends: doubling from the first to the last, then steady. */
export const END_RETRY_FIRST_MS = 500;
export const END_RETRY_MAX_MS = 30_000;

export interface JobEndWriterDeps {
  store: KbStoreApi;
  /** Called once a job's end is written. */
  onSaved(jobId: string): void;
  log?: { warn(obj: object, msg?: string): void; info(obj: object, msg?: string): void };
}

export class JobEndWriter {
  /** Insertion order: oldest first. */
  private readonly unsaved = new Map<string, JobRecord>();
  private retryTimer: NodeJS.Timeout | null = null;
  private retryDelay = END_RETRY_FIRST_MS;
  private closed = false;

  constructor(private readonly deps: JobEndWriterDeps) {}

  get size(): number {
    return this.unsaved.size;
  }

  get(id: string): JobRecord | undefined {
    return this.unsaved.get(id);
  }

  has(id: string): boolean {
    return this.unsaved.has(id);
  }

  /** Writes an ended job, or keeps it to write again later. */
  save(job: JobRecord): void {
    try {
      this.deps.store.saveJob(job);
      this.deps.onSaved(job.id);
      return;
    } catch (err) {
      this.deps.log?.warn({ event: 'kb.job.save_failed', job: job.id, err: errorText(err) }, 'could not record the end of a job; retrying');
    }
    this.unsaved.delete(job.id);
    this.unsaved.set(job.id, job);
    while (this.unsaved.size > UNSAVED_ENDS_MAX) {
      const oldest = this.unsaved.keys().next().value!;
      this.unsaved.delete(oldest);
      this.deps.log?.warn({ event: 'kb.job.end_dropped', job: oldest }, 'too many job ends wait to be written; the oldest is left to the next start');
    }
    this.scheduleRetry();
  }

  /** A last try; what still cannot be written is resumed (or failed) by the next start. */
  close(): void {
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    this.retryUnsaved();
  }

  private scheduleRetry(): void {
    if (this.retryTimer || this.closed || this.unsaved.size === 0) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      const before = this.unsaved.size;
      this.retryUnsaved();
      // Progress (the storage is back) restarts the backoff; none doubles it.
      this.retryDelay = this.unsaved.size < before ? END_RETRY_FIRST_MS : Math.min(END_RETRY_MAX_MS, this.retryDelay * 2);
      this.scheduleRetry();
    }, this.retryDelay);
    this.retryTimer.unref();
  }

  /** Writes the unsaved ends, oldest first, stopping at the first failure (the storage is still down). */
  private retryUnsaved(): void {
    for (const [id, job] of this.unsaved) {
      try {
        this.deps.store.saveJob(job);
      } catch {
        return;
      }
      this.unsaved.delete(id);
      this.deps.log?.info({ event: 'kb.job.end_saved', job: id, status: job.status }, 'the end of a job was recorded after the storage came back');
      this.deps.onSaved(id);
    }
    if (this.unsaved.size === 0) this.retryDelay = END_RETRY_FIRST_MS;
  }
}
