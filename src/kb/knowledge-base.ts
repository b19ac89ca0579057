/**
 * The knowledge base as the tools and routes see it (KnowledgeBaseApi): collections, documents,
 * ingestion jobs and search, wired from the store (SQLite), the per-collection indexes (opened
 * lazily, cached, persisted a moment after the last commit and at close), the job runner and the
 * collection search. Input checks and "not found" live here so every surface answers the same
 * coded errors. When the store cannot be opened (read-only or broken disk) the server still
 * starts; every call here then answers STORAGE_UNAVAILABLE with the reason.
 */
import { createHash } from 'node:crypto';
import path from 'node:path';
import type { CacheRegistry } from '../cache/cache-registry.ts';
import type { Config } from '../config.ts';
import type { DocumentService } from '../documents/document-service.ts';
import { isToolError, toolError, type ToolError } from '../errors.ts';
import type { ModelLayer } from '../retrieval/retrieval-service.ts';
import { errorText } from '../util/error-text.ts';
import { redactPaths } from '../util/fs-errors.ts';
import { ingestDocument, type IngestSource } from './ingest-document.ts';
import { SearchGate } from './search-gate.ts';
import { JobRunner, type ItemRun, type ItemResult, type JobOptions, type NewItem } from './job-runner.ts';
import { localRefOf, MAX_FILES_PER_REQUEST, realFolders, type AllowedFolders } from './local-files.ts';
import { allowedOfJob, namedPaths, nextFeedBatch, publicJob } from './folder-feed.ts';
import { parseDocumentUrl } from '../documents/url-policy.ts';
import {
  COLLECTION_NAME_PATTERN,
  MAX_CHUNK_SIZE,
  MAX_DESCRIPTION_CHARS,
  MIN_CHUNK_SIZE,
  type AddDocumentsRequest,
  type ChunkRecord,
  type CollectionRecord,
  type CollectionSearchRequest,
  type CollectionSearchResult,
  type CollectionStats,
  type DocumentQuery,
  type DocumentRecord,
  type FeedState,
  type JobEvent,
  type JobItem,
  type JobRecord,
  type JobStatus,
  type KbStoreApi,
  type KnowledgeBaseApi,
  type Page,
  type StorageState,
} from './types.ts';
import { KbStore } from './kb-store.ts';
import { HEARTBEAT_MS } from './db.ts';
import { IndexRegistry, type LoadingCollection, type OpenIndexesFn } from './index-registry.ts';
import { DEFAULT_TENANT, tenantLimits } from './tenant-share.ts';
import { searchCollection } from './collection-search.ts';
import { LocalBus, RedisBus, type Bus } from '../redis/bus.ts';
import type { RedisConnection } from '../redis/connection.ts';
import type { JobQueue } from './job-queue.ts';
import { IngestWorker } from './ingest-worker.ts';
import { INGEST_QUEUE_NAME, RedisJobQueue, type IngestJobData } from './redis-job-queue.ts';

/** URLs one request may name. */
export const MAX_URLS_PER_REQUEST = 1_000;
/** How long deleting a collection waits for its running documents to stop. */
const CANCEL_WAIT_MS = 30_000;
const NAME_RE = new RegExp(COLLECTION_NAME_PATTERN);

/** AddDocumentsRequest plus what only a transport knows. */
export interface AddDocumentsOptions {
  /**
   * Allowed folders for `paths` when ALLOWED_DIRS is unset: MCP over stdio passes the client's
   * roots (paths or file:// URIs). Ignored when ALLOWED_DIRS is set.
   */
  allowedDirs?: string[];
  /** Re-ingest even when the content is unchanged (reingestDocument sets it). */
  force?: boolean;
}

export interface KnowledgeBaseDeps {
  config: Readonly<Config>;
  documents: DocumentService;
  /** The shared caches (the download layer is bypassed by jobs). */
  caches?: CacheRegistry;
  models: ModelLayer | null;
  log?: { warn(obj: object, msg?: string): void; info(obj: object, msg?: string): void; debug(obj: object, msg?: string): void; error?(obj: object, msg?: string): void };
  /** Replaces the store (tests: a store that fails to open). */
  openStore?: (dir: string) => KbStoreApi;
  /** Folders named by their setting in client-visible reasons (model hints), as retrieve_chunks does. */
  namedDirs?: ReadonlyArray<readonly [string, string]>;
  /** Replaces the in-process bus (tests: two instances on one DATA_DIR sharing one LocalBus, as two processes share Redis). */
  bus?: Bus;
  /** Replaces how collection indexes are opened (tests: an open as slow as they make it). */
  openIndexes?: OpenIndexesFn;
}

type WithStats = CollectionRecord & { stats: CollectionStats };

export class KnowledgeBase implements KnowledgeBaseApi {
  readonly dir: string;
  private readonly store: KbStoreApi | null;
  private readonly unavailable: ToolError | null = null;
  /** In-process (JobRunner) until attachDistributed() swaps in the Redis queue. */
  private runner: JobQueue | null = null;
  /** With REDIS_URL and the worker role: takes documents from the queue. */
  private worker: IngestWorker | null = null;
  private role: 'all' | 'api' | 'worker' = 'all';
  /** The open collection indexes (index-registry.ts); null while the store is unavailable. */
  private readonly registry: IndexRegistry | null = null;
  private closed = false;
  private readonly publicText: (s: string) => string;
  private readonly searches = new SearchGate();
  /**
   * Notices between processes (job events, cancels, collection versions): in-process until
   * attachDistributed() hands over the Redis bus.
   */
  private bus: Bus = new LocalBus();
  /** In-process jobs: adopts, every HEARTBEAT_MS, the jobs of processes on this DATA_DIR that died meanwhile. */
  private adoptTimer: NodeJS.Timeout | null = null;

  constructor(private readonly deps: KnowledgeBaseDeps) {
    this.dir = path.join(deps.config.dataDir, 'kb');
    const named = deps.namedDirs ?? [];
    this.publicText = (text) => redactPaths(text, named);
    let store: KbStoreApi | null = null;
    try {
      store = deps.openStore ? deps.openStore(this.dir) : new KbStore(this.dir);
    } catch (err) {
      this.unavailable = isToolError(err) ? err : toolError('STORAGE_UNAVAILABLE', `knowledge base cannot be opened: ${errorText(err)}`, err);
      deps.log?.warn({ event: 'kb.unavailable', reason: this.unavailable.message }, 'knowledge base unavailable; the per-document tools still work');
    }
    this.store = store;
    if (!store) return;
    if (deps.bus) this.bus = deps.bus;
    const c = deps.config;
    this.registry = new IndexRegistry({
      kbDir: this.dir,
      store,
      config: c,
      ...(deps.log ? { log: deps.log } : {}),
      ...(deps.openIndexes ? { openIndexes: deps.openIndexes } : {}),
    });
    this.registry.attachBus(this.bus);
    const runner = new JobRunner({
      store,
      spoolDir: path.join(this.dir, 'uploads'),
      concurrency: c.INGEST_CONCURRENCY,
      queueMax: c.INGEST_QUEUE_MAX,
      tenantLimits: tenantLimits(c),
      documentTimeoutS: c.INGEST_DOCUMENT_TIMEOUT,
      attempts: c.INGEST_ATTEMPTS,
      runItem: (run) => this.runItem(run),
      onItemFailed: (job, item, error) => this.recordItemFailed(job, item, error),
      onItemCancelled: (job, item) => this.dropCancelledItem(job, item),
      feed: (state, options, max, signal) => nextFeedBatch(state, allowedOfJob(options, c.allowedDirs), max, signal),
      ...(deps.log ? { log: deps.log } : {}),
    });
    this.runner = runner;
    // With REDIS_URL the jobs live in the Redis queue: workers pick them up (their reconciler
    // also queues jobs an in-process run left unfinished), so nothing is resumed here.
    if (c.REDIS_URL) return;
    this.adoptOrphans(false);
    this.adoptTimer = setInterval(() => this.adoptOrphans(true), HEARTBEAT_MS);
    this.adoptTimer.unref();
  }

  /**
   * Resumes (or fails) the in-process jobs whose process is gone (db.ts's liveness rule): at
   * start-up, then periodically and whenever a read meets one, so a job is never reported
   * `running` while no process runs it. Not with the Redis queue (its workers reconcile).
   */
  private adoptOrphans(adopt: boolean): void {
    const runner = this.runner;
    const store = this.store;
    if (!runner?.resume || !store || this.closed || this.deps.config.REDIS_URL) return;
    try {
      const r = runner.resume((name) => store.getCollection(name) !== null, { adopt });
      if (r.resumed + r.failed > 0) this.deps.log?.info({ event: 'kb.jobs.resumed', ...r }, 'interrupted ingestion jobs picked up');
    } catch (err) {
      this.deps.log?.warn({ event: 'kb.jobs.resume_failed', err: errorText(err) }, 'interrupted ingestion jobs could not be resumed');
    }
  }

  /** A stored job that says queued or running but whose process is gone: adopted here first, so the answer is true. */
  private adoptIfOrphan(job: JobRecord): JobRecord {
    if (job.status !== 'queued' && job.status !== 'running') return job;
    if (this.runner?.liveJob(job.id)) return structuredClone(this.runner.liveJob(job.id)!);
    const owner = this.store?.jobOwner?.(job.id);
    if (owner !== 'gone' && owner !== 'this') return job;
    this.adoptOrphans(true);
    const live = this.runner?.liveJob(job.id);
    return live ? structuredClone(live) : (this.store?.getJob(job.id) ?? job);
  }

  /**
   * /ready and /health: the collections whose indexes are loading (a search of one waits at most
   * SEARCH_LOAD_WAIT_MS), and where each open one came from (snapshot, snapshot+catch-up, rebuild).
   */
  indexReadiness(): { loading: LoadingCollection[]; open: ReturnType<IndexRegistry['openStats']> } {
    if (!this.registry || this.closed) return { loading: [], open: [] };
    return { loading: this.registry.loading(), open: this.registry.openStats() };
  }

  /** /health: the store's state, or why it could not be opened. */
  storageState(): StorageState {
    if (!this.store) return { state: 'degraded', reason: this.publicText(this.unavailable?.message ?? 'knowledge base unavailable') };
    const s = this.store.storageState?.() ?? { state: 'ok' as const };
    return s.reason ? { ...s, reason: this.publicText(s.reason) } : s;
  }

  /**
   * REDIS_URL set (the services plugin, once Redis answered): notices go over Redis pub/sub, jobs
   * to the BullMQ queue, and with the worker role (or all) this process runs documents from it.
   */
  async attachDistributed(redis: RedisConnection): Promise<void> {
    const store = this.store;
    if (!store || this.closed) return;
    const c = this.deps.config;
    const { Queue } = await import('bullmq');
    const bus = new RedisBus(redis);
    await bus.start(['kb:job', 'kb:cancel', 'kb:collection']);
    this.bus = bus;
    this.registry!.attachBus(bus);
    const prefix = `${redis.keyPrefix}bull`;
    const queue = new Queue<IngestJobData>(INGEST_QUEUE_NAME, { connection: redis.createClient({ maxRetriesPerRequest: null }), prefix });
    const local = this.runner;
    this.runner = new RedisJobQueue({
      store,
      queue,
      bus,
      spoolDir: path.join(this.dir, 'uploads'),
      queueMax: c.INGEST_QUEUE_MAX,
      tenantLimits: tenantLimits(c),
      concurrency: c.INGEST_CONCURRENCY,
      attempts: c.INGEST_ATTEMPTS,
      ...(this.deps.log ? { log: this.deps.log } : {}),
    });
    await local?.close();
    this.role = c.ROLE;
    if (c.ROLE === 'api') return;
    this.worker = new IngestWorker({
      store,
      bus,
      connection: redis.createClient({ maxRetriesPerRequest: null }),
      prefix,
      queue,
      spoolDir: path.join(this.dir, 'uploads'),
      concurrency: c.INGEST_CONCURRENCY,
      attempts: c.INGEST_ATTEMPTS,
      stalledSeconds: c.INGEST_STALLED_SECONDS,
      documentTimeoutS: c.INGEST_DOCUMENT_TIMEOUT,
      runItem: (run) => this.runItem(run),
      onItemFailed: (job, item, error) => this.recordItemFailed(job, item, error),
      onItemCancelled: (job, item) => this.dropCancelledItem(job, item),
      queueMax: c.INGEST_QUEUE_MAX,
      feed: (state, options, max, signal) => nextFeedBatch(state, allowedOfJob(options, c.allowedDirs), max, signal),
      ...(this.deps.log ? { log: this.deps.log } : {}),
    });
    await this.worker.start();
  }

  // ---- collections ----

  createCollection(name: string, description: string | null = null, opts: { chunk_size?: number | null } = {}): WithStats {
    const store = this.use();
    checkName(name);
    const size = opts.chunk_size ?? null;
    if (size !== null && (!Number.isInteger(size) || size < MIN_CHUNK_SIZE || size > MAX_CHUNK_SIZE)) {
      throw toolError('VALIDATION_ERROR', `chunk_size must be an integer from ${MIN_CHUNK_SIZE} to ${MAX_CHUNK_SIZE}`);
    }
    if (description !== null && (typeof description !== 'string' || description.length > MAX_DESCRIPTION_CHARS)) {
      throw toolError('VALIDATION_ERROR', `description must be a string of at most ${MAX_DESCRIPTION_CHARS.toLocaleString('en-US')} characters`);
    }
    const c = store.createCollection(name, description, { chunk_size: size });
    return { ...c, stats: store.collectionStats(c.id) };
  }

  listCollections(): WithStats[] {
    const store = this.use();
    return store.listCollections().map((c) => ({ ...c, stats: store.collectionStats(c.id) }));
  }

  getCollection(name: string): WithStats {
    const c = this.collection(name);
    return { ...c, stats: this.use().collectionStats(c.id) };
  }

  async deleteCollection(name: string): Promise<{ name: string; documents: number; chunks: number }> {
    const store = this.use();
    const c = this.collection(name);
    const runner = this.runner!;
    const jobs = runner.jobsOf(name);
    for (const id of jobs) {
      try {
        // Awaited: the Redis queue's cancel is async, and its rejection must land here too.
        await runner.cancel(id, 'the collection was deleted');
      } catch {
        // ended meanwhile
      }
    }
    await Promise.all(jobs.map((id) => runner.waitFor(id, CANCEL_WAIT_MS).catch(() => undefined)));
    const removed = store.deleteCollection(c.id);
    await this.registry!.removed(c);
    return { name, ...removed };
  }

  // ---- documents ----

  async addDocuments(collection: string, req: AddDocumentsRequest, opts: AddDocumentsOptions = {}): Promise<JobRecord> {
    const store = this.use();
    const force = opts.force ?? false;
    const rootDirs = opts.allowedDirs ?? req.allowedDirs;
    checkName(collection);
    const urls = req.urls ?? [];
    const paths = req.paths ?? [];
    if (!Array.isArray(urls) || !Array.isArray(paths)) throw toolError('VALIDATION_ERROR', 'urls and paths must be lists');
    if (urls.length === 0 && paths.length === 0 && !req.upload) throw toolError('VALIDATION_ERROR', 'Nothing to ingest: give urls, paths or an upload');
    if (urls.length > MAX_URLS_PER_REQUEST) throw toolError('VALIDATION_ERROR', `At most ${MAX_URLS_PER_REQUEST} URLs per request`);
    if (paths.length > MAX_FILES_PER_REQUEST) throw toolError('VALIDATION_ERROR', `At most ${MAX_FILES_PER_REQUEST} paths per request`);
    if ((req.include || req.exclude) && paths.length === 0) throw toolError('VALIDATION_ERROR', 'include and exclude apply to paths: give paths with them');
    checkOcr(req.ocr);
    let c = store.getCollection(collection);
    if (!c && !req.create) throw toolError('NOT_FOUND', `Collection "${collection}" not found (create it first, or pass create: true)`);

    const items: NewItem[] = [];
    const seen = new Set<string>();
    for (const raw of urls) {
      if (typeof raw !== 'string') throw toolError('VALIDATION_ERROR', 'urls must be strings');
      const url = parseDocumentUrl(raw).href;
      if (seen.has(url)) continue;
      seen.add(url);
      items.push({ source: url, source_kind: 'url' });
    }
    let allowed: AllowedFolders | null = null;
    const tenant = req.tenant ?? DEFAULT_TENANT;
    let feed: FeedState | undefined;
    if (paths.length > 0) {
      allowed = await this.allowedFolders(rootDirs);
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
        const max = await this.runner!.folderRoom(items.length + (req.upload ? 1 : 0), tenant);
        const first = await nextFeedBatch(named.feed, allowed, max, req.signal);
        items.push(...first.items);
        feed = first.state;
      }
    }
    if (req.upload) {
      const u = req.upload;
      if (!Buffer.isBuffer(u.bytes)) throw toolError('VALIDATION_ERROR', 'The uploaded file is missing');
      if (u.bytes.length > this.deps.config.MAX_UPLOAD_BYTES) {
        throw toolError('PAYLOAD_TOO_LARGE', `The uploaded file is larger than the upload limit of ${this.deps.config.MAX_UPLOAD_BYTES} bytes (MAX_UPLOAD_BYTES)`);
      }
      const filename = cleanFilename(u.filename) ?? `upload-${sha256Short(u.bytes)}`;
      items.push({ source: filename, source_kind: 'upload', upload: { bytes: u.bytes, ...(u.contentType ? { contentType: u.contentType } : {}) } });
    }
    // Only what runs counts (left-out notes are skipped items); folder files beyond the first part are not here yet.
    await this.runner!.checkRoom(items.filter((i) => !i.leftOut).length, tenant);
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
    return publicJob(await this.runner!.submit(collection, items, options, feed));
  }

  listDocuments(collection: string, q: DocumentQuery = {}): Page<DocumentRecord> {
    const c = this.collection(collection);
    return this.use().listDocuments(c.id, q);
  }

  getDocument(collection: string, documentId: string): DocumentRecord & { history: ReturnType<KbStoreApi['history']> } {
    const store = this.use();
    const d = this.document(collection, documentId);
    return { ...d, history: store.history(d.id) };
  }

  documentChunks(collection: string, documentId: string, q: { offset?: number; limit?: number } = {}): Page<ChunkRecord> {
    const store = this.use();
    const d = this.document(collection, documentId);
    const offset = Math.max(0, Math.floor(q.offset ?? 0));
    const limit = Math.min(500, Math.max(1, Math.floor(q.limit ?? 50)));
    const items = store.documentChunks(d.id, offset, offset + limit - 1);
    const end = offset + items.length;
    return { items, total: d.chunk_count, next_offset: end < d.chunk_count ? end : null };
  }

  async deleteDocument(collection: string, documentId: string): Promise<{ document_id: string; chunks: number }> {
    const store = this.use();
    const c = this.collection(collection);
    await this.registry!.settled(collection);
    const d = this.document(collection, documentId);
    const { version, removedChunkIds } = store.deleteDocument(c.id, d.id);
    await this.registry!.removeChunks(c, version, removedChunkIds);
    return { document_id: d.id, chunks: removedChunkIds.length };
  }

  async reingestDocument(collection: string, documentId: string): Promise<JobRecord> {
    const d = this.document(collection, documentId);
    if (d.source_kind === 'upload') {
      throw toolError('VALIDATION_ERROR', `Document ${d.id} was uploaded; upload the file again to replace it`);
    }
    if (d.source_kind === 'url') return this.addDocuments(collection, { urls: [d.source] }, { force: true });
    // A path: still inside the allowed folders (checked again), ingested even when unchanged.
    return this.addDocuments(collection, { paths: [d.source] }, { force: true });
  }

  // ---- jobs ----

  getJob(id: string): JobRecord {
    this.use();
    const live = this.runner!.liveJob(id);
    if (live) return publicJob(structuredClone(live));
    const stored = this.use().getJob(id);
    if (!stored) throw toolError('NOT_FOUND', `Job ${id} not found`);
    return publicJob(this.adoptIfOrphan(stored));
  }

  listJobs(q: { collection?: string; collections?: readonly string[]; status?: JobStatus; offset?: number; limit?: number } = {}): Page<JobRecord> {
    const page = this.use().listJobs(q);
    // Live jobs are fresher in memory than their last saved progress.
    return { ...page, items: page.items.map((j) => publicJob(this.runner!.liveJob(j.id) ? structuredClone(this.runner!.liveJob(j.id)!) : this.adoptIfOrphan(j))) };
  }

  cancelJob(id: string): JobRecord | Promise<JobRecord> {
    this.use();
    // In process the answer (or CONFLICT) comes at once; the Redis queue's is a promise.
    const r = this.runner!.cancel(id);
    return r instanceof Promise ? r.then(publicJob) : publicJob(r);
  }

  subscribe(jobId: string, listener: (e: JobEvent) => void): () => void {
    this.use();
    return this.runner!.subscribe(jobId, listener);
  }

  async waitForJob(jobId: string, ms: number, signal?: AbortSignal): Promise<JobRecord> {
    this.use();
    return publicJob(await this.runner!.waitFor(jobId, ms, signal));
  }

  // ---- search ----

  async search(collection: string, req: CollectionSearchRequest, ctx: { signal: AbortSignal }): Promise<CollectionSearchResult> {
    const store = this.use();
    const c = this.collection(collection);
    // Bounded: past SEARCH_LOAD_WAIT_MS a loading index answers INDEX_LOADING (503, Retry-After).
    const ix = await this.registry!.forSearch(c);
    return this.searches.run(
      () =>
        searchCollection(
          { collection: c, store, indexes: { lexical: ix.lexical, dense: ix.dense }, models: this.deps.models, publicText: this.publicText },
          req,
          ctx.signal,
        ),
      ctx.signal,
    );
  }

  stats(): Record<string, unknown> {
    if (!this.store) return { available: false, reason: this.unavailable?.message ?? 'unavailable', storage: 'degraded' };
    try {
      const collections = this.store.listCollections();
      let documents = 0;
      let chunks = 0;
      for (const c of collections) {
        const s = this.store.collectionStats(c.id);
        documents += s.documents;
        chunks += s.chunks;
      }
      const r = this.runner!.stats();
      const storage = this.storageState();
      return {
        available: true,
        storage: storage.state,
        ...(storage.reason ? { storage_reason: storage.reason } : {}),
        ...(r.job_ends_unsaved !== undefined ? { job_ends_unsaved: r.job_ends_unsaved } : {}),
        collections: collections.length,
        documents,
        chunks,
        jobs_active: r.jobs_active,
        documents_queued: r.documents_queued,
        // In process: the most documents seen waiting at once, and jobs whose folders are still walked (folder-feed.ts).
        ...(r.documents_queued_peak !== undefined ? { documents_queued_peak: r.documents_queued_peak, folders_walking: r.folders_walking } : {}),
        documents_running: r.documents_running,
        ingest_concurrency: r.concurrency,
        ingest_queue_max: r.queue_max,
        ...this.registry!.stats(),
        role: this.role,
        queue: r.queue,
        ...(this.worker ? { worker: this.worker.stats() } : {}),
        searches: this.searches.stats(),
        local_files: this.deps.config.allowedDirs.length > 0 ? 'ALLOWED_DIRS' : 'off (set ALLOWED_DIRS; over MCP stdio the client roots serve)',
      };
    } catch (err) {
      return { available: false, reason: isToolError(err) ? err.message : 'knowledge base store failed' };
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.adoptTimer) clearInterval(this.adoptTimer);
    await this.worker?.close();
    await this.runner?.close();
    // Persists the open indexes (after the last commit, before the bus goes).
    await this.registry?.close();
    // A bus handed in (tests sharing one) belongs to its giver.
    if (this.bus !== this.deps.bus) await this.bus.close();
    this.store?.close();
  }

  // ---- internals ----

  private recordItemFailed(job: Readonly<JobRecord>, item: Readonly<JobItem>, error: { code: string; message: string }): void {
    const store = this.use();
    const collection = store.getCollection(job.collection);
    if (collection && item.document_id) store.markDocumentFailed(collection.id, item.document_id, error, job.id);
  }

  /** A document first seen by this item and never committed goes with the cancel. */
  private dropCancelledItem(job: Readonly<JobRecord>, item: Readonly<JobItem>): void {
    const store = this.use();
    const collection = store.getCollection(job.collection);
    if (!collection || !item.document_id) return;
    const doc = store.getDocument(collection.id, item.document_id);
    if (doc && doc.status === 'pending' && doc.revision === 0) store.deleteDocument(collection.id, doc.id);
  }

  private use(): KbStoreApi {
    if (!this.store) throw this.unavailable!;
    if (this.closed) throw toolError('SHUTTING_DOWN', 'The server is stopping');
    return this.store;
  }

  private collection(name: string): CollectionRecord {
    const store = this.use();
    if (typeof name !== 'string' || !NAME_RE.test(name)) throw toolError('NOT_FOUND', `Collection ${JSON.stringify(String(name).slice(0, 80))} not found`);
    const c = store.getCollection(name);
    if (!c) throw toolError('NOT_FOUND', `Collection "${name}" not found`);
    return c;
  }

  private document(collection: string, documentId: string): DocumentRecord {
    const c = this.collection(collection);
    const d = typeof documentId === 'string' ? this.use().getDocument(c.id, documentId) : null;
    if (!d) throw toolError('NOT_FOUND', `Document ${JSON.stringify(String(documentId).slice(0, 80))} not found in collection "${collection}"`);
    return d;
  }

  private async allowedFolders(rootDirs: string[] | undefined): Promise<AllowedFolders> {
    const configured = this.deps.config.allowedDirs;
    if (configured.length > 0) return { dirs: configured, origin: 'ALLOWED_DIRS' };
    if (rootDirs && rootDirs.length > 0) return { dirs: await realFolders(rootDirs), origin: "the MCP client's roots" };
    return { dirs: [], origin: 'ALLOWED_DIRS' };
  }

  private async runItem(run: ItemRun): Promise<ItemResult> {
    const store = this.use();
    const c = store.getCollection(run.job.collection);
    if (!c) throw toolError('NOT_FOUND', `Collection "${run.job.collection}" no longer exists`);
    const item = run.item;
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
    const out = await ingestDocument(
      {
        config: this.deps.config,
        store,
        documents: this.deps.documents,
        ...(this.deps.caches ? { caches: this.deps.caches } : {}),
        models: this.deps.models,
        applyCommit: (col, commit) => this.registry!.applyCommit(col, commit),
        beforeCommit: (name) => this.registry!.settled(name),
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

function checkName(name: string): void {
  if (typeof name !== 'string' || !NAME_RE.test(name)) {
    throw toolError('VALIDATION_ERROR', `Collection name must match ${COLLECTION_NAME_PATTERN} (lowercase letters, digits, '-' and '_', starting with a letter or digit, 1-64 characters)`);
  }
}

function checkOcr(ocr: AddDocumentsRequest['ocr']): void {
  if (ocr === undefined) return;
  if (typeof ocr !== 'object' || ocr === null) throw toolError('VALIDATION_ERROR', 'ocr must be an object');
  if (ocr.mode !== undefined && !['auto', 'always', 'never'].includes(ocr.mode)) throw toolError('VALIDATION_ERROR', 'ocr.mode must be auto, always or never');
  if (ocr.languages !== undefined && (!Array.isArray(ocr.languages) || ocr.languages.some((l) => typeof l !== 'string' || !/^[A-Za-z_]{3,16}$/.test(l)))) {
    throw toolError('VALIDATION_ERROR', 'ocr.languages must be tesseract language codes (e.g. ["eng", "deu"])');
  }
}

function cleanFilename(name: string | undefined): string | null {
  if (!name) return null;
  const base = name.split(/[\\/]/).pop()!.replace(/[\u0000-\u001f]/g, '').trim();
  return base ? base.slice(0, 255) : null;
}

function sha256Short(b: Buffer): string {
  return createHashHex(b).slice(0, 16);
}

function createHashHex(b: Buffer): string {
  return createHash('sha256').update(b).digest('hex');
}
