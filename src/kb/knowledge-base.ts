/**
 * The knowledge base as the tools and routes see it (KnowledgeBaseApi): a thin facade over the
 * store (SQLite), the index registry (index-registry.ts: open, apply, persist, catch up, evict the
 * per-collection indexes), the ingestion service (ingestion-service.ts: queues, jobs, a document's
 * run) and the collection search. Input checks and "not found" live here so every surface answers
 * the same coded errors. When the store cannot be opened (read-only or broken disk) the server
 * still starts; every call here then answers STORAGE_UNAVAILABLE with the reason.
 */
import path from 'node:path';
import type { CacheRegistry } from '../cache/cache-registry.ts';
import type { Config } from '../config.ts';
import type { DocumentService } from '../documents/document-service.ts';
import { isToolError, toolError, type ToolError } from '../errors.ts';
import type { ModelLayer } from '../retrieval/contracts.ts';
import { errorText } from '../util/error-text.ts';
import { redactPaths } from '../util/fs-errors.ts';
import { SearchGate } from './search-gate.ts';
import { SearchPool } from './search-pool.ts';
import {
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
  type JobEvent,
  type JobRecord,
  type JobStatus,
  type KbStoreApi,
  type KnowledgeBaseApi,
  type Page,
  type StorageState,
} from './types.ts';
import { KbStore } from './kb-store.ts';
import { IndexRegistry, type LoadingCollection, type OpenIndexesFn } from './index-registry.ts';
import { searchCollection } from './collection-search.ts';
import { LocalBus, RedisBus, type Bus } from '../redis/bus.ts';
import type { RedisConnection } from '../redis/connection.ts';
import { IngestionService } from './ingestion-service.ts';
import { checkName, isCollectionName } from './ingest-request.ts';
import { thousands } from '../util/thousands.ts';

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
  /** The open collection indexes (index-registry.ts); null while the store is unavailable. */
  private readonly registry: IndexRegistry | null = null;
  /** Queues, jobs and document runs (ingestion-service.ts); null while the store is unavailable. */
  private readonly ingestion: IngestionService | null = null;
  private closed = false;
  private readonly publicText: (s: string) => string;
  /** Worker threads for large collections' lexical search (search-pool.ts). */
  private readonly searchPool: SearchPool;
  /** Searches at once: the ones a worker answers hold little of this thread, so more may run. */
  private readonly searches: SearchGate;
  /**
   * Notices between processes (job events, cancels, collection versions): in-process until
   * attachDistributed() hands over the Redis bus.
   */
  private bus: Bus = new LocalBus();

  constructor(private readonly deps: KnowledgeBaseDeps) {
    this.dir = path.join(deps.config.dataDir, 'kb');
    this.searchPool = new SearchPool({ size: deps.config.searchWorkers, minChunks: deps.config.SEARCH_WORKER_MIN_CHUNKS, log: deps.log });
    this.searches = new SearchGate(2 + 2 * deps.config.searchWorkers);
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
    this.registry = new IndexRegistry({
      kbDir: this.dir,
      store,
      config: deps.config,
      ...(deps.log ? { log: deps.log } : {}),
      ...(deps.openIndexes ? { openIndexes: deps.openIndexes } : {}),
    });
    this.registry.attachBus(this.bus);
    this.ingestion = new IngestionService({
      config: deps.config,
      store,
      registry: this.registry,
      kbDir: this.dir,
      documents: deps.documents,
      ...(deps.caches ? { caches: deps.caches } : {}),
      models: deps.models,
      ...(deps.log ? { log: deps.log } : {}),
    });
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
    if (!this.store || this.closed) return;
    const bus = new RedisBus(redis);
    await bus.start(['kb:job', 'kb:cancel', 'kb:collection']);
    this.bus = bus;
    this.registry!.attachBus(bus);
    await this.ingestion!.attachDistributed(redis, bus);
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
      throw toolError('VALIDATION_ERROR', `description must be a string of at most ${thousands(MAX_DESCRIPTION_CHARS)} characters`);
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
    await this.ingestion!.stopJobsOf(name);
    const removed = store.deleteCollection(c.id);
    await this.registry!.removed(c);
    return { name, ...removed };
  }

  // ---- documents ----

  async addDocuments(collection: string, req: AddDocumentsRequest, opts: AddDocumentsOptions = {}): Promise<JobRecord> {
    this.use();
    return this.ingestion!.addDocuments(collection, req, opts);
  }

  listDocuments(collection: string, q: DocumentQuery = {}): Page<DocumentRecord> {
    const c = this.collection(collection);
    return this.use().listDocuments(c.id, q);
  }

  getDocument(collection: string, documentId: string): DocumentRecord & { history: ReturnType<KbStoreApi['history']> } {
    const store = this.use();
    const c = this.collection(collection);
    const gone = typeof documentId === 'string' && !store.getDocument(c.id, documentId) ? store.deletion?.(c.id, documentId) : null;
    // Its history outlives it: a deleted document's 404 says when and why (a source sync names its reason).
    if (gone) throw toolError('NOT_FOUND', `Document ${documentId} was deleted from collection "${collection}" at ${gone.at} (${gone.detail ?? 'no detail'})`);
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

  async deleteDocument(collection: string, documentId: string, why?: { jobId?: string | null; reason?: string }): Promise<{ document_id: string; chunks: number }> {
    const store = this.use();
    const c = this.collection(collection);
    await this.registry!.settled(collection);
    const d = this.document(collection, documentId);
    const { version, removedChunkIds } = store.deleteDocument(c.id, d.id, why);
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
    return this.ingestion!.getJob(id);
  }

  listJobs(q: { collection?: string; collections?: readonly string[]; status?: JobStatus; offset?: number; limit?: number } = {}): Page<JobRecord> {
    this.use();
    return this.ingestion!.listJobs(q);
  }

  cancelJob(id: string): JobRecord | Promise<JobRecord> {
    this.use();
    return this.ingestion!.cancelJob(id);
  }

  subscribe(jobId: string, listener: (e: JobEvent) => void): () => void {
    this.use();
    return this.ingestion!.subscribe(jobId, listener);
  }

  async waitForJob(jobId: string, ms: number, signal?: AbortSignal): Promise<JobRecord> {
    this.use();
    return this.ingestion!.waitForJob(jobId, ms, signal);
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
          {
            collection: c,
            store,
            indexes: { lexical: ix.lexical, dense: ix.dense },
            lexicalOffload: (query, k, ids, language, signal) => this.searchPool.search(ix.lexical, query, k, language, ids, signal),
            models: this.deps.models,
            publicText: this.publicText,
          },
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
      const { queue: r, role, worker } = this.ingestion!.stats();
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
        role,
        queue: r.queue,
        ...(worker ? { worker } : {}),
        searches: { ...this.searches.stats(), workers: this.searchPool.stats() },
        local_files: this.deps.config.allowedDirs.length > 0 ? 'ALLOWED_DIRS' : 'off (set ALLOWED_DIRS; over MCP stdio the client roots serve)',
      };
    } catch (err) {
      return { available: false, reason: isToolError(err) ? err.message : 'knowledge base store failed' };
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.ingestion?.close();
    // Persists the open indexes (after the last commit, before the bus goes).
    await this.registry?.close();
    await this.searchPool.shutdown();
    // A bus handed in (tests sharing one) belongs to its giver.
    if (this.bus !== this.deps.bus) await this.bus.close();
    this.store?.close();
  }

  // ---- internals ----

  private use(): KbStoreApi {
    if (!this.store) throw this.unavailable!;
    if (this.closed) throw toolError('SHUTTING_DOWN', 'The server is stopping');
    return this.store;
  }

  private collection(name: string): CollectionRecord {
    const store = this.use();
    if (!isCollectionName(name)) throw toolError('NOT_FOUND', `Collection ${JSON.stringify(String(name).slice(0, 80))} not found`);
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
}
