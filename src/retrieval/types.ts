/**
 * Contracts between chunking, lexical search, the model layer (embedders, reranker, HNSW store)
 * and the retrieval pipeline.
 */
export type ChunkContentType = 'table' | 'list' | 'heading' | 'text';

export interface Chunk {
  text: string;
  chunk_index: number;
  total_chunks: number;
  importance_score: number;
  content_type: ChunkContentType;
  doc_type: string;
  /** Page (or slide / sheet) range from the extractor's page map; null when the format has none. */
  page_start: number | null;
  page_end: number | null;
  /**
   * Char offsets [char_start, char_end) into the document content; for spreadsheets (xlsx, xls,
   * csv), whose content is a preview, into the chunk texts joined by blank lines.
   */
  char_start: number;
  char_end: number;
  /** Markdown heading path leading to this chunk, outermost first. */
  heading_path: string[];
}

export type EmbedKind = 'query' | 'passage';

export interface Embedder {
  /** Stable id, e.g. "onnx:Xenova/all-MiniLM-L6-v2:q8" or "http:nomic-embed-text". */
  readonly id: string;
  readonly dimension: number;
  /** L2-normalised vectors, one per text, in order. Never fabricated: throws on failure. */
  embed(texts: string[], kind: EmbedKind, signal?: AbortSignal): Promise<Float32Array[]>;
  close?(): Promise<void>;
}

export interface Reranker {
  readonly id: string;
  /** Raw cross-encoder logits, one per passage, in order. */
  score(query: string, passages: string[], signal?: AbortSignal): Promise<number[]>;
  close?(): Promise<void>;
}

export type RerankStatus = 'used' | 'unavailable' | 'skipped' | 'failed';

export interface RerankOutcome {
  status: RerankStatus;
  /** Present when status is 'used'. */
  scores?: number[];
  reason?: string;
}
