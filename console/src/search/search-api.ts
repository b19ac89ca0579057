// The two public search calls the Search and Evaluate pages make, with the answer types they read:
// POST /v1/collections/{name}/search and POST /v1/documents/retrieve (schemas in openapi/openapi.json).
import { post, seg } from '../api.ts';
import type { SearchTrace } from './trace-model.ts';

export type Mode = 'lexical' | 'dense' | 'hybrid';

export interface SearchOptions {
  query: string;
  top_k?: number;
  mode?: Mode;
  rerank?: boolean;
  explain?: boolean;
}

export interface Retrieval {
  mode: Mode;
  embedder: string | null;
  reranker: 'used' | 'unavailable' | 'skipped' | 'failed';
  reranker_model: string | null;
  reason?: string;
  reranker_reason?: string;
  top_k: number;
  candidates: number;
}

export interface CollectionHit {
  chunk_id: number;
  document_id: string;
  source: string;
  title: string | null;
  text: string;
  score: number;
  page_start: number | null;
  page_end: number | null;
  heading_path: string[];
  content_type: string;
  importance_score: number;
  chunk_index: number;
}

export interface CollectionSearchAnswer {
  collection: string;
  query: string;
  results: CollectionHit[];
  confidence: 'high' | 'medium' | 'low' | 'none';
  message: string;
  total_chunks: number;
  filtered_chunks: number | null;
  retrieval: Retrieval;
  errors: { document_id: string; source: string; error: { code: string; message: string } }[];
  timings_ms: Record<string, number>;
  trace?: SearchTrace;
}

export interface RetrieveHit {
  text: string;
  chunk_index: number;
  importance_score: number;
  content_type: string;
  score: number;
  page_start: number | null;
  page_end: number | null;
  heading_path: string[];
  source: string;
}

export interface RetrieveAnswer {
  results: RetrieveHit[];
  total_chunks_indexed: number;
  retrieval: Retrieval & { documents: { source: string; document_type: string; chunks: number; index: string; embedder: string | null }[]; timings: Record<string, number> };
  errors?: { source: string; code: string; message: string }[];
  trace?: SearchTrace;
}

export function searchCollection(name: string, opts: SearchOptions, signal?: AbortSignal): Promise<CollectionSearchAnswer> {
  return post<CollectionSearchAnswer>(`/v1/collections/${seg(name)}/search`, clean(opts), { signal });
}

export function retrieveUrl(url: string, opts: SearchOptions, signal?: AbortSignal): Promise<RetrieveAnswer> {
  return post<RetrieveAnswer>('/v1/documents/retrieve', { document_url: url, ...clean(opts) }, { signal });
}

/** Leaves out unset options, so the server's defaults apply (the schemas refuse unknown or null fields). */
function clean(o: SearchOptions): SearchOptions {
  const out: SearchOptions = { query: o.query };
  if (o.top_k !== undefined) out.top_k = o.top_k;
  if (o.mode !== undefined) out.mode = o.mode;
  if (o.rerank !== undefined) out.rerank = o.rerank;
  if (o.explain !== undefined) out.explain = o.explain;
  return out;
}
