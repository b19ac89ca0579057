/**
 * The service container every tool handler reaches through ctx.services. Stateful resources (OCR
 * workers, ONNX sessions, indexes, caches) live here and are closed by close(), called from the
 * app's onClose hook — never in module globals.
 */
import path from 'node:path';
import type { Config } from './config.ts';
import { CacheRegistry } from './cache/cache-registry.ts';
import { DocumentService } from './documents/document-service.ts';
import { OcrPool } from './extractors/ocr-pool.ts';
import { RetrievalService } from './retrieval/retrieval-service.ts';
import { ModelManager } from './retrieval/models/model-manager.ts';
import { IndexStore } from './retrieval/store/index-store.ts';
import pino, { type Logger } from 'pino';
import type { CacheLayerStats } from './cache/ttl-cache.ts';

/** A cache kept on disk (e.g. persisted indexes); manage_cache reports and clears it with the memory layers. */
export interface DiskCache {
  name: string;
  /** Removes every entry; resolves to the number removed. */
  clear(): Promise<number>;
  stats?(): Promise<CacheLayerStats>;
}

/** Whether an optional capability works here, and why not when it does not. */
export interface FeatureStatus {
  available: boolean;
  reason?: string;
  [detail: string]: unknown;
}

export interface ModelStatus {
  name: string;
  role: string;
  state: string;
  [detail: string]: unknown;
}

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
  /** Download (SSRF-safe), type detection, extraction, with caches and coalescing. */
  documents: DocumentService;
  /** Chunking, indexes (memory, disk), lexical / dense / hybrid search, reranking. */
  retrieval: RetrievalService;
  /** Embedders and the reranker, loaded eagerly in the background (worker threads). */
  models: ModelManager;
  /** Per-document indexes persisted under DATA_DIR/indexes. */
  indexes: IndexStore;
  close(): Promise<void>;
}

export interface CreateServicesOptions {
  log?: Logger;
  /** Start loading models now (default true); tests that never search may skip it. */
  startModels?: boolean;
}

export function createServices(config: Readonly<Config>, opts: CreateServicesOptions = {}): Services {
  const log = opts.log ?? pino({ level: 'silent' });
  const caches = new CacheRegistry({ ttlMs: config.CACHE_TTL_SECONDS * 1000 });
  const ocr = new OcrPool({ size: config.OCR_CONCURRENCY, cacheDir: path.join(config.dataDir, 'tmp', 'ocr') });
  const documents = new DocumentService({ config, caches, ocr });
  const models = new ModelManager({ config, log });
  const indexes = new IndexStore({ dir: path.join(config.dataDir, 'indexes') });
  const retrieval = new RetrievalService({ documents, caches, models, store: indexes });
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
          ocr: { available: true, engine: 'tesseract.js (eng)', ...ocr.stats() },
          lexical_retrieval: { available: true, method: 'BM25 (Porter stemming, title/heading field)' },
          dense_retrieval: dense === null ? { available: true } : { available: false, reason: dense },
          reranking: rerank === '' ? { available: true, model: models.rerankerId() } : { available: false, reason: rerank },
          retrieval_stats: { available: true, ...retrieval.stats(), rerank_queue: models.rerankQueueStats() },
          documents: { available: true, ...documents.stats() },
        };
      },
      models: () => models.state().map((m) => ({ ...m, name: m.id })),
    },
  ];
  return {
    config,
    caches,
    startedAt: Date.now(),
    diskCaches,
    healthReporters,
    ocr,
    documents,
    retrieval,
    models,
    indexes,
    async close() {
      caches.clear();
      await documents.close();
      await Promise.all([ocr.close(), models.close()]);
    },
  };
}
