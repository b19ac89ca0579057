/**
 * Contracts between chunking, lexical search, the model layer (embedders, reranker, HNSW store)
 * and the retrieval pipeline.
 */
import type { Static } from 'typebox';
import type { ChunkSchema, ContentTypeSchema } from './schemas.ts';

export type ChunkContentType = Static<typeof ContentTypeSchema>;

/**
 * A chunk as the pipeline keeps it: the wire shape chunk_document publishes (ChunkSchema: pages,
 * char offsets into the content, heading path) plus the document kind it came from.
 */
export type Chunk = Static<typeof ChunkSchema> & { doc_type: string };

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
