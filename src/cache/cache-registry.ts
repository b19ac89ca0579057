/**
 * The three cache layers: download (URL -> bytes), document (key -> ProcessedDocument) and
 * retriever (key -> in-memory search index). All bounded by entries and TTL; downloads and
 * indexes by bytes too (an index reports its size as approxBytes).
 */
import { TtlCache, type CacheLayerStats } from './ttl-cache.ts';
import type { ProcessedDocument } from '../extractors/shared/types.ts';

export interface DownloadedFile {
  bytes: Buffer;
  contentType?: string;
  contentDisposition?: string;
  filename?: string;
  /** The final URL after redirects. */
  finalUrl?: string;
  /** sha256 of bytes, hex. */
  sha256: string;
  /** The response's Cache-Control: no-store or private keep it out of the shared (Redis) tier. */
  cacheControl?: string;
}

/** Anything the retrieval layer keeps per document; it may hold native resources. */
export interface RetrieverEntry {
  /** Memory held, for the layer's byte bound; read once, when the entry is stored. */
  approxBytes?: number;
  close?(): void;
}

export interface CacheRegistryOptions {
  ttlMs: number;
  downloadMaxEntries?: number;
  downloadMaxBytes?: number;
  documentMaxEntries?: number;
  retrieverMaxEntries?: number;
  /** Bytes of indexes kept in memory (their approxBytes). Default 512 MiB. */
  retrieverMaxBytes?: number;
}

export class CacheRegistry {
  readonly download: TtlCache<DownloadedFile>;
  readonly document: TtlCache<ProcessedDocument>;
  readonly retriever: TtlCache<RetrieverEntry>;

  constructor(opts: CacheRegistryOptions) {
    this.download = new TtlCache<DownloadedFile>({
      name: 'download',
      maxEntries: opts.downloadMaxEntries ?? 50,
      maxBytes: opts.downloadMaxBytes ?? 500 * 1024 * 1024,
      sizeOf: (f) => f.bytes.byteLength,
      ttlMs: opts.ttlMs,
    });
    this.document = new TtlCache<ProcessedDocument>({
      name: 'document',
      maxEntries: opts.documentMaxEntries ?? 50,
      ttlMs: opts.ttlMs,
    });
    this.retriever = new TtlCache<RetrieverEntry>({
      name: 'retriever',
      maxEntries: opts.retrieverMaxEntries ?? 20,
      maxBytes: opts.retrieverMaxBytes ?? 512 * 1024 * 1024,
      sizeOf: (entry) => entry.approxBytes ?? 0,
      ttlMs: opts.ttlMs,
      onDispose: (entry) => entry.close?.(),
    });
  }

  layers(): TtlCache<object>[] {
    return [this.download, this.document, this.retriever] as TtlCache<object>[];
  }

  stats(): CacheLayerStats[] {
    return this.layers().map((l) => l.stats());
  }

  /** Clears every memory layer; returns evicted entry counts per layer. */
  clear(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const l of this.layers()) out[l.name] = l.clear();
    return out;
  }
}
