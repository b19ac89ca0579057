/**
 * The retrieval layer's contracts: limits every retrieval tool shares, the seams the retrieval
 * service and collection search reach the document, model and disk layers through (structural:
 * the real classes satisfy them), and the request/answer types of retrieve_chunks. Modules that
 * only need these import them from here, not from the service that implements them.
 */
import type { CallContext, DocumentSource } from '../call-context.ts';
import type { OcrRequest, ProcessedDocument } from '../extractors/shared/types.ts';
import type { Chunk, RerankOutcome, Embedder } from './types.ts';
import { SEARCH_DEFAULT_TOP_K } from '../contract/search-limits.ts';
import type { RetrievalMode } from './search.ts';
import type { DocumentLexicalIndex } from './document-lexical-index.ts';
import type { Analyzer } from './tokenizer.ts';
import type { Bm25Params } from './bm25.ts';

export const MAX_TOP_K = 20;
/** The contract's default (src/contract/search-limits.ts), shared with search_collection and the console. */
export const DEFAULT_TOP_K = SEARCH_DEFAULT_TOP_K;
export const MAX_DOCUMENTS = 10;

// ---- Seams to the document and model layers (structural: the real classes satisfy them) ----

export interface FetchedFile {
  url?: string;
  sha256: string;
  source: string;
}

export interface DocumentAccess {
  fetch(source: DocumentSource, ctx: CallContext): Promise<FetchedFile>;
  /**
   * Detect and extract. `fetched` is what fetch() returned for this source in the same call; the
   * loader uses it instead of fetching again (DocumentService takes its own FetchedDocument here).
   */
  load(
    source: DocumentSource,
    ctx: CallContext,
    opts?: { fetched?: FetchedFile; ocr?: OcrRequest },
  ): Promise<{ key: string; contentSha256: string; source: string; doc: ProcessedDocument }>;
  /**
   * The document cache's key part for these OCR choices ('' for the server's defaults). Without
   * it, the raw request names the reading (explicit defaults then get a key of their own).
   */
  ocrKeySuffix?(ocr: OcrRequest | undefined): string;
}

/** The model layer (ModelManager): embedders by size or id, and a reranker that never throws. */
export interface ModelLayer {
  embedderFor(chunkCount: number): Embedder | null;
  embedderById(id: string): Embedder | null;
  denseUnavailableReason(): string | null;
  /** The same in one sentence for answers (no paths); the full reason is get_system_health's. */
  denseUnavailableSummary?(): string | null;
  rerank(query: string, passages: string[], signal?: AbortSignal): Promise<RerankOutcome>;
  rerankerId(): string | null;
  rerankerUnavailableReason(): string;
  /** The same in one sentence for answers; the full reason is get_system_health's. */
  rerankerUnavailableSummary?(): string;
}

export interface PersistedIndex {
  readonly chunks: Chunk[];
  /** The lexical index saved with the chunks (loaded, not rebuilt). */
  readonly lexical: DocumentLexicalIndex;
  readonly meta: { embedderId: string | null; dimension: number | null };
  readonly hasDense: boolean;
  readonly approxBytes: number;
  searchDense(queryVector: ArrayLike<number>, k: number): Array<{ chunkIndex: number; score: number }>;
  close(): void;
}

/** The disk store (IndexStore). */
export interface IndexPersistence {
  /** A stored key with this suffix (same content and chunker under another URL), or null. */
  findKeyBySuffix?(suffix: string): Promise<string | null>;
  peekMeta(key: string): Promise<{ embedderId: string | null; dimension: number | null; contentSha256: string } | null>;
  load(
    key: string,
    expect: {
      embedderId: string | null;
      dimension: number | null;
      contentSha256: string;
      /** The caller's analyzer (not bound to a language) and BM25 parameters: a stored lexical index of others is rebuilt. */
      lexical?: { analyzer: Analyzer; bm25?: Partial<Bm25Params> };
    },
    signal?: AbortSignal,
  ): Promise<PersistedIndex | null>;
  save(
    key: string,
    data: {
      chunks: Chunk[];
      vectors?: Float32Array[];
      embedderId: string | null;
      dimension: number | null;
      contentSha256: string;
      lexical?: DocumentLexicalIndex;
      chunkerVersion?: number;
    },
    signal?: AbortSignal,
  ): Promise<PersistedIndex>;
}

/** What the service tells the disk health check (DiskHealth), and asks it before writing. */
export interface DiskState {
  /** The last known answer, without probing. */
  readonly writable: boolean;
  /** A fresh answer when the last one is stale (cheap: results are reused for seconds). */
  check(): Promise<{ writable: boolean }>;
  reportFailure(err: unknown): void;
}


export interface RetrieveRequest {
  sources: DocumentSource[];
  query: string;
  topK?: number;
  mode?: RetrievalMode;
  rerank?: boolean;
  explain?: boolean;
  /** Reading context per hit (as search_collection's): its heading section or its neighbours. */
  context?: 'none' | 'section' | 'neighbors';
  /** Characters of context per hit (default 2,000). */
  contextChars?: number;
  /** OCR choices for every document of the call (scanned PDFs and images). */
  ocr?: OcrRequest;
}

/** One result of retrieve_chunks, and its answer: the contract's types, derived from the wire schemas. */
export type { RetrievedChunk, RetrieveResult } from '../contract/retrieval-types.ts';


/** A document of a multi-document call that could not be searched. */
export type DocumentFailure = { source: string; code: string; message: string };

