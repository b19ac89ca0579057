/**
 * The service container every tool handler reaches through ctx.services. Stateful resources (OCR
 * workers, ONNX sessions, indexes, caches) live here and are closed by close(), called from the
 * app's onClose hook — never in module globals.
 */
import path from 'node:path';
import type { Config } from './config.ts';
import { CacheRegistry } from './cache/cache-registry.ts';
import { DocumentService } from './documents/document-service.ts';
import { ExtractionPool, type ExtractionPoolOptions } from './extraction/extraction-pool.ts';
import { OcrPool } from './extractors/ocr/ocr-pool.ts';
import { RetrievalService } from './retrieval/retrieval-service.ts';
import { ModelManager } from './retrieval/models/model-manager.ts';
import { IndexStore } from './retrieval/store/index-store.ts';
import { DiskHealth, type DiskProbe } from './util/disk-health.ts';
import { sweepDataDirTemp } from './util/temp-sweep.ts';
import pino, { type Logger } from 'pino';
import type { CacheLayerStats } from './cache/ttl-cache.ts';
import type { FeatureStatus, ModelStatus } from './contract/health-schemas.ts';
import { KnowledgeBase } from './kb/knowledge-base.ts';
import type { KbStoreApi, KnowledgeBaseApi } from './kb/types.ts';
import { RedisConnection } from './redis/connection.ts';
import { SharedDownloadCache } from './cache/shared-download-cache.ts';
import { SourceService } from './kb/sources/source-service.ts';

/** A cache kept outside process memory (persisted indexes on disk, downloads in Redis); manage_cache reports and clears it with the memory layers. */
export interface DiskCache {
  name: string;
  /** Removes every entry; resolves to the number removed. */
  clear(): Promise<number>;
  stats?(): Promise<CacheLayerStats>;
}

// What a health reporter says about a capability or a model: the wire contract's types (get_system_health's schema).
export type { FeatureStatus, ModelStatus };

/** A part of the server that reports to get_system_health (OCR, models, retrieval...). */
export interface HealthReporter {
  features?(): Record<string, FeatureStatus> | Promise<Record<string, FeatureStatus>>;
  models?(): ModelStatus[] | Promise<ModelStatus[]>;
}

export interface Services {
  config: Readonly<Config>;
  caches: CacheRegistry;
  startedAt: number;
  /** Disk-backed caches cleared by manage_cache `clear` (empty until a layer registers itself). */
  diskCaches: DiskCache[];
  /** Sections added to get_system_health's features and models. */
  healthReporters: HealthReporter[];
  /** Reused tesseract workers shared by image OCR and scanned PDF pages. */
  ocr: OcrPool;
  /** Child processes that parse untrusted documents, bounded in number and memory. */
  extraction: ExtractionPool;
  /** Download (SSRF-safe), type detection, extraction, with caches and coalescing. */
  documents: DocumentService;
  /** Chunking, indexes (memory, disk), lexical / dense / hybrid search, reranking. */
  retrieval: RetrievalService;
  /** Embedders and the reranker, loaded eagerly in the background (worker threads). */
  models: ModelManager;
  /** Per-document indexes persisted under DATA_DIR/indexes. */
  indexes: IndexStore;
  /** Whether DATA_DIR takes writes (free space, write probe): /health readiness. */
  disk: DiskHealth;
  /** Collections, ingestion jobs and collection search under DATA_DIR/kb (STORAGE_UNAVAILABLE when its store cannot open). */
  kb: KnowledgeBaseApi;
  /** A collection's sources (folders, sites, URL lists) kept in step by syncs, schedules and watchers (src/kb/sources/). */
  sources: SourceService;
  /** The start-up sweep of what killed processes left in DATA_DIR (resolves when done; never rejects). */
  swept: Promise<void>;
  /** The Redis connection when REDIS_URL is set (started by plugins/services.ts), else null: all state in-process. */
  redis: RedisConnection | null;
  close(): Promise<void>;
}

export interface CreateServicesOptions {
  log?: Logger;
  /** Start loading models now (default true); tests that never search may skip it. */
  startModels?: boolean;
  /** Extraction pool tuning beyond config (tests: idle time, hostile extractor modules). */
  extraction?: Partial<Omit<ExtractionPoolOptions, 'ocr' | 'log'>>;
  /** Extract in this process, without the pool: the old path, for benchmarks that compare. */
  inlineExtraction?: boolean;
  /** Replaces the file-system calls of the DATA_DIR probe (tests: a full or read-only disk). */
  diskProbe?: DiskProbe;
  /** Replaces the knowledge base's store (tests: a store whose writes fail as on a full disk). */
  openKbStore?: (dir: string) => KbStoreApi;
}

export function createServices(config: Readonly<Config>, opts: CreateServicesOptions = {}): Services {
  const log = opts.log ?? pino({ level: 'silent' });
  const caches = new CacheRegistry({ ttlMs: config.CACHE_TTL_SECONDS * 1000 });
  const ocr = new OcrPool({
    size: config.OCR_CONCURRENCY,
    cacheDir: path.join(config.dataDir, 'tmp', 'ocr'),
    languages: config.ocrLanguages,
    ...(config.tessdataDir ? { tessdataDir: config.tessdataDir } : {}),
  });
  const extraction = new ExtractionPool({
    concurrency: config.extractConcurrency,
    memoryMb: config.EXTRACT_MEMORY_MB,
    budgetMb: config.maxMemoryMb,
    queueMax: config.EXTRACT_QUEUE_MAX,
    ...opts.extraction,
    ocr,
    log,
  });
  // Only with REDIS_URL; nothing connects (and ioredis is not loaded) until redis.start().
  const redis = config.REDIS_URL
    ? new RedisConnection({ url: config.REDIS_URL, failureMode: config.REDIS_FAILURE_MODE, keyPrefix: config.REDIS_KEY_PREFIX, log })
    : null;
  // The download cache's second tier, shared by every process through Redis (REDIS_CACHE_MAX_BYTES 0: none).
  const sharedDownloads = redis && config.REDIS_CACHE_MAX_BYTES > 0
    ? new SharedDownloadCache({
      redis, ttlMs: config.CACHE_TTL_SECONDS * 1000, maxBytes: config.REDIS_CACHE_MAX_BYTES, maxEntryBytes: config.REDIS_CACHE_MAX_ENTRY_BYTES,
      maxDownloadBytes: config.MAX_DOWNLOAD_BYTES, policy: { allowPrivateNetworks: config.ALLOW_PRIVATE_NETWORKS, allowedHosts: config.allowedHosts }, log,
    })
    : null;
  const documents = new DocumentService({
    config, caches, ocr, ...(opts.inlineExtraction ? {} : { pool: extraction }), ...(sharedDownloads ? { sharedDownloads } : {}),
  });
  const models = new ModelManager({ config, log });
  const disk = new DiskHealth({ dir: config.dataDir, minFreeMb: config.MIN_FREE_DISK_MB, probe: opts.diskProbe });
  void disk.check().then((d) => {
    if (!d.writable) log.error({ event: 'disk.unwritable', reason: d.reason }, 'DATA_DIR does not take writes: indexes stay in memory');
  });
  const indexes = new IndexStore({
    dir: path.join(config.dataDir, 'indexes'),
    onReject: (key, why) => log.warn({ event: 'index.rejected', key, why }, 'stored index not served; it is rebuilt from the document'),
  });
  const swept = Promise.all([indexes.sweepLeftovers(), sweepDataDirTemp(config.dataDir)]).then(
    ([ix, tmp]) => {
      if (ix.removed + ix.restored + tmp.removed > 0) {
        log.info({ event: 'data_dir.swept', removed: ix.removed + tmp.removed, restored: ix.restored }, 'removed what interrupted writes left in DATA_DIR');
      }
    },
    () => undefined,
  );
  const retrieval = new RetrievalService({
    documents, caches, models, store: indexes, disk,
    namedDirs: [['MODELS_DIR', config.modelsDir], ['DATA_DIR', config.dataDir]],
  });
  const kb = new KnowledgeBase({ config, documents, caches, models, log, ...(opts.openKbStore ? { openStore: opts.openKbStore } : {}), namedDirs: [['MODELS_DIR', config.modelsDir], ['DATA_DIR', config.dataDir]] });
  const sources = new SourceService({ config, kb, probe: (url, call) => documents.probe(url, call), log });
  // Schedules, watchers and rescans (SOURCES_SCHEDULER, SOURCES_WATCH); their timers do not hold the process open.
  sources.start();
  // Eager, non-blocking: /health answers while models load; a missing model is remembered, not retried.
  if (opts.startModels !== false) models.start();

  const diskCaches: DiskCache[] = [
    {
      name: 'indexes',
      clear: () => indexes.clear(),
      stats: async () => {
        const s = await indexes.stats();
        return {
          name: 'indexes', entries: s.entries, bytes: s.bytes, max_entries: s.maxEntries, max_bytes: null,
          ttl_seconds: 0, hits: 0, misses: 0, hit_rate: 0, evictions: 0,
        };
      },
    },
  ];
  const healthReporters: HealthReporter[] = [
    {
      features: () => {
        const dense = models.denseUnavailableReason();
        const rerank = models.rerankerUnavailableReason();
        return {
          ocr: { available: true, engine: 'tesseract.js', ...ocr.languageInfo(), max_pages_per_call: config.OCR_MAX_PAGES, ...ocr.stats() },
          lexical_retrieval: { available: true, method: 'BM25 (Porter stemming, title/heading field)' },
          dense_retrieval: dense === null ? { available: true } : { available: false, reason: dense },
          reranking: rerank === '' ? { available: true, model: models.rerankerId() } : { available: false, reason: rerank },
          retrieval_stats: { available: true, ...retrieval.stats(), rerank_queue: models.rerankQueueStats() },
          documents: { available: true, ...documents.stats() },
          extraction_isolation: { available: true, isolation: 'child processes', ...extraction.stats() },
        };
      },
      models: () => models.state().map((m) => ({ ...m, name: m.id })),
    },
    {
      features: async () => {
        const { reason, ...d } = await disk.check();
        const detail = { ...d, indexes_in_memory_only: retrieval.memoryOnlyIndexes };
        return { disk: d.writable ? { available: true, ...detail } : { available: false, reason: reason ?? 'disk: unavailable', ...detail } };
      },
    },
    {
      features: () => {
        const { available, reason, ...detail } = kb.stats();
        return { knowledge_base: available ? { available: true, ...detail } : { available: false, reason: String(reason ?? 'unavailable'), ...detail } };
      },
    },
  ];
  if (redis) healthReporters.push({ features: async () => ({ redis: { ...(await redis.health()) } }) });
  if (sharedDownloads) {
    diskCaches.push(sharedDownloads);
    healthReporters.push({ features: () => ({ shared_download_cache: { ...sharedDownloads.health() } }) });
  }
  return {
    config,
    caches,
    startedAt: Date.now(),
    diskCaches,
    healthReporters,
    ocr,
    extraction,
    documents,
    retrieval,
    models,
    indexes,
    disk,
    kb,
    sources,
    swept,
    redis,
    async close() {
      // Syncs first (they wait on jobs), then jobs: their documents use the extraction pool and OCR until they stop.
      await sources.close();
      await kb.close();
      caches.clear();
      await documents.close();
      await sharedDownloads?.close();
      // Children first: their OCR calls need the OCR pool until they are gone.
      await extraction.close();
      await Promise.all([ocr.close(), models.close()]);
      // Last: whatever closed above may still have spoken to Redis.
      await redis?.close();
    },
  };
}
