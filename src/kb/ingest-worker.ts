/**
 * The worker role with REDIS_URL: takes documents from the BullMQ queue (INGEST_CONCURRENCY at
 * a time per process) and runs each through the same executor and state machine as the
 * in-process runner (document-executor.ts, job-state.ts): the same stages, progress, cancellation
 * and retries by error class. What differs is transport: the job's record is changed in SQLite
 * transactions (ingest-worker-records.ts), progress goes over the bus, and a retry is BullMQ's
 * backoff (the same waits as retryDelayMs).
 *
 * - A worker that dies mid-document: its lock lapses after INGEST_STALLED_SECONDS, another worker
 *   takes the document again (the item notes it, the job's `resumed` counts it).
 * - Stopping (SIGTERM): running documents are aborted and put back to run again shortly, without
 *   spending one of their tries.
 * - A reconciler (ingest-worker-reconcile.ts, at start and every INGEST_STALLED_SECONDS) repairs
 *   what no event covers; folder walks take their next parts in ingest-worker-feed.ts.
 * A document's content is committed in one transaction by ingestDocument, so a worker killed at
 * any moment leaves the old or the new version.
 */
import type { DelayedError, Job as BullJob, Queue, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { isToolError, toolError } from '../errors.ts';
import type { Bus } from '../redis/bus.ts';
import { errorText } from '../util/error-text.ts';
import { executeDocument, nextStep, PROGRESS_EVENT_MS, PROGRESS_SAVE_MS, throttle, type DocumentExecutorDeps, type ItemResult, type ItemRun } from './document-executor.ts';
import type { FeedNext } from './folder-feed.ts';
import { WorkerFolderFeed } from './ingest-worker-feed.ts';
import { reconcileOnce } from './ingest-worker-reconcile.ts';
import { WorkerRecords } from './ingest-worker-records.ts';
import { readOptions } from './job-spool.ts';
import { INGEST_QUEUE_NAME, type IngestJobData } from './redis-job-queue.ts';
import type { JobItem, JobRecord, KbStoreApi } from './types.ts';

/** How soon a document put back by a stopping worker runs again. */
const STOP_REQUEUE_MS = 1_000;

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

export class IngestWorker {
  private worker: Worker<IngestJobData> | null = null;
  /** BullMQ's "moved back to delayed" signal, from the module loaded in start() (never loaded without REDIS_URL). */
  private DelayedErrorClass: typeof DelayedError | null = null;
  private readonly running = new Map<string, { ctrl: AbortController; jobId: string }>();
  private reconcileTimer: NodeJS.Timeout | null = null;
  private reconciling: Promise<void> | null = null;
  private closing = false;
  private readonly offBus: () => void;
  private processed = 0;
  private retried = 0;
  private readonly records: WorkerRecords;
  private readonly feed: WorkerFolderFeed;
  private readonly executor: DocumentExecutorDeps;

  constructor(private readonly deps: IngestWorkerDeps) {
    this.executor = { spoolDir: deps.spoolDir, documentTimeoutS: deps.documentTimeoutS, runItem: (run) => deps.runItem(run) };
    this.records = new WorkerRecords({
      store: deps.store,
      bus: deps.bus,
      spoolDir: deps.spoolDir,
      ...(deps.onItemFailed ? { onItemFailed: deps.onItemFailed } : {}),
      ...(deps.onItemCancelled ? { onItemCancelled: deps.onItemCancelled } : {}),
      afterItem: (job) => this.feed.maybeFeed(job),
      ...(deps.log ? { log: deps.log } : {}),
    });
    this.feed = new WorkerFolderFeed({
      store: deps.store,
      queue: deps.queue,
      spoolDir: deps.spoolDir,
      attempts: deps.attempts,
      ...(deps.queueMax !== undefined ? { queueMax: deps.queueMax } : {}),
      ...(deps.feed ? { feed: deps.feed } : {}),
      onJobEnded: (job) => this.records.announceJobEnd(job),
      ...(deps.log ? { log: deps.log } : {}),
    });
    this.offBus = deps.bus.on('kb:cancel', (m) => {
      if (typeof m.job_id !== 'string') return;
      const reason = toolError('CONFLICT', `Job ${m.job_id} was cancelled`);
      for (const r of this.running.values()) if (r.jobId === m.job_id) r.ctrl.abort(reason);
      this.feed.abort(m.job_id, reason);
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
      if (final) this.records.failIfRunning(job.data.job, job.data.index, { code: 'PROCESSING_ERROR', message: err?.message ?? 'the document failed in the queue' });
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
    this.records.close();
    this.offBus();
    const stopping = toolError('SHUTTING_DOWN', 'The server is stopping');
    this.feed.close(stopping);
    if (this.reconcileTimer) clearInterval(this.reconcileTimer);
    for (const r of this.running.values()) r.ctrl.abort(stopping);
    await this.reconciling?.catch(() => undefined);
    await this.worker?.close().catch(() => undefined);
  }

  reconcile(): Promise<void> {
    this.reconciling ??= reconcileOnce({
      store: this.deps.store,
      queue: this.deps.queue,
      attempts: this.deps.attempts,
      records: this.records,
      feed: this.feed,
      closing: () => this.closing,
      ...(this.deps.log ? { log: this.deps.log } : {}),
    }).finally(() => {
      this.reconciling = null;
    });
    return this.reconciling;
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

  /** One try of one document: throws to have BullMQ retry it (or move it back when stopping). */
  private async runDocument(bj: BullJob<IngestJobData>, token: string | undefined, ctrl: AbortController): Promise<void> {
    const { job: jobId, index } = bj.data;
    const started = this.records.start(jobId, index);
    if (started.kind !== 'run') return;
    const { job, item } = started;
    const options = await readOptions(this.deps.spoolDir, jobId);
    // Progress is written at most once a second per document, and sent at most every 100 ms; stage changes at once.
    const saveDue = throttle(PROGRESS_SAVE_MS);
    const eventDue = throttle(PROGRESS_EVENT_MS, 0);
    const outcome = await executeDocument(this.executor, {
      job,
      item,
      options,
      ctrl,
      onProgress: (changed) => {
        if (saveDue(changed)) this.records.saveProgress(jobId, item, ctrl);
        if (eventDue(changed)) this.records.publish(job, 'progress', item, `${item.source}: ${item.stage}`);
      },
    });
    const step = nextStep(outcome, item, {
      cancelled: () => (isToolError(ctrl.signal.reason) && ctrl.signal.reason.code === 'CONFLICT') || this.records.cancelAsked(jobId),
      stopping: this.closing,
      tries: bj.attemptsMade + 1,
      attempts: bj.opts.attempts ?? 1,
    });
    if (step.step === 'stopped') {
      // Back to the queue in a second, the try not spent (another worker, or this one restarted).
      this.records.requeue(jobId, index, 'put back in the queue: its worker was stopping', null);
      if (token) await bj.moveToDelayed(Date.now() + STOP_REQUEUE_MS, token);
      throw new this.DelayedErrorClass!();
    }
    if (step.step === 'retry') {
      this.retried++;
      this.records.requeue(jobId, index, step.note, `${item.source}: retrying after ${step.code}`);
      // BullMQ waits its exponential backoff (RETRY_FIRST_MS doubled per try: retryDelayMs) and runs it again.
      throw outcome.kind === 'failed' && outcome.cause instanceof Error ? outcome.cause : new Error(step.note);
    }
    if (outcome.kind === 'ended') this.processed++;
    this.records.end(jobId, index, step.end, step.cancelled);
  }
}
