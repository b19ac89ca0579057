/**
 * Search over a knowledge-base collection: the same ranking as retrieve_chunks, at collection scale.
 *
 * The collection's own indexes give the first-stage candidates (BM25 over every live chunk with
 * exact global statistics; HNSW when the collection has an embedder the model layer can load),
 * with the filters applied as an id predicate from the store. Only those few candidates are read
 * from SQLite, and the ranking core's rank() (src/retrieval/search.ts) runs over those candidate
 * lists at local positions; so RRF, the queued
 * cross-encoder rerank, the diversity filter and the explain trace (with rank changes) are exactly
 * those of retrieve_chunks. Then each hit gets its document, optional reading context
 * (hit-context.ts) and the answer a confidence level (confidence.ts); 'none' returns no results
 * and says so plainly rather than returning the least bad noise.
 */
import { toolError } from '../errors.ts';
import type { ScoredIndex } from '../retrieval/bm25.ts';
import { DEFAULT_TOP_K, type ModelLayer } from '../retrieval/contracts.ts';
import { COLLECTION_MAX_TOP_K } from '../contract/search-limits.ts';
import { queryLanguage } from '../retrieval/query-language.ts';
import { candidateDepth, type RetrievalMode } from '../retrieval/search.ts';
import type { Analyzer } from '../retrieval/tokenizer.ts';
import type { QueryTerm } from './confidence.ts';
import { queryTerms as termsOfQuery, rankAnswer, rerankChoice, termHash, traceWithRefs } from './search-answer.ts';
import { ContextReader, contextBudget, hitContext } from './hit-context.ts';
import type { CollectionHit, CollectionRecord, CollectionSearchRequest, CollectionSearchResult, DocumentRecord, KbStoreApi } from './types.ts';

/** Results per search: default 5 (as retrieve_chunks), at most 50. */
/** Up to 100, so an evaluation can measure Recall@100 through the API (retrieve_chunks stops at 20): the contract's limit. */
export { COLLECTION_MAX_TOP_K };
/** group_by document: chunks ranked per document wanted (documents of a collection average ~1-3 chunks in the top). */
const GROUP_CHUNKS_PER_DOCUMENT = 3;
const GROUP_MAX_CHUNKS = 400;
const LEVEL_ORDER = ['none', 'low', 'medium', 'high'] as const;
/** Failed documents listed in `errors` at most. */
const MAX_LISTED_ERRORS = 50;

type IdFilter = (id: number) => boolean;
type IdHit = { id: number; score: number };

/** What the search needs of a collection's lexical index (CollectionLexicalIndex satisfies it). */
export interface CollectionLexicalSearch {
  readonly size: number;
  readonly analyzer: Analyzer;
  search(query: string, k: number, filter?: IdFilter, language?: string): IdHit[];
  /** Sorted distinct FNV-1a term hashes of a chunk (as Bm25Index.termIds). */
  termIds(id: number): Int32Array;
  /** Live chunks containing an analyzed term (confidence weighs query terms by idf). */
  docFreq(term: string): number;
}

/** What the search needs of a collection's dense index (CollectionDenseIndex satisfies it). */
export interface CollectionDenseSearch {
  search(vector: Float32Array, k: number, filter?: IdFilter): IdHit[] | Promise<IdHit[]>;
}

export interface CollectionSearchDeps {
  collection: CollectionRecord;
  store: Pick<KbStoreApi, 'getChunks' | 'documentChunks' | 'chunkIdsWhere' | 'getDocument' | 'listDocuments' | 'documentLanguages' | 'failedDocuments' | 'documentsByIds'>;
  indexes: { lexical: CollectionLexicalSearch; dense: CollectionDenseSearch | null };
  /**
   * The lexical top k from a search worker thread (search-pool.ts), or null: search here.
   * `ids`: the chunks the filters allow (null: all).
   */
  lexicalOffload?: (query: string, k: number, ids: ReadonlySet<number> | null, language: string | undefined, signal: AbortSignal) => Promise<IdHit[]> | null;
  models: ModelLayer | null;
  /** Rewrites client-visible reasons (e.g. redacting paths); identity by default. */
  publicText?: (s: string) => string;
}

const ms = (t0: number) => Math.round((performance.now() - t0) * 100) / 100;

/** The query's terms over the collection (confidence): one definition, in search-answer.ts. */
export function queryTerms(lexical: CollectionLexicalSearch, query: string, language?: string): QueryTerm[] {
  return termsOfQuery(lexical, query, language);
}
export { termHash };

/**
 * Filter id sets by (collection, version, filters): every change of chunks or of the document
 * fields filters read (source, language) commits a new collection version, so an entry is exact
 * while its version is current. Bounded: a few recent filters, sets up to FILTER_CACHE_MAX_IDS.
 */
const FILTER_CACHE_ENTRIES = 16;
const FILTER_CACHE_MAX_IDS = 200_000;
/** Per store (two stores, e.g. two data folders in one process, never share entries). */
const filterCaches = new WeakMap<object, Map<string, Set<number>>>();

function filterIds(deps: CollectionSearchDeps, filters: NonNullable<CollectionSearchRequest['filters']>): Set<number> {
  const { collection } = deps;
  // created_at too: a deleted collection's id may be reused by a new one.
  const key = `${collection.id}:${collection.created_at}:${collection.version}:${JSON.stringify(filters, Object.keys(filters).sort())}`;
  let filterCache = filterCaches.get(deps.store);
  if (!filterCache) filterCaches.set(deps.store, (filterCache = new Map()));
  const hit = filterCache.get(key);
  if (hit) {
    filterCache.delete(key);
    filterCache.set(key, hit);
    return hit;
  }
  const ids = new Set(deps.store.chunkIdsWhere(collection.id, filters));
  if (ids.size <= FILTER_CACHE_MAX_IDS) {
    filterCache.set(key, ids);
    if (filterCache.size > FILTER_CACHE_ENTRIES) filterCache.delete(filterCache.keys().next().value!);
  }
  return ids;
}

/** Documents per language by (collection, version): a commit is what changes them. */
const languageCaches = new WeakMap<object, Map<string, Record<string, number>>>();
const LANGUAGE_CACHE_ENTRIES = 64;

function documentLanguages(deps: CollectionSearchDeps): Record<string, number> {
  const { collection, store } = deps;
  if (!store.documentLanguages) return {};
  const key = `${collection.id}:${collection.created_at}:${collection.version}`;
  let cache = languageCaches.get(store);
  if (!cache) languageCaches.set(store, (cache = new Map()));
  let hit = cache.get(key);
  if (!hit) {
    hit = store.documentLanguages(collection.id);
    cache.set(key, hit);
    if (cache.size > LANGUAGE_CACHE_ENTRIES) cache.delete(cache.keys().next().value!);
  }
  return hit;
}

function hasFilters(f: CollectionSearchRequest['filters']): f is NonNullable<CollectionSearchRequest['filters']> {
  return !!f && Object.values(f).some((v) => v !== undefined);
}

export async function searchCollection(deps: CollectionSearchDeps, req: CollectionSearchRequest, signal: AbortSignal): Promise<CollectionSearchResult> {
  const tStart = performance.now();
  const { collection, store, indexes, models } = deps;
  const publicText = deps.publicText ?? ((s: string) => s);
  const query = req.query.trim();
  if (!query) throw toolError('VALIDATION_ERROR', 'query must contain text');
  const topK = Math.min(COLLECTION_MAX_TOP_K, Math.max(1, Math.floor(req.top_k ?? DEFAULT_TOP_K)));
  // By document: rank enough chunks that top_k distinct documents survive the grouping.
  const byDocument = req.group_by === 'document';
  const rankTopK = byDocument ? Math.min(GROUP_MAX_CHUNKS, topK * GROUP_CHUNKS_PER_DOCUMENT) : topK;
  const n = candidateDepth(rankTopK);
  const timings: Record<string, number> = {};
  const lexical = indexes.lexical;
  const total = lexical.size;

  // Dense: the collection's embedder, its index and the model layer must all be there.
  const embedder = collection.embedder && indexes.dense ? models?.embedderById(collection.embedder) ?? null : null;
  const denseReady = embedder !== null;
  const denseWhyNot = publicText(
    !collection.embedder
      ? 'the collection has no embeddings (its documents were indexed without an embedding model)'
      : !models
        ? 'no embedding model is configured'
        : !indexes.dense
          ? `the dense index of the collection (${collection.embedder}) is not loaded`
          : `the embedder that indexed the collection (${collection.embedder}) is not available${models.denseUnavailableReason() ? `: ${models.denseUnavailableReason()}` : ''}`,
  );
  if ((req.mode === 'dense' || req.mode === 'hybrid') && !denseReady && total > 0) {
    throw toolError('MODEL_UNAVAILABLE', `mode "${req.mode}" needs an embedding model: ${denseWhyNot}`);
  }
  const mode: RetrievalMode = req.mode ?? (denseReady ? 'hybrid' : 'lexical');

  const reranking = rerankChoice(models, req.rerank, publicText);

  // Filters -> an id predicate.
  let filter: IdFilter | undefined;
  let filterSet: ReadonlySet<number> | null = null;
  let filtered: number | null = null;
  if (hasFilters(req.filters)) {
    const t0 = performance.now();
    const ids = filterIds(deps, req.filters);
    filtered = ids.size;
    filterSet = ids;
    filter = (id) => ids.has(id);
    timings.filter_ms = ms(t0);
  }

  // The query's language (its rules must meet the chunks' own); see query-language.ts.
  const language = mode !== 'dense' && lexical.analyzer.options.languages ? queryLanguage(query, documentLanguages(deps)) : undefined;

  // First stage over the collection.
  let lexHits: IdHit[] | null = null;
  let denseHits: IdHit[] | null = null;
  const searchable = total > 0 && filtered !== 0;
  if (mode !== 'dense') {
    const t0 = performance.now();
    const offloaded = searchable ? deps.lexicalOffload?.(query, n, filterSet, language, signal) : null;
    lexHits = offloaded ? await offloaded : searchable ? lexical.search(query, n, filter, language) : [];
    timings.lexical_ms = ms(t0);
  }
  if (mode !== 'lexical') {
    if (searchable) {
      const t0 = performance.now();
      const [vector] = await embedder!.embed([query], 'query', signal);
      timings.embed_ms = ms(t0);
      const t1 = performance.now();
      denseHits = await indexes.dense!.search(vector, n, filter);
      timings.dense_ms = ms(t1);
    } else denseHits = [];
  }
  signal.throwIfAborted();

  // The candidates' rows, at local positions.
  const t0 = performance.now();
  const wanted = [...new Set([...(lexHits ?? []).map((h) => h.id), ...(denseHits ?? []).map((h) => h.id)])];
  const rows = store.getChunks(wanted);
  timings.fetch_ms = ms(t0);
  const pos = new Map<number, number>(rows.map((c, i) => [c.id, i]));
  const local = (hits: IdHit[]): ScoredIndex[] => hits.filter((h) => pos.has(h.id)).map((h) => ({ index: pos.get(h.id)!, score: h.score }));
  // Fusion, rerank, diversity, confidence and trace: the same code as retrieve_chunks'.
  const res = await rankAnswer(
    { lexical: lexHits ? local(lexHits) : null, dense: denseHits ? local(denseHits) : null },
    {
      query,
      chunks: rows,
      termIds: (i) => lexical.termIds(rows[i].id),
      mode,
      topK: rankTopK,
      candidates: n,
      ...reranking,
      explain: req.explain === true,
      signal,
      statistics: mode !== 'dense' ? lexical : null,
      ...(language !== undefined ? { language } : {}),
      scope: `collection "${collection.name}"`,
      filtered: filtered !== null,
    },
  );
  Object.assign(timings, res.timings);
  let message = res.message;
  if (total === 0) message = `Nothing in collection "${collection.name}" matches "${query}": the collection has no searchable chunks yet.`;
  else if (filtered === 0) message = `Nothing in collection "${collection.name}" matches "${query}": no chunk passes the filters.`;

  // Hits with their documents and context ('none' returns nothing).
  const docs = new Map<string, DocumentRecord | null>();
  const docOf = (id: string) => {
    if (!docs.has(id)) docs.set(id, store.getDocument(collection.id, id));
    return docs.get(id)!;
  };
  const floor = LEVEL_ORDER.indexOf(req.min_confidence ?? 'low');
  let kept = LEVEL_ORDER.indexOf(res.confidence) >= floor ? res.hits : [];
  if (byDocument) {
    const seenDocs = new Set<string>();
    kept = kept.filter((h) => {
      const d = rows[h.index].document_id;
      if (seenDocs.has(d)) return false;
      seenDocs.add(d);
      return true;
    });
  }
  kept = kept.slice(0, topK);
  if (res.confidence !== 'none' && LEVEL_ORDER.indexOf(res.confidence) < floor && res.hits.length > 0) {
    message = `${message} No results are returned: min_confidence is ${req.min_confidence}.`;
  }
  // The hits' documents in one statement (getDocument per hit where the store has no batch read).
  if (store.documentsByIds && kept.length > 0) {
    const ids = [...new Set(kept.map((h) => rows[h.index].document_id))];
    for (const id of ids) docs.set(id, null);
    for (const d of store.documentsByIds(collection.id, ids)) docs.set(d.id, d);
  }
  const tx = performance.now();
  const reader = req.context && req.context !== 'none' ? new ContextReader(store) : null;
  const budget = contextBudget(req.context_chars);
  const results: CollectionHit[] = kept.map((h) => {
    const c = rows[h.index];
    const d = docOf(c.document_id);
    const hit: CollectionHit = {
      chunk_id: c.id,
      document_id: c.document_id,
      source: d?.source ?? '',
      title: d?.title ?? null,
      text: c.text,
      score: h.score,
      page_start: c.page_start,
      page_end: c.page_end,
      heading_path: c.heading_path,
      content_type: c.content_type,
      importance_score: c.importance,
      chunk_index: c.ord,
    };
    if (reader) hit.context = hitContext(reader, c, req.context as 'section' | 'neighbors', budget);
    return hit;
  });
  if (reader) timings.context_ms = ms(tx);

  const tf = performance.now();
  const failed = store.failedDocuments
    ? store.failedDocuments(collection.id, MAX_LISTED_ERRORS)
    : store.listDocuments(collection.id, { status: 'failed', limit: MAX_LISTED_ERRORS }).items;
  timings.errors_ms = ms(tf);
  timings.total_ms = ms(tStart);
  const out: CollectionSearchResult = {
    collection: collection.name,
    query,
    results,
    confidence: total === 0 || filtered === 0 ? 'none' : res.confidence,
    message,
    total_chunks: total,
    filtered_chunks: filtered,
    retrieval: {
      mode,
      embedder: mode === 'lexical' ? null : embedder?.id ?? null,
      reranker: res.reranker.status,
      reranker_model: res.reranker.status === 'used' ? models?.rerankerId() ?? null : null,
      ...(mode === 'lexical' && !req.mode ? { reason: `lexical: ${denseWhyNot}` } : {}),
      ...(res.reranker.reason ? { reranker_reason: publicText(res.reranker.reason) } : {}),
      top_k: topK,
      candidates: n,
      ...(mode !== 'dense' ? { language: language ?? null } : {}),
    },
    errors: failed.map((d) => {
      const error = d.error ?? { code: 'PROCESSING_ERROR', message: 'ingestion failed' };
      return { source: d.source, code: error.code, message: error.message, document_id: d.id, error };
    }),
    timings_ms: timings,
  };
  if (res.trace) out.trace = traceWithRefs(res.trace, (i) => ({ chunk_id: rows[i].id, document_id: rows[i].document_id, chunk_index: rows[i].ord }));
  return out;
}

