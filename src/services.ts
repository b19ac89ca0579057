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
  close(): Promise<void>;
}

export function createServices(config: Readonly<Config>): Services {
  const caches = new CacheRegistry({ ttlMs: config.CACHE_TTL_SECONDS * 1000 });
  const ocr = new OcrPool({ size: config.OCR_CONCURRENCY, cacheDir: path.join(config.dataDir, 'tmp', 'ocr') });
  const documents = new DocumentService({ config, caches, ocr });
  const retrieval = new RetrievalService({ documents, caches });
  return {
    config,
    caches,
    startedAt: Date.now(),
    diskCaches: [],
    healthReporters: [],
    ocr,
    documents,
    retrieval,
    async close() {
      caches.clear();
      await documents.close();
      await ocr.close();
    },
  };
}
