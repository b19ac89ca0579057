/**
 * Ingestion for the knowledge base: which queue takes jobs (in process until REDIS_URL hands over
 * the Redis queue, and with the worker role a Redis worker beside it), a request turned into a
 * job, a job's documents run through ingestDocument, and the job reads that answer true (a job
 * whose process is gone is adopted before it is reported). The queues are used only through the
 * JobQueue interface: which one runs changes nothing here.
 */
import path from 'node:path';
import type { CacheRegistry } from '../cache/cache-registry.ts';
import type { Config } from '../config.ts';
import type { DocumentService } from '../documents/document-service.ts';
import { toolError } from '../errors.ts';
import type { Bus } from '../redis/bus.ts';
import type { RedisConnection } from '../redis/connection.ts';
import type { ModelLayer } from '../retrieval/contracts.ts';
import { errorText } from '../util/error-text.ts';
import type { ItemResult, ItemRun, JobOptions } from './document-executor.ts';
import { allowedOfJob, namedPaths, nextFeedBatch, publicJob, type FeedNext } from './folder-feed.ts';
import { HEARTBEAT_MS } from './db.ts';
import type { IndexRegistry } from './index-registry.ts';
import { ingestDocument, type IngestSource } from './ingest-document.ts';
import { checkName, checkRequest, deleteItems, uploadItem, urlItems } from './ingest-request.ts';
import { runDeleteStep } from './sources/delete-step.ts';
import { IngestWorker } from './ingest-worker.ts';
import { JobRunner } from './job-runner.ts';
import type { JobQueue, QueueStats } from './job-queue.ts';
import { localRefOf, realFolders, type AllowedFolders } from './local-files.ts';
import { INGEST_QUEUE_NAME, RedisJobQueue, type IngestJobData } from './redis-job-queue.ts';
import { DEFAULT_TENANT, tenantLimits } from './tenant-share.ts';
import type { AddDocumentsRequest, FeedState, JobEvent, JobItem, JobRecord, JobStatus, KbStoreApi, NewItem, Page } from './types.ts';

/** How long deleting a collection waits for its running documents to stop. */
const CANCEL_WAIT_MS = 30_000;

export interface IngestionDeps {
  config: Readonly<Config>;
  store: KbStoreApi;
  registry: IndexRegistry;
  /** DATA_DIR/kb. */
  kbDir: string;
  documents: DocumentService;
  caches?: CacheRegistry;
  models: ModelLayer | null;
  log?: { warn(obj: object, msg?: string): void; info(obj: object, msg?: string): void; debug(obj: object, msg?: string): void; error?(obj: object, msg?: string): void };
}

export class IngestionService {
  /** In-process (JobRunner) until attachDistributed() swaps in the Redis queue. */
  private queue: JobQueue;
  /** With REDIS_URL and the worker role: takes documents from the queue. */
  private worker: IngestWorker | null = null;
  private role: 'all' | 'api' | 'worker' = 'all';
  /** In-process jobs: adopts, every HEARTBEAT_MS, the jobs of processes on this DATA_DIR that died meanwhile. */
  private adoptTimer: NodeJS.Timeout | null = null;
  private closed = false;
  private readonly spoolDir: string;

  constructor(private readonly deps: IngestionDeps) {
    const c = deps.config;
    this.spoolDir = path.join(deps.kbDir, 'uploads');
    this.queue = new JobRunner({
      store: deps.store,
      spoolDir: this.spoolDir,
      concurrency: c.INGEST_CONCURRENCY,
      queueMax: c.INGEST_QUEUE_MAX,
      tenantLimits: tenantLimits(c),
      documentTimeoutS: c.INGEST_DOCUMENT_TIMEOUT,
      attempts: c.INGEST_ATTEMPTS,
      ...this.itemHooks(),
      ...(deps.log ? { log: deps.log } : {}),
    });
    // With REDIS_URL the jobs live in the Redis queue: workers pick them up (their reconciler
    // also queues jobs an in-process run left unfinished), so nothing is resumed here.
    if (c.REDIS_URL) return;
    this.adoptOrphans(false);
    this.adoptTimer = setInterval(() => this.adoptOrphans(true), HEARTBEAT_MS);
    this.adoptTimer.unref();
  }

  /** Jobs go to the BullMQ queue; with the worker role (or all) this process runs documents from it. */
  async attachDistributed(redis: RedisConnection, bus: Bus): Promise<void> {
    if (this.closed) return;
    const c = this.deps.config;
    const { Queue } = await import('bullmq');
    const prefix = `${redis.keyPrefix}bull`;
    const queue = new Queue<IngestJobData>(INGEST_QUEUE_NAME, { connection: redis.createClient({ maxRetriesPerRequest: null }), prefix });
    const local = this.queue;
    this.queue = new RedisJobQueue({
      store: this.deps.store,
      queue,
      bus,
      spoolDir: this.spoolDir,
      queueMax: c.INGEST_QUEUE_MAX,
      tenantLimits: tenantLimits(c),
      concurrency: c.INGEST_CONCURRENCY,
      attempts: c.INGEST_ATTEMPTS,
      ...(this.deps.log ? { log: this.deps.log } : {}),
    });
    await local.close();
    this.role = c.ROLE;
    if (c.ROLE === 'api') return;
    this.worker = new IngestWorker({
      store: this.deps.store,
      bus,
      connection: redis.createClient({ maxRetriesPerRequest: null }),
      prefix,
      queue,
      spoolDir: this.spoolDir,
      concurrency: c.INGEST_CONCURRENCY,
      attempts: c.INGEST_ATTEMPTS,
      stalledSeconds: c.INGEST_STALLED_SECONDS,
      documentTimeoutS: c.INGEST_DOCUMENT_TIMEOUT,
      queueMax: c.INGEST_QUEUE_MAX,
      ...this.itemHooks(),
      ...(this.deps.log ? { log: this.deps.log } : {}),
    });
    await this.worker.start();
  }

  /** What both queues call back: a document's run, a failed or cancelled document, a folder's next part. */
  private itemHooks() {
    const c = this.deps.config;
    const feed: FeedNext = (state, options, max, signal) => nextFeedBatch(state, allowedOfJob(options, c.allowedDirs), max, signal);
    return {
      runItem: (run: ItemRun) => this.runItem(run),
      onItemFailed: (job: Readonly<JobRecord>, item: Readonly<JobItem>, error: { code: string; message: string }) => this.recordItemFailed(job, item, error),
      onItemCancelled: (job: Readonly<JobRecord>, item: Readonly<JobItem>) => this.dropCancelledItem(job, item),
      feed,
    };
  }

  async addDocuments(collection: string, req: AddDocumentsRequest, opts: { allowedDirs?: string[]; force?: boolean } = {}): Promise<JobRecord> {
    const store = this.deps.store;
    const force = opts.force ?? false;
    checkName(collection);
    checkRequest(req);
    let c = store.getCollection(collection);
    if (!c && !req.create) throw toolError('NOT_FOUND', `Collection "${collection}" not found (create it first, or pass create: true)`);
    const items: NewItem[] = urlItems(req.urls ?? []);
    const paths = req.paths ?? [];
    let allowed: AllowedFolders | null = null;
    const tenant = req.tenant ?? DEFAULT_TENANT;
    let feed: FeedState | undefined;
    if (paths.length > 0) {
      allowed = await this.allowedFolders(opts.allowedDirs ?? req.allowedDirs);
      const named = await namedPaths(paths, {
        allowed,
        ...(req.include ? { include: req.include } : {}),
        ...(req.exclude ? { exclude: req.exclude } : {}),
        maxBytes: this.deps.config.MAX_UPLOAD_BYTES,
        ...(req.signal ? { signal: req.signal } : {}),
      });
      for (const f of named.files) items.push({ source: f.realpath, source_kind: 'path', local: localRefOf(f) });
      if (named.feed) {
        // Folders are walked in parts (folder-feed.ts): the first now, as far as the queue has
        // room beside the files named, the rest as the job's documents drain.
        const max = await this.queue.folderRoom(items.length + (req.upload ? 1 : 0), tenant);
        const first = await nextFeedBatch(named.feed, allowed, max, req.signal);
        items.push(...first.items);
        feed = first.state;
      }
    }
    items.push(...deleteItems(req));
    if (req.upload) items.push(uploadItem(req.upload, this.deps.config.MAX_UPLOAD_BYTES));
    // Only what runs counts (left-out notes are skipped items); folder files beyond the first part are not here yet.
    await this.queue.checkRoom(items.filter((i) => !i.leftOut).length, tenant);
    if (!c) {
      try {
        c = store.createCollection(collection, null);
      } catch (err) {
        // Created by a concurrent call meanwhile: use it.
        c = store.getCollection(collection);
        if (!c) throw err;
      }
    }
    const options: JobOptions = {
      force,
      ...(req.ocr ? { ocr: req.ocr } : {}),
      ...(allowed && allowed.origin !== 'ALLOWED_DIRS' ? { allowedDirs: [...allowed.dirs], allowedOrigin: allowed.origin } : {}),
      // An upload is read when it arrives: of two uploads of one name, the one received last wins.
      ...(req.upload && store.takeReadSeq ? { uploadReadSeq: store.takeReadSeq() } : {}),
      ...(tenant !== DEFAULT_TENANT ? { tenant } : {}),
    };
    return publicJob(await this.queue.submit(collection, items, options, feed));
  }

  /** Cancels a collection's unfinished jobs and waits (bounded) for their running documents to stop. */
  async stopJobsOf(collection: string): Promise<void> {
    const queue = this.queue;
    const jobs = queue.jobsOf(collection);
    for (const id of jobs) {
      try {
        // Awaited: the Redis queue's cancel is async, and its rejection must land here too.
        await queue.cancel(id, 'the collection was deleted');
      } catch {
        // ended meanwhile
      }
    }
    await Promise.all(jobs.map((id) => queue.waitFor(id, CANCEL_WAIT_MS).catch(() => undefined)));
  }

  getJob(id: string): JobRecord {
    const live = this.queue.liveJob(id);
    if (live) return publicJob(structuredClone(live));
    const stored = this.deps.store.getJob(id);
    if (!stored) throw toolError('NOT_FOUND', `Job ${id} not found`);
    return publicJob(this.adoptIfOrphan(stored));
  }

  listJobs(q: { collection?: string; collections?: readonly string[]; status?: JobStatus; offset?: number; limit?: number } = {}): Page<JobRecord> {
    const page = this.deps.store.listJobs(q);
    // Live jobs are fresher in memory than their last saved progress.
    return { ...page, items: page.items.map((j) => publicJob(this.queue.liveJob(j.id) ? structuredClone(this.queue.liveJob(j.id)!) : this.adoptIfOrphan(j))) };
  }

  cancelJob(id: string): JobRecord | Promise<JobRecord> {
    // In process the answer (or CONFLICT) comes at once; the Redis queue's is a promise.
    const r = this.queue.cancel(id);
    return isPromise(r) ? r.then(publicJob) : publicJob(r);
  }

  subscribe(jobId: string, listener: (e: JobEvent) => void): () => void {
    return this.queue.subscribe(jobId, listener);
  }

  async waitForJob(jobId: string, ms: number, signal?: AbortSignal): Promise<JobRecord> {
    return publicJob(await this.queue.waitFor(jobId, ms, signal));
  }

  /** The queue's counts, this process's role, and the worker's when it runs one. */
  stats(): { queue: QueueStats; role: string; worker: Record<string, unknown> | null } {
    return { queue: this.queue.stats(), role: this.role, worker: this.worker?.stats() ?? null };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.adoptTimer) clearInterval(this.adoptTimer);
    await this.worker?.close();
    await this.queue.close();
  }

  /**
   * Resumes (or fails) the in-process jobs whose process is gone (db.ts's liveness rule): at
   * start-up, then periodically and whenever a read meets one, so a job is never reported
   * `running` while no process runs it. Not with the Redis queue (its workers reconcile).
   */
  private adoptOrphans(adopt: boolean): void {
    const store = this.deps.store;
    if (!this.queue.resume || this.closed || this.deps.config.REDIS_URL) return;
    try {
      const r = this.queue.resume((name) => store.getCollection(name) !== null, { adopt });
      if (r.resumed + r.failed > 0) this.deps.log?.info({ event: 'kb.jobs.resumed', ...r }, 'interrupted ingestion jobs picked up');
    } catch (err) {
      this.deps.log?.warn({ event: 'kb.jobs.resume_failed', err: errorText(err) }, 'interrupted ingestion jobs could not be resumed');
    }
  }

  /** A stored job that says queued or running but whose process is gone: adopted here first, so the answer is true. */
  private adoptIfOrphan(job: JobRecord): JobRecord {
    if (job.status !== 'queued' && job.status !== 'running') return job;
    if (this.queue.liveJob(job.id)) return structuredClone(this.queue.liveJob(job.id)!);
    const owner = this.deps.store.jobOwner?.(job.id);
    if (owner !== 'gone' && owner !== 'this') return job;
    this.adoptOrphans(true);
    const live = this.queue.liveJob(job.id);
    return live ? structuredClone(live) : (this.deps.store.getJob(job.id) ?? job);
  }

  private recordItemFailed(job: Readonly<JobRecord>, item: Readonly<JobItem>, error: { code: string; message: string }): void {
    const store = this.deps.store;
    const collection = store.getCollection(job.collection);
    if (collection && item.document_id) store.markDocumentFailed(collection.id, item.document_id, error, job.id);
  }

  /** A document first seen by this item and never committed goes with the cancel. */
  private dropCancelledItem(job: Readonly<JobRecord>, item: Readonly<JobItem>): void {
    const store = this.deps.store;
    const collection = store.getCollection(job.collection);
    if (!collection || !item.document_id) return;
    const doc = store.getDocument(collection.id, item.document_id);
    if (doc && doc.status === 'pending' && doc.revision === 0) store.deleteDocument(collection.id, doc.id);
  }

  private async allowedFolders(rootDirs: string[] | undefined): Promise<AllowedFolders> {
    const configured = this.deps.config.allowedDirs;
    if (configured.length > 0) return { dirs: configured, origin: 'ALLOWED_DIRS' };
    if (rootDirs && rootDirs.length > 0) return { dirs: await realFolders(rootDirs), origin: "the MCP client's roots" };
    return { dirs: [], origin: 'ALLOWED_DIRS' };
  }

  private async runItem(run: ItemRun): Promise<ItemResult> {
    if (this.closed) throw toolError('SHUTTING_DOWN', 'The server is stopping');
    const store = this.deps.store;
    const c = store.getCollection(run.job.collection);
    if (!c) throw toolError('NOT_FOUND', `Collection "${run.job.collection}" no longer exists`);
    const item = run.item;
    // A source sync's deletion (sources/delete-step.ts): a step of the same job.
    if (item.delete) return runDeleteStep({ store, registry: this.deps.registry }, c, run, item.delete);
    const src: IngestSource = { kind: item.source_kind, source: item.source };
    if (item.source_kind === 'upload') {
      const contentType = run.options.contentTypes?.[item.index];
      src.upload = { bytes: run.upload!, filename: item.source, ...(contentType ? { contentType } : {}) };
      if (run.options.uploadReadSeq !== undefined) src.readSeq = run.options.uploadReadSeq;
    } else if (item.source_kind === 'path') {
      src.allowed = run.options.allowedDirs
        ? { dirs: run.options.allowedDirs, origin: run.options.allowedOrigin ?? "the MCP client's roots" }
        : { dirs: this.deps.config.allowedDirs, origin: 'ALLOWED_DIRS' };
      if (item.local) src.local = item.local;
    }
    const registry = this.deps.registry;
    const out = await ingestDocument(
      {
        config: this.deps.config,
        store,
        documents: this.deps.documents,
        ...(this.deps.caches ? { caches: this.deps.caches } : {}),
        models: this.deps.models,
        applyCommit: (col, commit) => registry.applyCommit(col, commit),
        beforeCommit: (name) => registry.settled(name),
        ...(this.deps.log ? { log: this.deps.log } : {}),
      },
      src,
      {
        jobId: run.job.id,
        collectionId: c.id,
        collectionName: c.name,
        force: run.options.force,
        ...(run.options.ocr ? { ocr: run.options.ocr } : {}),
        signal: run.signal,
        onProgress: (stage, p, documentId) => run.progress(stage, p, documentId),
      },
    );
    return { stage: out.stage, documentId: out.documentId, note: out.note };
  }
}

function isPromise<T>(v: T | Promise<T>): v is Promise<T> {
  return typeof (v as { then?: unknown }).then === 'function';
}
