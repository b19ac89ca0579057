/**
 * Ingestion jobs: a bounded in-process queue that runs documents INGEST_CONCURRENCY at a time
 * across all jobs, taking turns between jobs (round-robin) so one big folder does not hold back a
 * small upload. Every job lives in the store: created before it is queued, saved at every item
 * stage change (progress-only ticks at most once a second per job), so a restart finds it and
 * resumes what was not done. An upload is spooled to DATA_DIR/kb/uploads/<job>/<item> (atomic)
 * for the same reason, with the job's options beside it, and the folder goes when the job ends.
 * Subscribers (SSE, MCP progress) get JobEvents; waitFor resolves when a job ends or times out.
 *
 * Jobs always converge, even when the store fails (a full disk): the in-memory record stays the
 * truth (a document whose commit failed counts as failed), a job whose end cannot be written is
 * kept here and answered from memory while its end is written again with backoff, and a job of
 * a process that is gone (its owner handle is dead, db.ts) is adopted: resumed, or ended
 * cancelled when cancelling it is asked. So no read ever reports `running` for a job nobody runs.
 */
import { randomBytes } from 'node:crypto';
import fsSync from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { checkTenantRoom, DEFAULT_TENANT, type TenantLimits } from './tenant-share.ts';
import { isToolError, toolError } from '../errors.ts';
import { errorText } from '../util/error-text.ts';
import type { FeedState, ItemProgress, ItemStage, JobEvent, JobItem, JobRecord, JobStatus, KbStoreApi, NewItem } from './types.ts';
import { feedWindow, isWalking, setFeed, stopFeed, wantsFeed, type FeedNext } from './folder-feed.ts';
// The progress formula is the contract's, so the console draws the fractions the server reports.
import { jobFraction } from '../contract/job-progress.ts';

/** What a job was asked for beyond its items, kept beside its spool so a resumed job runs the same way. */
export interface JobOptions {
  force: boolean;
  ocr?: { mode?: 'auto' | 'always' | 'never'; languages?: string[] };
  /** Allowed folders for its local paths when they came with the request (MCP roots). */
  allowedDirs?: string[];
  allowedOrigin?: string;
  /** Content types of spooled uploads, by item index. */
  contentTypes?: Record<number, string>;
  /** The upload's read sequence number, taken when it was received (the newest read wins: ingest-document.ts). */
  uploadReadSeq?: number;
  /** The API key that submitted the job (tenant-share.ts); absent: DEFAULT_TENANT. */
  tenant?: string;
}

export interface ItemRun {
  job: Readonly<JobRecord>;
  item: Readonly<JobItem>;
  options: Readonly<JobOptions>;
  /** Upload items: the spooled bytes. */
  upload?: Buffer;
  signal: AbortSignal;
  /** Stage changes are saved at once; progress within a stage is throttled. */
  progress(stage: ItemStage, p: Partial<ItemProgress>, documentId: string | null): void;
}

export interface ItemResult {
  stage: 'done' | 'skipped';
  documentId: string;
  note: string | null;
}

export interface JobRunnerDeps {
  store: KbStoreApi;
  /** DATA_DIR/kb/uploads. */
  spoolDir: string;
  concurrency: number;
  queueMax: number;
  /** Per-key shares of the queue (tenant-share.ts); null or absent: auth off, one tenant. */
  tenantLimits?: TenantLimits | null;
  /** Seconds per document (INGEST_DOCUMENT_TIMEOUT). */
  documentTimeoutS: number;
  runItem(run: ItemRun): Promise<ItemResult>;
  /** A document that failed (recorded against it in the store by the caller). */
  onItemFailed?(job: Readonly<JobRecord>, item: Readonly<JobItem>, error: { code: string; message: string }): void;
  /** An item that was cancelled while running (the caller may drop a pending row it created). */
  onItemCancelled?(job: Readonly<JobRecord>, item: Readonly<JobItem>): void;
  /** Takes the next part of a job's folders (folder-feed.ts); without it, jobs cannot name folders. */
  feed?: FeedNext;
  log?: { warn(obj: object, msg?: string): void; info(obj: object, msg?: string): void };
}

// Defined beside the job types (folder-feed.ts makes items too, and imports no runner).
export type { NewItem } from './types.ts';

export const TERMINAL_STAGES: ReadonlySet<ItemStage> = new Set(['done', 'skipped', 'failed', 'cancelled']);
const ENDED: ReadonlySet<JobStatus> = new Set(['succeeded', 'partial', 'failed', 'cancelled']);
const PROGRESS_SAVE_MS = 1_000;
/** Ended jobs whose end could not be written, kept in memory for reads and retried; beyond this the oldest is dropped (the next start resumes it). */
export const UNSAVED_ENDS_MAX = 256;
/** Backoff of the retries writing unsaved ends: doubling from the first to the last, then steady. */
export const END_RETRY_FIRST_MS = 500;
export const END_RETRY_MAX_MS = 30_000;
const SAVE_AT_ONCE_MAX_ITEMS = 200;
export const LOST_UPLOAD_REASON = 'interrupted by a restart; the upload was lost';

const now = () => new Date().toISOString();

export function newJobId(): string {
  return `job_${randomBytes(6).toString('hex')}`;
}

export function isEnded(job: Pick<JobRecord, 'status'>): boolean {
  return ENDED.has(job.status);
}

export function countsOf(items: JobItem[]): JobRecord['counts'] {
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

interface LiveJob {
  record: JobRecord;
  options: JobOptions;
  pending: number[];
  running: Map<number, AbortController>;
  listeners: Set<(e: JobEvent) => void>;
  lastSaved: number;
  saveTimer: NodeJS.Timeout | null;
  cancelRequested: boolean;
  lastTurn: number;
  /** A part of its folders being walked (folder-feed.ts), to abort on cancel or close. */
  feeding: AbortController | null;
}

/** The final status of a job whose items have all ended. */
export function endStatus(job: JobRecord, cancelRequested: boolean): JobStatus {
  const c = job.counts;
  if (cancelRequested) return 'cancelled';
  if (c.failed === 0) return 'succeeded';
  if (c.failed === c.total) return 'failed';
  return 'partial';
}

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

/** The job's options with the uploads' content types by item index (kept beside the spool). */
export function withContentTypes(options: JobOptions, items: readonly NewItem[]): JobOptions {
  const contentTypes: Record<number, string> = {};
  items.forEach((it, i) => {
    if (it.upload?.contentType) contentTypes[i] = it.upload.contentType;
  });
  return { ...options, ...(Object.keys(contentTypes).length ? { contentTypes } : {}) };
}

export class JobRunner {
  private readonly live = new Map<string, LiveJob>();
  /** Counts item starts: a job's last turn, for round-robin. */
  private turns = 0;
  /** Each tenant's last turn, for round-robin between keys. */
  private readonly tenantTurns = new Map<string, number>();
  private active = 0;
  private closed = false;
  private readonly idle = new Set<() => void>();
  /** Ended jobs whose end is not in the store yet (insertion order: oldest first), with their options for the spool. */
  private readonly unsaved = new Map<string, JobRecord>();
  private retryTimer: NodeJS.Timeout | null = null;
  private retryDelay = END_RETRY_FIRST_MS;
  /** Room held by folder walks under way: their files count against INGEST_QUEUE_MAX before they arrive. */
  private reserved = 0;
  /** The most documents seen waiting at once since start (health reports it). */
  private queuedPeak = 0;

  constructor(private readonly deps: JobRunnerDeps) {}

  /** Ended jobs whose end could not be written yet (for health reports and tests). */
  unsavedEnds(): number {
    return this.unsaved.size;
  }

  /** Documents waiting (not yet started) across all jobs. */
  queued(): number {
    let n = 0;
    for (const j of this.live.values()) n += j.pending.length;
    return n;
  }

  running(): number {
    return this.active;
  }

  stats(): { jobs_active: number; documents_queued: number; documents_queued_peak: number; documents_running: number; queue_max: number; concurrency: number; folders_walking: number } {
    let walking = 0;
    for (const j of this.live.values()) if (isWalking(j.record)) walking++;
    return {
      jobs_active: this.live.size,
      documents_queued: this.queued(),
      documents_queued_peak: this.queuedPeak,
      documents_running: this.active,
      queue_max: this.deps.queueMax,
      concurrency: this.deps.concurrency,
      folders_walking: walking,
    };
  }

  /** The live record of a job that has not ended, or of one whose end is not saved yet (null otherwise: read the store). */
  liveJob(id: string): JobRecord | null {
    return this.live.get(id)?.record ?? this.unsaved.get(id) ?? null;
  }

  /** Jobs of a collection still queued or running. */
  jobsOf(collection: string): string[] {
    return [...this.live.values()].filter((j) => j.record.collection === collection).map((j) => j.record.id);
  }

  /** OVERLOADED when `count` more documents would not fit INGEST_QUEUE_MAX; RATE_LIMITED past the key's share. */
  checkRoom(count: number, tenant: string = DEFAULT_TENANT): void {
    if (this.deps.tenantLimits) {
      const load = { waiting: 0, jobs: 0 };
      for (const j of this.live.values()) {
        if ((j.options.tenant ?? DEFAULT_TENANT) !== tenant) continue;
        load.jobs++;
        load.waiting += j.pending.length;
      }
      checkTenantRoom(tenant, load, count, this.deps.tenantLimits);
    }
    if (count > this.deps.queueMax) {
      // Never fits, however long the caller waits: a retry (what 503 invites) cannot succeed.
      throw toolError(
        'VALIDATION_ERROR',
        `This job names ${count} documents, more than the ingestion queue ever holds (INGEST_QUEUE_MAX ${this.deps.queueMax}); split it into smaller jobs (subfolders, include/exclude globs) or raise INGEST_QUEUE_MAX`,
      );
    }
    const waiting = this.queued() + this.reserved;
    if (waiting + count > this.deps.queueMax) {
      throw toolError(
        'OVERLOADED',
        `The ingestion queue is full: ${waiting} documents wait and this job adds ${count}, over INGEST_QUEUE_MAX (${this.deps.queueMax}); retry when jobs have finished`,
      );
    }
  }

  /**
   * Files the first part of a new job's folder walk may take, next to `explicit` items of its
   * own; OVERLOADED (or RATE_LIMITED) as checkRoom when not even one more document fits.
   */
  folderRoom(explicit: number, tenant?: string): number {
    this.checkRoom(explicit + 1, tenant);
    return Math.max(1, this.feedRoom(tenant, 0, explicit));
  }

  /**
   * Records and queues a job; OVERLOADED when its items do not fit INGEST_QUEUE_MAX. With `feed`
   * (the job names folders, the first part already taken into `items`) the rest of the walk
   * follows as the job's documents drain.
   */
  async submit(collection: string, items: NewItem[], options: JobOptions, feed?: FeedState): Promise<JobRecord> {
    if (this.closed) throw toolError('SHUTTING_DOWN', 'The server is stopping; no new ingestion jobs are taken');
    if (items.length === 0 && !feed) throw toolError('VALIDATION_ERROR', 'Nothing to ingest: give urls, paths or an upload');
    if (feed && !this.deps.feed) throw toolError('INTERNAL_ERROR', 'folder walks are not wired to this queue');
    this.checkRoom(items.filter((i) => !i.leftOut && !i.failed).length, options.tenant);
    const record = newJobRecord(collection, items, feed);
    const id = record.id;
    const opts = withContentTypes(options, items);
    const uploads = items.map((it, i) => [i, it.upload] as const).filter(([, u]) => u);
    const needsSpool = uploads.length > 0 || opts.force || opts.ocr || opts.allowedDirs || (opts.tenant !== undefined && opts.tenant !== DEFAULT_TENANT);
    if (needsSpool) {
      try {
        for (const [i, u] of uploads) await writeAtomic(path.join(this.spoolOf(id), String(i)), u!.bytes);
        await writeAtomic(path.join(this.spoolOf(id), 'options.json'), Buffer.from(JSON.stringify(opts)));
      } catch (err) {
        await this.removeSpool(id);
        throw toolError('STORAGE_UNAVAILABLE', `The job could not be written to DATA_DIR (${(err as NodeJS.ErrnoException).code ?? errorText(err)})`, err);
      }
    }
    try {
      this.deps.store.createJob(record);
    } catch (err) {
      await this.removeSpool(id);
      throw err;
    }
    const answer = structuredClone(record);
    this.enqueue(record, opts, record.items.filter((i) => !TERMINAL_STAGES.has(i.stage)).map((i) => i.index));
    return answer;
  }

  /**
   * Start-up: jobs a previous process left queued or running are resumed, or failed with a reason.
   * Synchronous (a few small reads), so every resumed job is live before the first call arrives.
   * Called again later (adopt: true) for jobs of processes that died while this one runs; only
   * the start-up sweeps the spool.
   */
  resume(collectionExists: (name: string) => boolean, opts: { adopt?: boolean } = {}): { resumed: number; failed: number } {
    let resumed = 0;
    let failed = 0;
    // Only jobs no live process runs: with --workers N another process may be running its own.
    for (const job of this.deps.store.claimOrphanJobs()) {
      // Claimed again because this process owns it: it runs here already (an adoption after start).
      if (this.live.has(job.id) || this.unsaved.has(job.id)) continue;
      const options = this.readOptions(job.id) ?? { force: false };
      if (!collectionExists(job.collection)) {
        this.endInterrupted(job, 'interrupted by a restart; the collection no longer exists');
        failed++;
        continue;
      }
      const pending: number[] = [];
      let lostUpload = false;
      for (const item of job.items) {
        if (TERMINAL_STAGES.has(item.stage)) continue;
        if (item.source_kind === 'upload' && !fsSync.existsSync(path.join(this.spoolOf(job.id), String(item.index)))) {
          item.stage = 'failed';
          item.error = { code: 'PROCESSING_ERROR', message: LOST_UPLOAD_REASON };
          item.finished_at = now();
          lostUpload = true;
          try {
            this.deps.onItemFailed?.(job, item, item.error);
          } catch {
            // recorded in the job either way
          }
          continue;
        }
        item.stage = 'queued';
        item.progress = emptyProgress();
        item.started_at = null;
        pending.push(item.index);
      }
      job.resumed++;
      if (lostUpload) job.reason = LOST_UPLOAD_REASON;
      job.counts = countsOf(job.items);
      this.deps.log?.info({ event: 'kb.job.resumed', job: job.id, pending: pending.length }, 'ingestion job resumed after a restart');
      resumed++;
      if (pending.length === 0 && !isWalking(job)) {
        this.finish(this.track(job, options));
        continue;
      }
      this.deps.store.saveJob(job);
      this.enqueue(job, options, pending);
    }
    if (!opts.adopt) void this.sweepSpool();
    return { resumed, failed };
  }

  cancel(id: string, reason = 'cancelled by request'): JobRecord {
    const live = this.live.get(id);
    if (!live) {
      const ended = this.unsaved.get(id) ?? this.deps.store.getJob(id);
      if (!ended) throw toolError('NOT_FOUND', `Job ${id} not found`);
      if (isEnded(ended)) throw toolError('CONFLICT', `Job ${id} already ended (${ended.status}); only queued or running jobs can be cancelled`);
      return this.cancelNotHere(ended, reason);
    }
    live.cancelRequested = true;
    live.record.reason = reason;
    // Its folders are walked no further.
    stopFeed(live.record);
    live.feeding?.abort(toolError('CONFLICT', `Job ${id} was cancelled`));
    for (const index of live.pending) {
      const item = live.record.items[index]!;
      item.stage = 'cancelled';
      item.finished_at = now();
    }
    live.pending = [];
    for (const ctrl of live.running.values()) ctrl.abort(toolError('CONFLICT', `Job ${id} was cancelled`));
    live.record.counts = countsOf(live.record.items);
    if (live.running.size === 0) this.finish(live);
    else this.save(live, true);
    return structuredClone(live.record);
  }

  subscribe(id: string, listener: (e: JobEvent) => void): () => void {
    const live = this.live.get(id);
    if (live) {
      live.listeners.add(listener);
      return () => void live.listeners.delete(listener);
    }
    const stored = this.unsaved.get(id) ?? this.deps.store.getJob(id);
    if (!stored) throw toolError('NOT_FOUND', `Job ${id} not found`);
    let active = true;
    queueMicrotask(() => {
      if (active) listener(this.jobEvent(stored));
    });
    return () => {
      active = false;
    };
  }

  async waitFor(id: string, ms: number, signal?: AbortSignal): Promise<JobRecord> {
    const live = this.live.get(id);
    if (!live) {
      const unsaved = this.unsaved.get(id);
      if (unsaved) return structuredClone(unsaved);
      const stored = this.deps.store.getJob(id);
      if (!stored) throw toolError('NOT_FOUND', `Job ${id} not found`);
      return stored;
    }
    if (ms <= 0 || signal?.aborted) return structuredClone(live.record);
    return new Promise<JobRecord>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        live.listeners.delete(onEvent);
        signal?.removeEventListener('abort', done);
        resolve(structuredClone(live.record));
      };
      const onEvent = (e: JobEvent) => {
        if (e.type === 'job') done();
      };
      const timer = setTimeout(done, Math.min(ms, 2 ** 31 - 1));
      live.listeners.add(onEvent);
      signal?.addEventListener('abort', done, { once: true });
    });
  }

  /** Stops taking work; running items are aborted and their jobs left as they are, to resume on the next start. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    // A last try; what still cannot be written is resumed (or failed) by the next start.
    this.retryUnsaved();
    for (const live of this.live.values()) {
      if (live.saveTimer) clearTimeout(live.saveTimer);
      live.feeding?.abort(toolError('SHUTTING_DOWN', 'The server is stopping'));
      for (const ctrl of live.running.values()) ctrl.abort(toolError('SHUTTING_DOWN', 'The server is stopping'));
    }
    if (this.active > 0) await new Promise<void>((resolve) => this.idle.add(resolve));
  }

  // ---- internals ----

  private spoolOf(id: string): string {
    return path.join(this.deps.spoolDir, id);
  }

  private track(record: JobRecord, options: JobOptions): LiveJob {
    const live: LiveJob = { record, options, pending: [], running: new Map(), listeners: new Set(), lastSaved: 0, saveTimer: null, cancelRequested: false, lastTurn: 0, feeding: null };
    this.live.set(record.id, live);
    return live;
  }

  private enqueue(record: JobRecord, options: JobOptions, indexes: number[]): void {
    const live = this.track(record, options);
    live.pending = indexes;
    this.notePeak();
    this.pump();
    this.feedAll();
  }

  private notePeak(): void {
    const q = this.queued();
    if (q > this.queuedPeak) this.queuedPeak = q;
  }

  /**
   * Files the next part of a walk may take: up to the job's window (folder-feed.ts) less what it
   * has waiting, within the room left in INGEST_QUEUE_MAX (and the key's share, with API keys).
   */
  private feedRoom(tenant: string | undefined, ownWaiting: number, extraWaiting: number): number {
    const queueMax = this.deps.queueMax;
    let room = Math.min(feedWindow(queueMax) - ownWaiting, queueMax - this.queued() - this.reserved - extraWaiting);
    const limits = this.deps.tenantLimits;
    if (limits) {
      const name = tenant ?? DEFAULT_TENANT;
      let waiting = extraWaiting;
      for (const j of this.live.values()) if ((j.options.tenant ?? DEFAULT_TENANT) === name) waiting += j.pending.length;
      room = Math.min(room, limits.queueMax - waiting);
    }
    return Math.max(0, room);
  }

  /** Every live job whose folders are still walked and whose waiting documents ran low takes its next part. */
  private feedAll(): void {
    for (const live of this.live.values()) this.maybeFeed(live);
  }

  private maybeFeed(live: LiveJob): void {
    if (this.closed || live.feeding || live.cancelRequested || !this.deps.feed) return;
    if (!wantsFeed(live.record, live.pending.length, this.deps.queueMax)) return;
    const max = this.feedRoom(live.options.tenant, live.pending.length, 0);
    if (max <= 0) return; // the queue is full: a document ending elsewhere calls again
    void this.feedOnce(live, max);
  }

  /** Takes one part of the job's folders and queues its files; the state is written with the items. */
  private async feedOnce(live: LiveJob, max: number): Promise<void> {
    const job = live.record;
    const ctrl = new AbortController();
    live.feeding = ctrl;
    this.reserved += max;
    let added: NewItem[];
    let state: FeedState | null = null;
    try {
      const batch = await this.deps.feed!(job.feed!, live.options, max, ctrl.signal);
      added = batch.items;
      state = batch.state;
    } catch (err) {
      added = ctrl.signal.aborted ? [] : [feedFailedItem(job, err)];
      if (!ctrl.signal.aborted) this.deps.log?.warn({ event: 'kb.job.walk_failed', job: job.id, err: errorText(err) }, 'a folder walk stopped; the job ends with what it found');
    } finally {
      this.reserved -= max;
      live.feeding = null;
    }
    // Cancelled, shut down or ended meanwhile: what was found is dropped (a restart walks it again).
    if (this.closed || live.cancelRequested || this.live.get(job.id) !== live) return;
    const start = job.items.length;
    job.items.push(...jobItemsOf(added, start));
    if (state) setFeed(job, state);
    else stopFeed(job);
    for (const item of job.items.slice(start)) if (item.stage === 'queued') live.pending.push(item.index);
    job.counts = countsOf(job.items);
    this.notePeak();
    // Written at once: the new items and where the walk stands, in one statement.
    this.save(live, true, true);
    if (live.pending.length === 0 && live.running.size === 0 && !isWalking(job)) {
      this.finish(live);
      return;
    }
    this.pump();
    this.maybeFeed(live);
  }

  /**
   * Starts items while slots are free. Fair between keys first, then between jobs: the next item
   * comes from the tenant (tenant-share.ts) with the fewest documents running, then the one whose
   * last turn is oldest; within it, from the job with the fewest running, then the oldest turn (a
   * new job goes first). So one key's thousand documents delay another key's one by at most one
   * document per slot.
   */
  private pump(): void {
    while (!this.closed && this.active < this.deps.concurrency) {
      const tenants = new Map<string, { running: number; lastTurn: number; next: LiveJob | null }>();
      for (const j of this.live.values()) {
        const name = j.options.tenant ?? DEFAULT_TENANT;
        let t = tenants.get(name);
        if (!t) tenants.set(name, (t = { running: 0, lastTurn: this.tenantTurns.get(name) ?? 0, next: null }));
        t.running += j.running.size;
        if (j.pending.length === 0) continue;
        const n = t.next;
        if (!n || j.running.size < n.running.size || (j.running.size === n.running.size && j.lastTurn < n.lastTurn)) t.next = j;
      }
      let pick: { name: string; running: number; lastTurn: number; next: LiveJob | null } | null = null;
      for (const [name, t] of tenants) {
        if (!t.next) continue;
        if (!pick || t.running < pick.running || (t.running === pick.running && t.lastTurn < pick.lastTurn)) pick = { name, ...t };
      }
      if (!pick) return;
      const next = pick.next!;
      next.lastTurn = ++this.turns;
      this.tenantTurns.set(pick.name, next.lastTurn);
      void this.runOne(next, next.pending.shift()!);
    }
    // Turns of tenants without live jobs are forgotten (they would start at 0, first, anyway).
    if (this.tenantTurns.size > 64) {
      const live = new Set([...this.live.values()].map((j) => j.options.tenant ?? DEFAULT_TENANT));
      for (const name of this.tenantTurns.keys()) if (!live.has(name)) this.tenantTurns.delete(name);
    }
  }

  private async runOne(live: LiveJob, index: number): Promise<void> {
    this.active++;
    const job = live.record;
    const item = job.items[index]!;
    const ctrl = new AbortController();
    live.running.set(index, ctrl);
    const timeoutMs = this.deps.documentTimeoutS * 1000;
    const timer = setTimeout(
      () => ctrl.abort(toolError('TIMEOUT', `The document took longer than INGEST_DOCUMENT_TIMEOUT (${this.deps.documentTimeoutS} s)`)),
      Math.min(timeoutMs, 2 ** 31 - 1),
    );
    if (job.status === 'queued') {
      job.status = 'running';
      job.started_at = now();
    }
    item.started_at = now();
    item.stage = 'downloading';
    this.save(live, true);
    this.emit(live, 'progress', item, `${item.source}: downloading`);
    try {
      let upload: Buffer | undefined;
      if (item.source_kind === 'upload') {
        upload = await fs.readFile(path.join(this.spoolOf(job.id), String(index))).catch(() => {
          throw toolError('PROCESSING_ERROR', LOST_UPLOAD_REASON);
        });
      }
      const result = await this.deps.runItem({
        job,
        item,
        options: live.options,
        ...(upload ? { upload } : {}),
        signal: ctrl.signal,
        progress: (stage, p, documentId) => {
          if (ctrl.signal.aborted) return;
          const changed = stage !== item.stage;
          item.stage = stage;
          if (documentId) item.document_id = documentId;
          Object.assign(item.progress, p);
          this.save(live, changed);
          this.emit(live, 'progress', item, `${item.source}: ${stage}`);
        },
      });
      item.stage = result.stage;
      item.document_id = result.documentId;
      item.note = result.note;
    } catch (err) {
      const cancelled = live.cancelRequested && ctrl.signal.aborted;
      if (cancelled) {
        item.stage = 'cancelled';
        this.deps.onItemCancelled?.(job, item);
      } else if (this.closed && ctrl.signal.aborted) {
        // Shutting down: left as it stands; the next start re-queues it.
        clearTimeout(timer);
        live.running.delete(index);
        this.active--;
        if (this.active === 0) for (const f of this.idle) f();
        return;
      } else {
        const e = isToolError(err) ? { code: err.code, message: err.message } : { code: 'PROCESSING_ERROR', message: errorText(err) };
        item.stage = 'failed';
        item.error = e;
        try {
          this.deps.onItemFailed?.(job, item, e);
        } catch (recordErr) {
          this.deps.log?.warn({ event: 'kb.item.record_failed', job: job.id, err: errorText(recordErr) }, 'could not record a failed document');
        }
      }
    } finally {
      clearTimeout(timer);
    }
    live.running.delete(index);
    item.finished_at = now();
    job.counts = countsOf(job.items);
    this.emit(live, 'item', item, `${item.source}: ${item.stage}${item.error ? ` (${item.error.code}: ${item.error.message})` : ''}`);
    if (live.pending.length === 0 && live.running.size === 0 && !isWalking(job) && !live.feeding) this.finish(live);
    else {
      this.save(live, true);
      // Cancelling asked by another process (it found this one alive, db.ts) is seen between documents.
      if (!live.cancelRequested && this.cancelAskedInStore(job.id)) this.cancel(job.id);
    }
    this.active--;
    if (this.active === 0) for (const f of this.idle) f();
    this.pump();
    // A document ended: room for the next part of a folder (this job's or another's).
    this.feedAll();
  }

  private finish(live: LiveJob): void {
    const job = live.record;
    if (live.saveTimer) clearTimeout(live.saveTimer);
    job.counts = countsOf(job.items);
    const c = job.counts;
    job.status = endStatus(job, live.cancelRequested);
    if (!job.reason) job.reason = storageReason(job);
    if (job.status === 'failed' && !job.reason) job.reason = c.total === 1 ? 'its document failed' : 'every document failed';
    job.finished_at = now();
    this.live.delete(job.id);
    this.saveEnd(job);
    const e = this.jobEvent(job);
    for (const l of live.listeners) safeCall(l, e);
  }

  /**
   * Writes an ended job; when the store fails, the job is kept in memory (reads answer it from
   * there, never the stale `running` row) and written again with backoff while the process lives.
   * The spool goes only once the end is written: until then a restart may still resume the job.
   */
  private saveEnd(job: JobRecord): void {
    try {
      this.deps.store.saveJob(job);
      void this.removeSpool(job.id);
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
      void this.removeSpool(id);
    }
    if (this.unsaved.size === 0) this.retryDelay = END_RETRY_FIRST_MS;
  }

  private cancelAskedInStore(id: string): boolean {
    try {
      return this.deps.store.jobCancelRequested(id);
    } catch {
      return false;
    }
  }

  /**
   * Cancels an unfinished job this runner does not run. Its owner gone (killed, its pid perhaps
   * reused since): claimed and ended cancelled here, its unfinished documents cancelled. Its
   * owner another live process: the request is stored in the row, which that process reads
   * between documents, and the job is answered as it stands.
   */
  private cancelNotHere(stored: JobRecord, reason: string): JobRecord {
    const store = this.deps.store;
    const claimed = store.claimJob ? store.claimJob(stored.id) : store.jobOwner?.(stored.id) === 'live' ? null : stored;
    if (!claimed) {
      const asked = store.updateJob(stored.id, (job, flags) => {
        if (isEnded(job)) return false;
        flags.cancelRequested = true;
        job.reason = reason;
      });
      if (!asked) throw toolError('NOT_FOUND', `Job ${stored.id} not found`);
      if (isEnded(asked)) throw toolError('CONFLICT', `Job ${stored.id} already ended (${asked.status}); only queued or running jobs can be cancelled`);
      return asked;
    }
    const job = claimed;
    stopFeed(job);
    for (const item of job.items) {
      if (TERMINAL_STAGES.has(item.stage)) continue;
      item.stage = 'cancelled';
      item.finished_at = now();
    }
    job.counts = countsOf(job.items);
    job.status = 'cancelled';
    job.reason = `${reason} (its process was gone)`;
    job.finished_at = now();
    this.deps.log?.info({ event: 'kb.job.cancelled_orphan', job: job.id }, 'cancelled a job whose process is gone');
    this.saveEnd(job);
    return structuredClone(job);
  }

  private endInterrupted(job: JobRecord, reason: string): void {
    stopFeed(job);
    for (const item of job.items) {
      if (TERMINAL_STAGES.has(item.stage)) continue;
      item.stage = 'failed';
      item.error = { code: 'PROCESSING_ERROR', message: reason };
      item.finished_at = now();
    }
    job.counts = countsOf(job.items);
    job.status = job.counts.failed === job.counts.total ? 'failed' : 'partial';
    job.reason = reason;
    job.finished_at = now();
    try {
      this.deps.store.saveJob(job);
    } catch {
      // its collection (and so its row) is gone
    }
    void this.removeSpool(job.id);
  }

  /**
   * Stage changes are written at once, progress-only updates at most once a second per job. A
   * job of more than SAVE_AT_ONCE_MAX_ITEMS documents writes stage changes at that pace too: each
   * write holds every item, so writing on each change would cost O(items²). What a crash can lose
   * is then up to a second of stages; on resume those documents run again and, their content
   * already committed, are skipped as unchanged.
   */
  private save(live: LiveJob, stageChange: boolean, now = false): void {
    const force = now || (stageChange && live.record.items.length <= SAVE_AT_ONCE_MAX_ITEMS);
    const write = () => {
      live.saveTimer = null;
      live.lastSaved = Date.now();
      try {
        this.deps.store.saveJob(live.record);
      } catch (err) {
        this.deps.log?.warn({ event: 'kb.job.save_failed', job: live.record.id, err: errorText(err) }, 'could not record job progress');
      }
    };
    if (force || Date.now() - live.lastSaved >= PROGRESS_SAVE_MS) {
      if (live.saveTimer) clearTimeout(live.saveTimer);
      write();
    } else if (!live.saveTimer) {
      live.saveTimer = setTimeout(write, PROGRESS_SAVE_MS - (Date.now() - live.lastSaved));
      live.saveTimer.unref();
    }
  }

  private emit(live: LiveJob, type: 'progress' | 'item', item: JobItem, message: string): void {
    if (live.listeners.size === 0) return;
    const e = itemEvent(live.record, type, item, message);
    for (const l of live.listeners) safeCall(l, e);
  }

  private jobEvent(job: JobRecord): JobEvent {
    return jobEndEvent(job);
  }

  private readOptions(id: string): JobOptions | null {
    try {
      return JSON.parse(fsSync.readFileSync(path.join(this.spoolOf(id), 'options.json'), 'utf8')) as JobOptions;
    } catch {
      return null;
    }
  }

  private async removeSpool(id: string): Promise<void> {
    await fs.rm(this.spoolOf(id), { recursive: true, force: true }).catch(() => undefined);
  }

  /** Spool folders of jobs that are not live (ended, or deleted with their collection). */
  private async sweepSpool(): Promise<void> {
    const names = await fs.readdir(this.deps.spoolDir).catch(() => [] as string[]);
    for (const name of names) {
      if (!this.live.has(name) && !this.unsaved.has(name)) await fs.rm(path.join(this.deps.spoolDir, name), { recursive: true, force: true }).catch(() => undefined);
    }
  }
}

/** The reason of a job some of whose documents failed because the storage did (a full disk), or null. */
function storageReason(job: JobRecord): string | null {
  const failed = job.items.filter((i) => i.stage === 'failed' && i.error?.code === 'STORAGE_UNAVAILABLE');
  if (failed.length === 0) return null;
  return `storage unavailable: ${failed.length} of ${job.counts.total} documents could not be saved (${failed[0]!.error!.message})`;
}

export function safeCall(l: (e: JobEvent) => void, e: JobEvent): void {
  try {
    l(e);
  } catch {
    // a listener's failure is its own
  }
}

/** temp file in the same folder, fsync, rename: a reader sees the whole file or none. */
export async function writeAtomic(file: string, data: Buffer): Promise<void> {
  await fs.mkdir(path.dirname(file), { recursive: true });
  const tmp = `${file}.p${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const fh = await fs.open(tmp, 'w');
  try {
    await fh.writeFile(data);
    await fh.sync();
  } finally {
    await fh.close();
  }
  await fs.rename(tmp, file);
}
