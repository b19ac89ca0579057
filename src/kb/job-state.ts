/**
 * The job state machine, pure: no store, no timers, no I/O. Both queues (job-runner.ts in
 * process, redis-job-queue.ts + ingest-worker.ts with REDIS_URL) move items and jobs only through
 * these functions, so a job's statuses, counts, progress fractions and end conditions are the same
 * whichever queue runs it.
 *
 * Items: queued -> downloading -> extracting -> chunking -> embedding -> indexing -> done | skipped,
 * and from any unfinished stage to failed or cancelled, or back to queued (a retry, a worker that
 * stopped, a restart). Jobs: queued -> running -> succeeded | partial | failed | cancelled, and
 * queued straight to an end when nothing ran (cancelled before a slot was free).
 */
import { randomBytes } from 'node:crypto';
import { isToolError } from '../errors.ts';
import { errorText } from '../util/error-text.ts';
import type { FeedState, ItemProgress, ItemStage, JobEvent, JobItem, JobRecord, JobStatus, NewItem } from './types.ts';
import { isWalking, setFeed } from './folder-feed.ts';
// The progress formula is the contract's, so the console draws the fractions the server reports.
import { ENDED_ITEM_STAGES, ENDED_JOB_STATUSES, jobFraction } from '../contract/job-progress.ts';

export const TERMINAL_STAGES: ReadonlySet<ItemStage> = ENDED_ITEM_STAGES;
export const LOST_UPLOAD_REASON = 'interrupted by a restart; the upload was lost';

/** The stages a running item moves through, in order (progress may skip some: a skipped file ends after downloading). */
const WORK_STAGES: readonly ItemStage[] = ['downloading', 'extracting', 'chunking', 'embedding', 'indexing'];

/** Every allowed item move. Ended stages are final. */
export const ITEM_TRANSITIONS: Readonly<Record<ItemStage, ReadonlySet<ItemStage>>> = {
  queued: new Set(['downloading', 'skipped', 'failed', 'cancelled']),
  downloading: new Set(['downloading', 'extracting', 'chunking', 'embedding', 'indexing', 'done', 'skipped', 'failed', 'cancelled', 'queued']),
  extracting: new Set(['extracting', 'chunking', 'embedding', 'indexing', 'done', 'skipped', 'failed', 'cancelled', 'queued']),
  chunking: new Set(['chunking', 'embedding', 'indexing', 'done', 'skipped', 'failed', 'cancelled', 'queued']),
  embedding: new Set(['embedding', 'indexing', 'done', 'skipped', 'failed', 'cancelled', 'queued']),
  indexing: new Set(['indexing', 'done', 'skipped', 'failed', 'cancelled', 'queued']),
  done: new Set(),
  skipped: new Set(),
  failed: new Set(),
  cancelled: new Set(),
};

/** Every allowed job move. */
export const JOB_TRANSITIONS: Readonly<Record<JobStatus, ReadonlySet<JobStatus>>> = {
  queued: new Set(['running', 'succeeded', 'partial', 'failed', 'cancelled']),
  running: new Set(['succeeded', 'partial', 'failed', 'cancelled']),
  succeeded: new Set(),
  partial: new Set(),
  failed: new Set(),
  cancelled: new Set(),
};

export function canMoveItem(from: ItemStage, to: ItemStage): boolean {
  return ITEM_TRANSITIONS[from].has(to);
}

export function canMoveJob(from: JobStatus, to: JobStatus): boolean {
  return JOB_TRANSITIONS[from].has(to);
}

const now = () => new Date().toISOString();

export function newJobId(): string {
  return `job_${randomBytes(6).toString('hex')}`;
}

export function isEnded(job: Pick<JobRecord, 'status'>): boolean {
  return ENDED_JOB_STATUSES.has(job.status);
}

export function countsOf(items: readonly JobItem[]): JobRecord['counts'] {
  const c = { total: items.length, done: 0, skipped: 0, failed: 0, cancelled: 0 };
  for (const i of items) {
    if (i.stage === 'done') c.done++;
    else if (i.stage === 'skipped') c.skipped++;
    else if (i.stage === 'failed') c.failed++;
    else if (i.stage === 'cancelled') c.cancelled++;
  }
  return c;
}

export const emptyProgress = (): ItemProgress => ({ pages_done: null, pages_total: null, chunks_embedded: null, chunks_total: null });

// ---- item moves ----

/** An item starts (or starts again): downloading, its progress and error cleared; its job runs. */
export function startItem(job: JobRecord, item: JobItem): void {
  item.stage = 'downloading';
  item.started_at = now();
  item.progress = emptyProgress();
  item.error = null;
  if (job.status === 'queued') {
    job.status = 'running';
    job.started_at = now();
  }
}

/** Progress reported by the ingestion of one item; true when its stage changed. Ignored once the item ended. */
export function applyProgress(item: JobItem, stage: ItemStage, p: Partial<ItemProgress>, documentId: string | null): boolean {
  if (TERMINAL_STAGES.has(item.stage) || !WORK_STAGES.includes(stage)) return false;
  const changed = stage !== item.stage;
  item.stage = stage;
  if (documentId) item.document_id = documentId;
  Object.assign(item.progress, p);
  return changed;
}

/** Back to the queue with a note (a retry, a stopping worker, a restart); its progress restarts. */
export function requeueItem(item: JobItem, note: string | null): void {
  item.stage = 'queued';
  item.progress = emptyProgress();
  if (note !== null) item.note = note;
}

export type ItemEnd = Pick<JobItem, 'stage' | 'document_id' | 'note' | 'error'>;

/**
 * The end of one item. A note from before (taken again after a worker died, retried) stays
 * beside the result's. False when the item had ended already (nothing changes).
 */
export function endItem(item: JobItem, r: ItemEnd): boolean {
  if (TERMINAL_STAGES.has(item.stage)) return false;
  item.stage = r.stage;
  item.document_id = r.document_id;
  item.note = item.note && r.note && item.note !== r.note ? `${item.note}; ${r.note}` : (r.note ?? item.note);
  item.error = r.error;
  item.finished_at = now();
  return true;
}

/** Cancels every unfinished item (or only the queued ones); returns how many. */
export function cancelItems(job: JobRecord, which: 'queued' | 'unfinished'): number {
  let n = 0;
  for (const item of job.items) {
    if (TERMINAL_STAGES.has(item.stage) || (which === 'queued' && item.stage !== 'queued')) continue;
    item.stage = 'cancelled';
    item.finished_at = now();
    n++;
  }
  job.counts = countsOf(job.items);
  return n;
}

/** Fails every unfinished item with one error (a restart that cannot resume, a queue that cannot be reached). */
export function failUnfinished(job: JobRecord, error: { code: string; message: string }): void {
  for (const item of job.items) {
    if (TERMINAL_STAGES.has(item.stage)) continue;
    item.stage = 'failed';
    item.error = { ...error };
    item.finished_at = now();
  }
  job.counts = countsOf(job.items);
}

// ---- job ends ----

/** The final status of a job whose items have all ended. */
export function endStatus(job: JobRecord, cancelRequested: boolean): JobStatus {
  const c = job.counts;
  if (cancelRequested) return 'cancelled';
  if (c.failed === 0) return 'succeeded';
  if (c.failed === c.total) return 'failed';
  return 'partial';
}

/** Every item ended and no folder is still walked: the job may end. */
export function allEnded(job: JobRecord): boolean {
  return !isWalking(job) && job.items.every((i) => TERMINAL_STAGES.has(i.stage));
}

/** Ends the job: status, counts, reason (storage failures, every document failed) and end time. */
export function finishJob(job: JobRecord, cancelRequested: boolean): void {
  job.counts = countsOf(job.items);
  const c = job.counts;
  job.status = endStatus(job, cancelRequested);
  if (!job.reason) job.reason = storageReason(job);
  if (job.status === 'failed' && !job.reason) job.reason = c.total === 1 ? 'its document failed' : 'every document failed';
  job.finished_at = now();
}

/**
 * When every item has ended: ends the job (true). Called inside the store's updateJob
 * transaction with Redis, so exactly one process ends a job.
 */
export function endIfDone(job: JobRecord, cancelRequested: boolean): boolean {
  job.counts = countsOf(job.items);
  // Its folders still walked: more documents are to come (folder-feed.ts).
  if (isEnded(job) || !allEnded(job)) return false;
  finishJob(job, cancelRequested);
  return true;
}

/** The reason of a job some of whose documents failed because the storage did (a full disk), or null. */
export function storageReason(job: JobRecord): string | null {
  const failed = job.items.filter((i) => i.stage === 'failed' && i.error?.code === 'STORAGE_UNAVAILABLE');
  if (failed.length === 0) return null;
  return `storage unavailable: ${failed.length} of ${job.counts.total} documents could not be saved (${failed[0]!.error!.message})`;
}

// ---- events ----

/** The event a job's end sends its listeners. */
export function jobEndEvent(job: JobRecord): JobEvent {
  const c = job.counts;
  return {
    job_id: job.id,
    type: 'job',
    fraction: 1,
    job: { id: job.id, status: job.status, reason: job.reason, counts: { ...c } },
    message: `job ${job.status}: ${c.done} done, ${c.skipped} skipped, ${c.failed} failed, ${c.cancelled} cancelled of ${c.total}${job.reason ? ` (${job.reason})` : ''}`,
  };
}

/** A progress or item event of one item. */
export function itemEvent(job: JobRecord, type: 'progress' | 'item', item: JobItem, message: string): JobEvent {
  // While its folders are still walked, more items are to come: the job is not done yet.
  const fraction = isWalking(job) ? Math.min(0.99, jobFraction(job)) : jobFraction(job);
  return { job_id: job.id, type, fraction, item: structuredClone(item), message };
}

/** Calls one listener of a job's events; a listener's failure is its own. */
export function safeCall(l: (e: JobEvent) => void, e: JobEvent): void {
  try {
    l(e);
  } catch {
    // a listener's failure is its own
  }
}

/** The message of an item's end event. */
export function itemEndMessage(item: JobItem): string {
  return `${item.source}: ${item.stage}${item.error ? ` (${item.error.code}: ${item.error.message})` : ''}`;
}

// ---- new jobs ----

/** Job items from new items, numbered from `start`: queued, or already ended when left out or failed. */
export function jobItemsOf(items: readonly NewItem[], start = 0): JobItem[] {
  return items.map((it, k) => ({
    index: start + k,
    source: it.source,
    source_kind: it.source_kind,
    stage: it.failed ? ('failed' as const) : it.leftOut ? ('skipped' as const) : ('queued' as const),
    document_id: null,
    note: it.leftOut ?? null,
    error: it.failed ?? null,
    progress: emptyProgress(),
    started_at: null,
    finished_at: it.leftOut || it.failed ? now() : null,
    ...(it.local ? { local: it.local } : {}),
    ...(it.delete ? { delete: it.delete } : {}),
  }));
}

/** A failed item saying why a part of a folder walk failed (the walk ends there). */
export function feedFailedItem(job: JobRecord, err: unknown): NewItem {
  const root = job.feed?.roots[Math.min(job.feed.root, job.feed.roots.length - 1)]?.path ?? 'folder';
  const error = isToolError(err) ? { code: err.code, message: err.message } : { code: 'PROCESSING_ERROR', message: errorText(err) };
  return { source: root, source_kind: 'path', failed: { code: error.code, message: `the folder walk stopped here: ${error.message}` } };
}

/** A new job's record: every item queued, nothing started. */
export function newJobRecord(collection: string, items: readonly NewItem[], feed?: FeedState): JobRecord {
  const record: JobRecord = {
    id: newJobId(),
    collection,
    status: 'queued',
    reason: null,
    items: jobItemsOf(items),
    counts: countsOf([]),
    created_at: now(),
    started_at: null,
    finished_at: null,
    resumed: 0,
  };
  record.counts = countsOf(record.items);
  if (feed) setFeed(record, feed);
  return record;
}
