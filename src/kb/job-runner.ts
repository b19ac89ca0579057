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
 *
 * A document's run (executor, retries by error class) is document-executor.ts's, shared with the
 * Redis workers; a failure a retry may cure waits its backoff here, then runs again.
 */
import { checkTenantRoom, DEFAULT_TENANT, type TenantLimits } from './tenant-share.ts';
import { toolError } from '../errors.ts';
import { errorText } from '../util/error-text.ts';
import type { FeedState, JobEvent, JobItem, JobRecord, KbStoreApi, NewItem } from './types.ts';
import { feedWindow, isWalking, setFeed, stopFeed, wantsFeed, type FeedNext } from './folder-feed.ts';
import { cancelItems, countsOf, endItem, feedFailedItem, finishJob, isEnded, itemEndMessage, itemEvent, jobEndEvent, jobItemsOf, newJobRecord, requeueItem, safeCall, startItem, TERMINAL_STAGES } from './job-state.ts';
import { executeDocument, nextStep, PROGRESS_SAVE_MS, type DocumentExecutorDeps, type ItemResult, type ItemRun, type JobOptions } from './document-executor.ts';
import { hasSpooledUpload, readOptionsSync, removeSpool, sweepSpool, withContentTypes, writeSpool } from './job-spool.ts';
import { JobEndWriter } from './job-end-writer.ts';
import { pickFair } from './job-fair-pick.ts';
import { cancelNotHere, endInterrupted, resumeItems } from './job-orphans.ts';
import type { JobQueue, QueueStats } from './job-queue.ts';

// What other modules took from here before the state machine and the executor had files of their own.
export { countsOf, emptyProgress, endStatus, feedFailedItem, isEnded, itemEvent, jobEndEvent, jobItemsOf, LOST_UPLOAD_REASON, newJobId, newJobRecord, safeCall, TERMINAL_STAGES } from './job-state.ts';
export type { ItemResult, ItemRun, JobOptions } from './document-executor.ts';
export { withContentTypes } from './job-spool.ts';
export { END_RETRY_FIRST_MS, END_RETRY_MAX_MS, UNSAVED_ENDS_MAX } from './job-end-writer.ts';
// Defined beside the job types (folder-feed.ts makes items too, and imports no runner).
export type { NewItem } from './types.ts';

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
  /** Tries per document when a try fails for a reason a retry may cure (INGEST_ATTEMPTS); absent: 1. */
  attempts?: number;
  runItem(run: ItemRun): Promise<ItemResult>;
  /** A document that failed (recorded against it in the store by the caller). */
  onItemFailed?(job: Readonly<JobRecord>, item: Readonly<JobItem>, error: { code: string; message: string }): void;
  /** An item that was cancelled while running (the caller may drop a pending row it created). */
  onItemCancelled?(job: Readonly<JobRecord>, item: Readonly<JobItem>): void;
  /** Takes the next part of a job's folders (folder-feed.ts); without it, jobs cannot name folders. */
  feed?: FeedNext;
  log?: { warn(obj: object, msg?: string): void; info(obj: object, msg?: string): void };
}

const SAVE_AT_ONCE_MAX_ITEMS = 200;

interface LiveJob {
  record: JobRecord;
  options: JobOptions;
  tenant: string;
  pending: number[];
  running: Map<number, AbortController>;
  /** Items waiting out the backoff before another try, with its timer. */
  retrying: Map<number, NodeJS.Timeout>;
  /** Tries made so far, by item (a restart starts again at 0). */
  tries: Map<number, number>;
  listeners: Set<(e: JobEvent) => void>;
  lastSaved: number;
  saveTimer: NodeJS.Timeout | null;
  cancelRequested: boolean;
  lastTurn: number;
  /** A part of its folders being walked (folder-feed.ts), to abort on cancel or close. */
  feeding: AbortController | null;
}

/**
 * Longer than ~300 lines because scheduling (pump), a document's turn (runOne), a job's end,
 * folder feeding and saving share the live jobs' state; what needs none of it (the state
 * machine, the executor, the spool, unsaved ends, fair picking, orphans) has a file of its own.
 */
export class JobRunner implements JobQueue {
  private readonly live = new Map<string, LiveJob>();
  /** Counts item starts: a job's last turn, for round-robin. */
  private turns = 0;
  /** Each tenant's last turn, for round-robin between keys. */
  private readonly tenantTurns = new Map<string, number>();
  private active = 0;
  private closed = false;
  private readonly idle = new Set<() => void>();
  private readonly ends: JobEndWriter;
  private readonly executor: DocumentExecutorDeps;
  /** Room held by folder walks under way: their files count against INGEST_QUEUE_MAX before they arrive. */
  private reserved = 0;
  /** The most documents seen waiting at once since start (health reports it). */
  private queuedPeak = 0;
  private retried = 0;

  constructor(private readonly deps: JobRunnerDeps) {
    this.ends = new JobEndWriter({ store: deps.store, onSaved: (id) => void removeSpool(deps.spoolDir, id), ...(deps.log ? { log: deps.log } : {}) });
    this.executor = { spoolDir: deps.spoolDir, documentTimeoutS: deps.documentTimeoutS, runItem: (run) => deps.runItem(run) };
  }

  /** Ended jobs whose end could not be written yet (for health reports and tests). */
  unsavedEnds(): number {
    return this.ends.size;
  }

  /** Documents waiting (not yet started, or waiting to be tried again) across all jobs. */
  queued(): number {
    let n = 0;
    for (const j of this.live.values()) n += j.pending.length + j.retrying.size;
    return n;
  }

  running(): number {
    return this.active;
  }

  stats(): QueueStats & { documents_queued_peak: number; folders_walking: number; job_ends_unsaved: number; retried: number } {
    let walking = 0;
    for (const j of this.live.values()) if (isWalking(j.record)) walking++;
    return {
      queue: 'in-process',
      jobs_active: this.live.size,
      documents_queued: this.queued(),
      documents_queued_peak: this.queuedPeak,
      documents_running: this.active,
      queue_max: this.deps.queueMax,
      concurrency: this.deps.concurrency,
      folders_walking: walking,
      job_ends_unsaved: this.ends.size,
      retried: this.retried,
    };
  }

  /** The live record of a job that has not ended, or of one whose end is not saved yet (null otherwise: read the store). */
  liveJob(id: string): JobRecord | null {
    return this.live.get(id)?.record ?? this.ends.get(id) ?? null;
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
        if (j.tenant !== tenant) continue;
        load.jobs++;
        load.waiting += j.pending.length + j.retrying.size;
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
    const hasUpload = items.some((it) => it.upload);
    // Without uploads or options a resume needs, nothing is written (the common case stays off the disk).
    const needsSpool = hasUpload || opts.force || opts.ocr || opts.allowedDirs || (opts.tenant !== undefined && opts.tenant !== DEFAULT_TENANT);
    if (needsSpool) await writeSpool(this.deps.spoolDir, id, items, opts);
    try {
      this.deps.store.createJob(record);
    } catch (err) {
      await removeSpool(this.deps.spoolDir, id);
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
    const spool = this.deps.spoolDir;
    // Only jobs no live process runs: with --workers N another process may be running its own.
    for (const job of this.deps.store.claimOrphanJobs()) {
      // Claimed again because this process owns it: it runs here already (an adoption after start).
      if (this.live.has(job.id) || this.ends.has(job.id)) continue;
      const options = readOptionsSync(spool, job.id) ?? { force: false };
      if (!collectionExists(job.collection)) {
        endInterrupted(this.deps.store, job, 'interrupted by a restart; the collection no longer exists');
        void removeSpool(spool, job.id);
        failed++;
        continue;
      }
      const pending = resumeItems(
        job,
        (index) => hasSpooledUpload(spool, job.id, index),
        (item) => this.reportFailed(job, item),
      );
      this.deps.log?.info({ event: 'kb.job.resumed', job: job.id, pending: pending.length }, 'ingestion job resumed after a restart');
      resumed++;
      if (pending.length === 0 && !isWalking(job)) {
        this.finish(this.track(job, options));
        continue;
      }
      this.deps.store.saveJob(job);
      this.enqueue(job, options, pending);
    }
    if (!opts.adopt) void sweepSpool(spool, (id) => this.live.has(id) || this.ends.has(id));
    return { resumed, failed };
  }

  cancel(id: string, reason = 'cancelled by request'): JobRecord {
    const live = this.live.get(id);
    if (!live) {
      const ended = this.ends.get(id) ?? this.deps.store.getJob(id);
      if (!ended) throw toolError('NOT_FOUND', `Job ${id} not found`);
      if (isEnded(ended)) throw toolError('CONFLICT', `Job ${id} already ended (${ended.status}); only queued or running jobs can be cancelled`);
      return cancelNotHere(this.deps.store, ended, reason, (job) => this.ends.save(job), this.deps.log);
    }
    live.cancelRequested = true;
    live.record.reason = reason;
    // Its folders are walked no further.
    stopFeed(live.record);
    live.feeding?.abort(toolError('CONFLICT', `Job ${id} was cancelled`));
    // Waiting and backing-off documents are cancelled now, running ones when they stop.
    cancelItems(live.record, 'queued');
    live.pending = [];
    for (const timer of live.retrying.values()) clearTimeout(timer);
    live.retrying.clear();
    for (const ctrl of live.running.values()) ctrl.abort(toolError('CONFLICT', `Job ${id} was cancelled`));
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
    const stored = this.ends.get(id) ?? this.deps.store.getJob(id);
    if (!stored) throw toolError('NOT_FOUND', `Job ${id} not found`);
    let active = true;
    queueMicrotask(() => {
      if (active) listener(jobEndEvent(stored));
    });
    return () => {
      active = false;
    };
  }

  async waitFor(id: string, ms: number, signal?: AbortSignal): Promise<JobRecord> {
    const live = this.live.get(id);
    if (!live) {
      const unsaved = this.ends.get(id);
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
    this.ends.close();
    for (const live of this.live.values()) {
      if (live.saveTimer) clearTimeout(live.saveTimer);
      // Documents waiting for another try stay queued in the store: the next start runs them.
      for (const timer of live.retrying.values()) clearTimeout(timer);
      live.feeding?.abort(toolError('SHUTTING_DOWN', 'The server is stopping'));
      for (const ctrl of live.running.values()) ctrl.abort(toolError('SHUTTING_DOWN', 'The server is stopping'));
    }
    if (this.active > 0) await new Promise<void>((resolve) => this.idle.add(resolve));
  }

  // ---- internals ----

  private track(record: JobRecord, options: JobOptions): LiveJob {
    const live: LiveJob = {
      record,
      options,
      tenant: options.tenant ?? DEFAULT_TENANT,
      pending: [],
      running: new Map(),
      retrying: new Map(),
      tries: new Map(),
      listeners: new Set(),
      lastSaved: 0,
      saveTimer: null,
      cancelRequested: false,
      lastTurn: 0,
      feeding: null,
    };
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
      for (const j of this.live.values()) if (j.tenant === name) waiting += j.pending.length + j.retrying.size;
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
    if (this.closed || this.live.get(job.id) !== live) return;
    if (live.cancelRequested) {
      // Cancelled while this part was walked: a document that ended meanwhile saw the walk still in
      // flight and left the end to it; with nothing running now, the job ends here.
      if (this.drained(live)) this.finish(live);
      return;
    }
    const start = job.items.length;
    job.items.push(...jobItemsOf(added, start));
    if (state) setFeed(job, state);
    else stopFeed(job);
    for (const item of job.items.slice(start)) if (item.stage === 'queued') live.pending.push(item.index);
    job.counts = countsOf(job.items);
    this.notePeak();
    // Written at once: the new items and where the walk stands, in one statement.
    this.save(live, true, true);
    if (this.drained(live)) {
      this.finish(live);
      return;
    }
    this.pump();
    this.maybeFeed(live);
  }

  /** Nothing waits, runs, backs off or is walked: the job may end. */
  private drained(live: LiveJob): boolean {
    return live.pending.length === 0 && live.running.size === 0 && live.retrying.size === 0 && !live.feeding && !isWalking(live.record);
  }

  /** Starts items while slots are free, fair between keys and jobs (job-fair-pick.ts). */
  private pump(): void {
    const view = () =>
      [...this.live.values()].map((j) => ({ live: j, tenant: j.tenant, running: j.running.size, waiting: j.pending.length, lastTurn: j.lastTurn }));
    while (!this.closed && this.active < this.deps.concurrency) {
      const pick = pickFair(view(), this.tenantTurns);
      if (!pick) break;
      const next = pick.job.live;
      next.lastTurn = ++this.turns;
      this.tenantTurns.set(pick.tenant, next.lastTurn);
      void this.runOne(next, next.pending.shift()!);
    }
    // Turns of tenants without live jobs are forgotten (they would start at 0, first, anyway).
    if (this.tenantTurns.size > 64) {
      const live = new Set([...this.live.values()].map((j) => j.tenant));
      for (const name of this.tenantTurns.keys()) if (!live.has(name)) this.tenantTurns.delete(name);
    }
  }

  private async runOne(live: LiveJob, index: number): Promise<void> {
    this.active++;
    const job = live.record;
    const item = job.items[index]!;
    const ctrl = new AbortController();
    live.running.set(index, ctrl);
    const tries = (live.tries.get(index) ?? 0) + 1;
    live.tries.set(index, tries);
    startItem(job, item);
    this.save(live, true);
    this.emit(live, 'progress', item, `${item.source}: downloading`);
    const outcome = await executeDocument(this.executor, {
      job,
      item,
      options: live.options,
      ctrl,
      onProgress: (changed) => {
        this.save(live, changed);
        this.emit(live, 'progress', item, `${item.source}: ${item.stage}`);
      },
    });
    live.running.delete(index);
    const step = nextStep(outcome, item, { cancelled: () => live.cancelRequested, stopping: this.closed, tries, attempts: this.deps.attempts ?? 1 });
    if (step.step === 'stopped') {
      // Shutting down: left as it stands; the next start re-queues it.
      this.slotFreed();
      return;
    }
    if (step.step === 'retry') {
      this.retryLater(live, item, step.delayMs, step.note, step.code);
      this.slotFreed();
      this.pump();
      return;
    }
    endItem(item, step.end);
    if (step.cancelled) this.deps.onItemCancelled?.(job, item);
    else if (item.stage === 'failed') this.reportFailed(job, item);
    job.counts = countsOf(job.items);
    this.emit(live, 'item', item, itemEndMessage(item));
    if (this.drained(live)) this.finish(live);
    else {
      this.save(live, true);
      // Cancelling asked by another process (it found this one alive, db.ts) is seen between documents.
      if (!live.cancelRequested && this.cancelAskedInStore(job.id)) this.cancel(job.id);
    }
    this.slotFreed();
    this.pump();
    // A document ended: room for the next part of a folder (this job's or another's).
    this.feedAll();
  }

  /** Back to the queue after the backoff; until then it counts as waiting and its job does not end. */
  private retryLater(live: LiveJob, item: JobItem, delayMs: number, note: string, code: string): void {
    this.retried++;
    requeueItem(item, note);
    this.save(live, true);
    this.emit(live, 'progress', item, `${item.source}: retrying after ${code}`);
    const timer = setTimeout(() => {
      live.retrying.delete(item.index);
      if (this.closed || live.cancelRequested || this.live.get(live.record.id) !== live) return;
      // First in line: it waited its turn already.
      live.pending.unshift(item.index);
      this.pump();
    }, delayMs);
    live.retrying.set(item.index, timer);
  }

  private slotFreed(): void {
    this.active--;
    if (this.active === 0) for (const f of this.idle) f();
  }

  private reportFailed(job: JobRecord, item: JobItem): void {
    try {
      if (item.error) this.deps.onItemFailed?.(job, item, item.error);
    } catch (recordErr) {
      this.deps.log?.warn({ event: 'kb.item.record_failed', job: job.id, err: errorText(recordErr) }, 'could not record a failed document');
    }
  }

  private finish(live: LiveJob): void {
    const job = live.record;
    if (live.saveTimer) clearTimeout(live.saveTimer);
    finishJob(job, live.cancelRequested);
    this.live.delete(job.id);
    this.ends.save(job);
    const e = jobEndEvent(job);
    for (const l of live.listeners) safeCall(l, e);
  }

  private cancelAskedInStore(id: string): boolean {
    try {
      return this.deps.store.jobCancelRequested(id);
    } catch {
      return false;
    }
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
}

