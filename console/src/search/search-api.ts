// The two public search calls the Search and Evaluate pages make, with the answer types they read:
// POST /v1/collections/{name}/search and POST /v1/documents/retrieve (schemas in openapi/openapi.json).
import { post, seg } from '../api.ts';
import type { CollectionHit, CollectionSearchRequest, CollectionSearchResult, CollectionTrace, RetrievalInfo } from '../../../src/contract/kb-types.ts';
import type { RetrievalMode, RetrievedChunk, RetrieveResult } from '../../../src/contract/retrieval-types.ts';

// The answers' types are the contract's (derived from the schemas the server publishes).
export type { CollectionHit, RetrievalInfo as Retrieval };
export type Mode = RetrievalMode;
export type RetrieveHit = RetrievedChunk;
export type RetrieveAnswer = RetrieveResult;

/** The options the pages set: the part of search_collection's request that retrieve_chunks takes too. */
export type SearchOptions = Pick<CollectionSearchRequest, 'query' | 'top_k' | 'mode' | 'rerank' | 'explain'>;

/** search_collection's answer, its explain trace typed (the schema publishes it as unknown). */
export type CollectionSearchAnswer = Omit<CollectionSearchResult, 'trace'> & { trace?: CollectionTrace };

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
