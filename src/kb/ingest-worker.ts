/**
 * The worker role with REDIS_URL: takes documents from the BullMQ queue (INGEST_CONCURRENCY at
 * a time per process) and runs them through the same ingestion as the in-process runner.
 *
 * Every change to a job's record is one read-modify-write transaction in SQLite (store.updateJob),
 * so two workers finishing documents of one job at once serialize on SQLite's write lock and the
 * last one to finish ends the job. A document's content is committed in one transaction by
 * ingestDocument, so a worker killed at any moment leaves the old or the new version.
 *
 * - Retries: a transient failure (download, an overloaded or stopping server, storage, an internal
 *   error) is retried up to INGEST_ATTEMPTS times with exponential backoff; a failure the document
 *   itself causes (bad format, too large, refused URL, broken file) fails it at once.
 * - A worker that dies mid-document: its lock lapses after INGEST_STALLED_SECONDS, another worker
 *   takes the document again (the item notes it, the job's `resumed` counts it).
 * - Stopping (SIGTERM): running documents are aborted and put back to run again shortly, without
 *   spending one of their tries.
 * - A reconciler (at start and every INGEST_STALLED_SECONDS) repairs what no event covers: a job
 *   recorded whose documents never reached Redis (its API died in between), or a document that
 *   BullMQ gave up on (stalled too often) while its record still says it runs.
 * - Folders (folder-feed.ts): when a document of a job whose folders are still walked ends and
 *   the job has few documents waiting, this worker takes the next part of the walk, one process
 *   at a time (a lease in SQLite), as far as the queue in Redis has room; the part's items and
 *   where the walk stands are written in one transaction that checks no other part came first,
 *   then queued. The reconciler does the same for walking jobs nobody fed (their feeder died).
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import type { DelayedError, Job as BullJob, Queue, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { isToolError, toolError } from '../errors.ts';
import type { Bus } from '../redis/bus.ts';
import { errorText } from '../util/error-text.ts';
import { randomBytes } from 'node:crypto';
import { emptyProgress, END_RETRY_FIRST_MS, END_RETRY_MAX_MS, feedFailedItem, isEnded, itemEvent, jobEndEvent, jobItemsOf, LOST_UPLOAD_REASON, TERMINAL_STAGES, type ItemResult, type ItemRun, type JobOptions, type NewItem } from './job-runner.ts';
import { feedWindow, isWalking, setFeed, stopFeed, wantsFeed, type FeedBatch, type FeedNext } from './folder-feed.ts';

/** Document ends kept for another write at most (a full disk under a flood of documents). */
const UNSAVED_ENDS_MAX = 1_024;
import { endIfDone, INGEST_QUEUE_NAME, itemJobOptions, type IngestJobData } from './redis-job-queue.ts';
import { spoolOf } from './job-spool.ts';
import type { ItemProgress, ItemStage, JobItem, JobRecord, KbStoreApi } from './types.ts';

// One saving pace and one error classing for both queues (document-executor.ts).
import { isTransient, PROGRESS_EVENT_MS, PROGRESS_SAVE_MS } from './document-executor.ts';
/** A recorded job this young may still be on its way into Redis: the reconciler leaves it alone. */
const RECONCILE_GRACE_MS = 15_000;
const RECONCILE_MAX_ITEMS = 2_000;
/** One process walks a part of some job's folders at a time: the lease's key and how long it lasts (a part's walk budget is 60 s). */
const FEED_LEASE = 'kb:folder-feed';
const FEED_LEASE_MS = 120_000;

export interface IngestWorkerDeps {
  store: KbStoreApi;
  bus: Bus;
  /** A client made with maxRetriesPerRequest: null (BullMQ duplicates it for its blocking reads). */
  connection: Redis;
  /** BullMQ key prefix (REDIS_KEY_PREFIX + 'bull'). */
  prefix: string;
  queue: Queue<IngestJobData>;
  spoolDir: string;
  concurrency: number;
  attempts: number;
  stalledSeconds: number;
  documentTimeoutS: number;
  runItem(run: ItemRun): Promise<ItemResult>;
  onItemFailed?(job: Readonly<JobRecord>, item: Readonly<JobItem>, error: { code: string; message: string }): void;
  onItemCancelled?(job: Readonly<JobRecord>, item: Readonly<JobItem>): void;
  /** INGEST_QUEUE_MAX: folder walks add documents only while the queue has room. */
  queueMax?: number;
  /** Takes the next part of a job's folders (folder-feed.ts). */
  feed?: FeedNext;
  log?: { warn(obj: object, msg?: string): void; info(obj: object, msg?: string): void };
}

interface Running {
  ctrl: AbortController;
  jobId: string;
}

const now = () => new Date().toISOString();

export class IngestWorker {
  private worker: Worker<IngestJobData> | null = null;
  /** BullMQ's "moved back to delayed" signal, from the module loaded in start() (never loaded without REDIS_URL). */
  private DelayedErrorClass: typeof DelayedError | null = null;
  private readonly running = new Map<string, Running>();
  private reconcileTimer: NodeJS.Timeout | null = null;
  private reconciling: Promise<void> | null = null;
  private closing = false;
  private readonly offBus: () => void;
  private processed = 0;
  private retried = 0;
  /** Folder walks under way here, by job (aborted on cancel and close). */
  private readonly feeding = new Map<string, AbortController>();
  /** Jobs that wanted a part while another process held the lease: tried again when this one's part ends. */
  private readonly feedLater = new Map<string, JobRecord>();
  private readonly feedOwner = `feed-${process.pid}-${randomBytes(4).toString('hex')}`;

  constructor(private readonly deps: IngestWorkerDeps) {
    this.offBus = deps.bus.on('kb:cancel', (m) => {
      if (typeof m.job_id !== 'string') return;
      for (const r of this.running.values()) {
        if (r.jobId === m.job_id) r.ctrl.abort(toolError('CONFLICT', `Job ${m.job_id} was cancelled`));
      }
      this.feeding.get(m.job_id)?.abort(toolError('CONFLICT', `Job ${m.job_id} was cancelled`));
    });
  }

  async start(): Promise<void> {
    const { Worker, DelayedError } = await import('bullmq');
    this.DelayedErrorClass = DelayedError;
    const lockMs = this.deps.stalledSeconds * 1000;
    this.worker = new Worker<IngestJobData>(INGEST_QUEUE_NAME, (job, token) => this.process(job, token), {
      connection: this.deps.connection,
      prefix: this.deps.prefix,
      concurrency: this.deps.concurrency,
      lockDuration: lockMs,
      stalledInterval: Math.max(1_000, Math.round(lockMs / 2)),
      // A document that kills its worker this many times fails (the reconciler records why).
      maxStalledCount: this.deps.attempts,
      autorun: true,
    });
    this.worker.on('error', (err) => this.deps.log?.warn({ event: 'kb.worker.error', err: errorText(err) }, 'ingestion worker error'));
    this.worker.on('failed', (job, err) => {
      if (!job) return;
      // The last try failed, or BullMQ gave up on a stalled document: record it if nothing did.
      const final = job.attemptsMade >= (job.opts.attempts ?? 1) || /stalled/i.test(err?.message ?? '');
      if (final) this.failIfRunning(job.data.job, job.data.index, { code: 'PROCESSING_ERROR', message: err?.message ?? 'the document failed in the queue' });
    });
    await this.worker.waitUntilReady();
    this.reconcileTimer = setInterval(() => void this.reconcile(), Math.max(5_000, this.deps.stalledSeconds * 1000));
    this.reconcileTimer.unref();
    void this.reconcile();
  }

  stats(): Record<string, unknown> {
    return { role: 'worker', running: this.running.size, concurrency: this.deps.concurrency, processed: this.processed, retried: this.retried };
  }

  /** Aborts running documents (they go back to the queue), then closes the BullMQ worker. */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    if (this.endRetry) clearTimeout(this.endRetry);
    this.endRetry = null;
    // One last try for ends not written yet; what still fails is failed by a reconciler later.
    for (const e of [...this.unsavedEnds.values()]) {
      this.unsavedEnds.delete(`${e.jobId}:${e.index}`);
      this.end(e.jobId, e.index, e.r, e.cancelled);
    }
    this.offBus();
    for (const ctrl of this.feeding.values()) ctrl.abort(toolError('SHUTTING_DOWN', 'The server is stopping'));
    if (this.reconcileTimer) clearInterval(this.reconcileTimer);
    for (const r of this.running.values()) r.ctrl.abort(toolError('SHUTTING_DOWN', 'The server is stopping'));
    await this.reconciling?.catch(() => undefined);
    await this.worker?.close().catch(() => undefined);
  }

  // ---- one document ----

  private async process(bj: BullJob<IngestJobData>, token?: string): Promise<void> {
    const { job: jobId, index } = bj.data;
    const key = `${jobId}/${index}`;
    const ctrl = new AbortController();
    this.running.set(key, { ctrl, jobId });
    try {
      await this.runDocument(bj, token, ctrl);
    } finally {
      this.running.delete(key);
    }
  }

  private async runDocument(bj: BullJob<IngestJobData>, token: string | undefined, ctrl: AbortController): Promise<void> {
    const { job: jobId, index } = bj.data;
    const store = this.deps.store;
    // Decides, under the write lock, whether this document runs: not when it ended or was cancelled.
    let decision: 'run' | 'skip' | 'cancelled' = 'skip';
    let endedByCancel = false;
    const started = store.updateJob(jobId, (job, flags) => {
      const item = job.items[index];
      if (!item || TERMINAL_STAGES.has(item.stage)) return false;
      if (flags.cancelRequested) {
        item.stage = 'cancelled';
        item.finished_at = now();
        endedByCancel = endIfDone(job, true);
        decision = 'cancelled';
        return;
      }
      if (item.stage !== 'queued') {
        // It was running when its worker stopped (killed, or its lock lapsed): taken again here.
        item.note = `taken again after its worker stopped during "${item.stage}"`;
        job.resumed++;
      }
      item.stage = 'downloading';
      item.started_at = now();
      item.progress = emptyProgress();
      item.error = null;
      if (job.status === 'queued') {
        job.status = 'running';
        job.started_at = now();
      }
      decision = 'run';
    });
    if (!started || decision === 'skip') return;
    if (decision === 'cancelled') {
      this.announceEnd(started, index, endedByCancel);
      return;
    }
    const item = started.items[index]!;
    this.publish(started, 'progress', item, `${item.source}: downloading`);

    const timer = setTimeout(
      () => ctrl.abort(toolError('TIMEOUT', `The document took longer than INGEST_DOCUMENT_TIMEOUT (${this.deps.documentTimeoutS} s)`)),
      Math.min(this.deps.documentTimeoutS * 1000, 2 ** 31 - 1),
    );
    let lastSave = Date.now();
    let lastEvent = 0;
    try {
      const options = await this.readOptions(jobId);
      let upload: Buffer | undefined;
      if (item.source_kind === 'upload') {
        upload = await fs.readFile(path.join(spoolOf(this.deps.spoolDir, jobId), String(index))).catch(() => {
          throw toolError('PROCESSING_ERROR', LOST_UPLOAD_REASON);
        });
      }
      const result = await this.deps.runItem({
        job: started,
        item,
        options,
        ...(upload ? { upload } : {}),
        signal: ctrl.signal,
        progress: (stage: ItemStage, p: Partial<ItemProgress>, documentId: string | null) => {
          if (ctrl.signal.aborted) return;
          const changed = stage !== item.stage;
          item.stage = stage;
          if (documentId) item.document_id = documentId;
          Object.assign(item.progress, p);
          const t = Date.now();
          if (changed || t - lastSave >= PROGRESS_SAVE_MS) {
            lastSave = t;
            this.saveItem(jobId, item, ctrl);
          }
          if (changed || t - lastEvent >= PROGRESS_EVENT_MS) {
            lastEvent = t;
            this.publish(started, 'progress', item, `${item.source}: ${stage}`);
          }
        },
      });
      clearTimeout(timer);
      this.processed++;
      this.end(jobId, index, { stage: result.stage, document_id: result.documentId, note: result.note, error: null });
    } catch (err) {
      clearTimeout(timer);
      await this.onError(bj, token, ctrl, item, err);
    }
  }

  private async onError(bj: BullJob<IngestJobData>, token: string | undefined, ctrl: AbortController, item: JobItem, err: unknown): Promise<void> {
    const { job: jobId, index } = bj.data;
    const store = this.deps.store;
    if (ctrl.signal.aborted && this.closing) {
      // Stopping: back to the queue in a second, the try not spent (another worker, or this one restarted).
      store.updateJob(jobId, (job) => {
        const it = job.items[index];
        if (!it || TERMINAL_STAGES.has(it.stage)) return false;
        it.stage = 'queued';
        it.progress = emptyProgress();
        it.note = 'put back in the queue: its worker was stopping';
      });
      if (token) await bj.moveToDelayed(Date.now() + 1_000, token);
      throw new this.DelayedErrorClass!();
    }
    if (ctrl.signal.aborted && (isToolError(ctrl.signal.reason) && ctrl.signal.reason.code === 'CONFLICT' || safeCancelRequested(store, jobId))) {
      this.end(jobId, index, { stage: 'cancelled', document_id: item.document_id, note: null, error: null }, true);
      return;
    }
    const e = isToolError(err) ? { code: err.code, message: err.message } : { code: 'PROCESSING_ERROR' as const, message: errorText(err) };
    // Classed as in process: an outage, a 5xx or a crash is worth another try, the document's own failure is not.
    const transient = isTransient(err);
    const attempt = bj.attemptsMade + 1;
    const attempts = bj.opts.attempts ?? 1;
    if (transient && attempt < attempts) {
      this.retried++;
      const job = store.updateJob(jobId, (j) => {
        const it = j.items[index];
        if (!it || TERMINAL_STAGES.has(it.stage)) return false;
        it.stage = 'queued';
        it.progress = emptyProgress();
        it.note = `try ${attempt} of ${attempts} failed (${e.code}: ${e.message}); retrying`;
      });
      if (job) this.publish(job, 'progress', job.items[index]!, `${item.source}: retrying after ${e.code}`);
      throw err instanceof Error ? err : new Error(e.message);
    }
    this.end(jobId, index, { stage: 'failed', document_id: item.document_id, note: attempt > 1 ? `failed after ${attempt} tries` : item.note, error: e });
  }

  /** Ends not written yet, by `job:index` (bounded: the reconciler fails what falls out). */
  private readonly unsavedEnds = new Map<string, { jobId: string; index: number; r: Pick<JobItem, 'stage' | 'document_id' | 'note' | 'error'>; cancelled: boolean }>();
  private endRetry: NodeJS.Timeout | null = null;
  private endRetryDelay = END_RETRY_FIRST_MS;

  private keepEnd(jobId: string, index: number, r: Pick<JobItem, 'stage' | 'document_id' | 'note' | 'error'>, cancelled: boolean): void {
    const key = `${jobId}:${index}`;
    this.unsavedEnds.delete(key);
    this.unsavedEnds.set(key, { jobId, index, r, cancelled });
    while (this.unsavedEnds.size > UNSAVED_ENDS_MAX) this.unsavedEnds.delete(this.unsavedEnds.keys().next().value!);
    if (this.endRetry || this.closing) return;
    this.endRetry = setTimeout(() => {
      this.endRetry = null;
      const pending = [...this.unsavedEnds.values()];
      this.unsavedEnds.clear();
      // Each failure puts its end back (keepEnd), which schedules the next try.
      for (const e of pending) this.end(e.jobId, e.index, e.r, e.cancelled);
      this.endRetryDelay = this.unsavedEnds.size > 0 ? Math.min(END_RETRY_MAX_MS, this.endRetryDelay * 2) : END_RETRY_FIRST_MS;
    }, this.endRetryDelay);
    this.endRetry.unref();
  }

  /** Records the end of one document; the process that ends the last one ends the job. */
  private end(jobId: string, index: number, r: Pick<JobItem, 'stage' | 'document_id' | 'note' | 'error'>, cancelled = false): void {
    let ended = false;
    let recorded: JobItem | null = null;
    let job: JobRecord | null = null;
    try {
      job = this.deps.store.updateJob(jobId, (j, flags) => {
        const it = j.items[index];
        if (!it || TERMINAL_STAGES.has(it.stage)) return false;
        it.stage = r.stage;
        it.document_id = r.document_id;
        // A note from before (taken again after a worker died, retried) stays beside the result's.
        it.note = it.note && r.note && it.note !== r.note ? `${it.note}; ${r.note}` : (r.note ?? it.note);
        it.error = r.error;
        it.finished_at = now();
        recorded = it;
        ended = endIfDone(j, flags.cancelRequested);
      });
    } catch (err) {
      // The document's end is kept and written again with backoff (full disk, locked file), so
      // the job converges as soon as storage allows instead of staying `running`.
      this.deps.log?.warn({ event: 'kb.job.save_failed', job: jobId, err: errorText(err) }, 'could not record the end of a document; retrying');
      this.keepEnd(jobId, index, r, cancelled);
      return;
    }
    if (!job || !recorded) return;
    const item = recorded as JobItem;
    try {
      if (item.stage === 'failed' && item.error) this.deps.onItemFailed?.(job, item, item.error);
      if (cancelled) this.deps.onItemCancelled?.(job, item);
    } catch (err) {
      this.deps.log?.warn({ event: 'kb.item.record_failed', job: jobId, err: errorText(err) }, 'could not record a failed document');
    }
    this.announceEnd(job, index, ended);
  }

  private announceEnd(job: JobRecord, index: number, ended: boolean): void {
    const item = job.items[index]!;
    this.publish(job, 'item', item, `${item.source}: ${item.stage}${item.error ? ` (${item.error.code}: ${item.error.message})` : ''}`);
    if (ended) this.announceJobEnd(job);
    else this.maybeFeed(job);
  }

  private announceJobEnd(job: JobRecord): void {
    this.deps.bus.publish('kb:job', { job_id: job.id, event: jobEndEvent(job) });
    void fs.rm(spoolOf(this.deps.spoolDir, job.id), { recursive: true, force: true }).catch(() => undefined);
  }

  // ---- folder walks (folder-feed.ts) ----

  /** Takes the next part of the job's folders when they are still walked and few of its documents wait. */
  private maybeFeed(job: JobRecord): void {
    const queueMax = this.deps.queueMax;
    if (this.closing || !this.deps.feed || !queueMax || this.feeding.has(job.id) || !isWalking(job)) return;
    if (!wantsFeed(job, job.items.filter((i) => i.stage === 'queued').length, queueMax)) return;
    const ctrl = new AbortController();
    this.feeding.set(job.id, ctrl);
    void this.feedOnce(job.id, ctrl)
      .catch((err) => this.deps.log?.warn({ event: 'kb.job.feed_failed', job: job.id, err: errorText(err) }, 'the next part of a folder could not be queued; tried again later'))
      .finally(() => {
        this.feeding.delete(job.id);
        // Parts refused while this one held the lease: their turn now.
        const later = [...this.feedLater.values()];
        this.feedLater.clear();
        for (const j of later) this.maybeFeed(j);
      });
  }

  private async feedOnce(jobId: string, ctrl: AbortController): Promise<void> {
    const store = this.deps.store;
    const queueMax = this.deps.queueMax!;
    if (!store.acquireLease(FEED_LEASE, this.feedOwner, FEED_LEASE_MS)) {
      const job = store.getJob(jobId);
      if (job) this.feedLater.set(jobId, job);
      return;
    }
    try {
      const job = store.getJob(jobId);
      if (!job || isEnded(job) || !isWalking(job) || store.jobCancelRequested(jobId)) return;
      const waiting = job.items.filter((i) => i.stage === 'queued').length;
      if (!wantsFeed(job, waiting, queueMax)) return;
      const c = await this.deps.queue.getJobCounts('wait', 'prioritized', 'delayed', 'paused');
      const queued = (c.wait ?? 0) + (c.prioritized ?? 0) + (c.delayed ?? 0) + (c.paused ?? 0);
      const max = Math.min(feedWindow(queueMax) - waiting, queueMax - queued);
      if (max <= 0) return; // the queue is full: the next document that ends calls again
      const options = await this.readOptions(jobId);
      let batch: FeedBatch | null = null;
      let failed: NewItem | null = null;
      try {
        batch = await this.deps.feed!(job.feed!, options, max, ctrl.signal);
      } catch (err) {
        if (ctrl.signal.aborted) return;
        failed = feedFailedItem(job, err);
      }
      const seq = job.feed!.seq;
      let ended = false;
      let added: JobItem[] = [];
      const saved = store.updateJob(jobId, (j, flags) => {
        // Cancelled, ended, or another part written first: this one is dropped.
        if (flags.cancelRequested || isEnded(j) || !isWalking(j) || j.feed!.seq !== seq) return false;
        const start = j.items.length;
        j.items.push(...jobItemsOf(batch ? batch.items : [failed!], start));
        if (batch) setFeed(j, batch.state);
        else stopFeed(j);
        added = j.items.slice(start);
        ended = endIfDone(j, flags.cancelRequested);
      });
      if (!saved || added.length === 0) return;
      const toQueue = added.filter((i) => i.stage === 'queued');
      // A failure here is repaired by the reconciler, which queues recorded documents missing from Redis.
      if (toQueue.length > 0) {
        await this.deps.queue.addBulk(
          toQueue.map((it) => ({ name: 'ingest', data: { job: jobId, index: it.index, ...(options.tenant ? { tenant: options.tenant } : {}) }, opts: itemJobOptions(jobId, it.index, this.deps.attempts) })),
        );
      }
      if (ended) this.announceJobEnd(saved);
    } finally {
      store.releaseLease(FEED_LEASE, this.feedOwner);
    }
  }

  /** Progress within a document, merged into the current record; a cancel seen here aborts it. */
  private saveItem(jobId: string, item: JobItem, ctrl: AbortController): void {
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

  private publish(job: JobRecord, type: 'progress' | 'item', item: JobItem, message: string): void {
    // The fraction needs every item's stage: this worker's view, with this item's latest.
    const view = { ...job, items: job.items.map((i) => (i.index === item.index ? item : i)) };
    this.deps.bus.publish('kb:job', { job_id: job.id, event: itemEvent(view, type, item, message) });
  }

  private async readOptions(jobId: string): Promise<JobOptions> {
    try {
      return JSON.parse(await fs.readFile(path.join(spoolOf(this.deps.spoolDir, jobId), 'options.json'), 'utf8')) as JobOptions;
    } catch {
      return { force: false };
    }
  }

  private failIfRunning(jobId: string, index: number, error: { code: string; message: string }): void {
    let ended = false;
    let job: JobRecord | null = null;
    let changed = false;
    try {
      job = this.deps.store.updateJob(jobId, (j, flags) => {
        const it = j.items[index];
        if (!it || TERMINAL_STAGES.has(it.stage)) return false;
        it.stage = 'failed';
        it.error = error;
        it.finished_at = now();
        changed = true;
        ended = endIfDone(j, flags.cancelRequested);
      });
    } catch {
      return;
    }
    if (!job || !changed) return;
    try {
      this.deps.onItemFailed?.(job, job.items[index]!, error);
    } catch {
      // recorded in the job either way
    }
    this.announceEnd(job, index, ended);
  }

  // ---- reconciler ----

  reconcile(): Promise<void> {
    this.reconciling ??= this.reconcileOnce().finally(() => {
      this.reconciling = null;
    });
    return this.reconciling;
  }

  private async reconcileOnce(): Promise<void> {
    if (this.closing) return;
    let checked = 0;
    let jobs: JobRecord[];
    try {
      jobs = this.deps.store.unfinishedJobs();
    } catch {
      return;
    }
    for (const job of jobs) {
      if (this.closing || checked >= RECONCILE_MAX_ITEMS) return;
      // A walk nobody feeds (its feeder died, or the queue was full when its documents ended).
      this.maybeFeed(job);
      if (Date.now() - Date.parse(job.created_at) < RECONCILE_GRACE_MS) continue;
      for (const item of job.items) {
        if (TERMINAL_STAGES.has(item.stage)) continue;
        if (checked++ >= RECONCILE_MAX_ITEMS) return;
        const id = `${job.id}-${item.index}`;
        let state: string;
        try {
          state = await this.deps.queue.getJobState(id);
        } catch {
          return; // Redis away: next round
        }
        if (state === 'unknown') {
          // Recorded but never queued (or its entry expired): queue it now; the id makes this idempotent.
          await this.deps.queue
            .add('ingest', { job: job.id, index: item.index }, itemJobOptions(job.id, item.index, this.deps.attempts))
            .catch(() => undefined);
          this.deps.log?.info({ event: 'kb.job.requeued', job: job.id, index: item.index }, 'a recorded document missing from the queue was queued again');
        } else if (state === 'failed' || state === 'completed') {
          const bj = await this.deps.queue.getJob(id).catch(() => undefined);
          this.failIfRunning(job.id, item.index, {
            code: 'PROCESSING_ERROR',
            message: bj?.failedReason ? `the queue gave up on it: ${bj.failedReason}` : 'its worker stopped without recording the result',
          });
        }
      }
      // Every item ended but the job did not (its last writer died in between): end it.
      if (job.items.every((i) => TERMINAL_STAGES.has(i.stage))) {
        let ended = false;
        const j = this.deps.store.updateJob(job.id, (r, flags) => {
          ended = endIfDone(r, flags.cancelRequested);
          if (!ended) return false;
        });
        if (j && ended) this.deps.bus.publish('kb:job', { job_id: j.id, event: jobEndEvent(j) });
      }
    }
  }
}

function safeCancelRequested(store: KbStoreApi, jobId: string): boolean {
  try {
    return store.jobCancelRequested(jobId);
  } catch {
    return false;
  }
}
