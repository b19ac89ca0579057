/**
 * The ranking stage of both search tools, after their first stages. search_collection (a
 * collection's indexes, with filters) and retrieve_chunks (the per-document indexes of one call)
 * differ only in where their candidate lists come from; from the candidates on, both run this:
 *   rank()      fusion, rerank, diversity, top_k and the per-stage trace (src/retrieval/search.ts);
 *   confidence  from the first-stage scores, the query's terms and the top hit (confidence.ts);
 *   trace       rank()'s trace with the confidence signals, in the caller's chunk references.
 * So a change to ranking or to confidence is made once and both tools answer alike.
 */
import type { ScoredIndex } from '../retrieval/bm25.ts';
import type { ModelLayer } from '../retrieval/contracts.ts';
import { rank, type Candidates, type RankRequest, type SearchHit, type SearchResult, type SearchTrace, type TraceCandidate } from '../retrieval/search.ts';
import type { Analyzer } from '../retrieval/tokenizer.ts';
import type { RerankFn } from '../retrieval/search.ts';
import { assessConfidence, type ConfidenceSignals, type QueryTerm } from './confidence.ts';
import type { Confidence } from './types.ts';

/** What confidence needs of a lexical index: its size, analyzer and document frequencies. */
export interface TermStatistics {
  readonly size: number;
  readonly analyzer: Analyzer;
  /** Items containing an analyzed term. */
  docFreq(term: string): number;
}

/** FNV-1a, 32-bit: the term hash of CollectionLexicalIndex.termIds. */
export function termHash(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h | 0;
}

function sortedHas(a: Int32Array, x: number): boolean {
  let lo = 0;
  let hi = a.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (a[mid] === x) return true;
    if (a[mid] < x) lo = mid + 1;
    else hi = mid - 1;
  }
  return false;
}

/** The query's distinct analyzed terms with df and idf over the whole index (BM25's idf). */
export function queryTerms(lexical: TermStatistics, query: string, language?: string): QueryTerm[] {
  const n = lexical.size;
  const out: QueryTerm[] = [];
  const seen = new Set<string>();
  // Word by word, so each term knows the word it came from ("invoices", not the stem "invoic").
  for (const raw of query.split(/\s+/)) {
    const word = raw.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, '');
    for (const term of lexical.analyzer.tokenize(raw, language)) {
      if (seen.has(term)) continue;
      seen.add(term);
      const df = lexical.docFreq(term);
      out.push({ term, word: word || term, df, idf: Math.log(1 + (n - df + 0.5) / (df + 0.5)) });
    }
  }
  return out;
}

export interface AnswerRequest extends RankRequest {
  /** The lexical index the query's terms are weighed in (null in dense mode). */
  statistics: TermStatistics | null;
  /** The language whose rules analyze the query (collections detect it; a document's index has its own). */
  language?: string;
  /** How messages name what was searched: 'collection "docs"', 'document "https://..."'. */
  scope: string;
  /** Whether filters narrowed what was searched (messages say "within the filters"). */
  filtered?: boolean;
}

export interface RankedAnswer {
  hits: SearchHit[];
  mode: SearchResult['mode'];
  reranker: SearchResult['reranker'];
  /** rank()'s stages (fusion_ms, rerank_ms, diversity_ms) and confidence_ms. */
  timings: { fusion_ms?: number; rerank_ms?: number; diversity_ms?: number; confidence_ms: number };
  confidence: Confidence;
  message: string;
  signals: ConfidenceSignals;
  /** With explain: rank()'s trace and the confidence signals. */
  trace?: SearchTrace & { confidence: ConfidenceSignals };
}

/**
 * The reranker a search uses, or why none: rerank: false skips it, a missing model makes it
 * unavailable (one sentence, no model paths; get_system_health's features.reranking has the rest).
 */
export function rerankChoice(
  models: ModelLayer | null,
  requested: boolean | undefined,
  publicText: (s: string) => string,
): Pick<RankRequest, 'rerank' | 'rerankAbsent'> {
  if (requested === false) return { rerank: null, rerankAbsent: { status: 'skipped', reason: 'rerank: false was requested' } };
  if (models?.rerankerId()) return { rerank: ((q, p, s) => models.rerank(q, p, s)) satisfies RerankFn };
  const reason = (models?.rerankerUnavailableSummary?.() ?? models?.rerankerUnavailableReason()) || 'no reranker model is configured';
  return { rerank: null, rerankAbsent: { status: 'unavailable', reason: publicText(reason) } };
}

const ms = (t0: number) => Math.round((performance.now() - t0) * 100) / 100;

/** rank() over first-stage candidates, then the answer's confidence. */
export async function rankAnswer(found: Candidates, req: AnswerRequest): Promise<RankedAnswer> {
  const res = await rank(found, req);
  const tc = performance.now();
  const topIndex = res.hits[0]?.index;
  let terms: QueryTerm[] = [];
  let topHasTerm: boolean[] = [];
  const lexical: ScoredIndex[] | null = found.lexical;
  if (lexical && req.statistics) {
    terms = queryTerms(req.statistics, req.query, req.language);
    const topTerms = topIndex !== undefined ? req.termIds(topIndex) : new Int32Array(0);
    topHasTerm = terms.map((t) => sortedHas(topTerms, termHash(t.term)));
  }
  const assessed = assessConfidence({
    collection: '',
    scope: req.scope,
    query: req.query,
    hits: res.hits.length,
    filtered: req.filtered === true,
    lexical: lexical ? { candidates: lexical.length, scores: lexical.map((h) => h.score), terms, topHasTerm, size: req.statistics?.size ?? 0 } : null,
    dense: found.dense ? { topScore: found.dense[0]?.score ?? null } : null,
    rerank: res.reranker.status === 'used' && res.hits[0] ? { topLogit: res.hits[0].score } : null,
  });
  const timings = {} as RankedAnswer['timings'];
  for (const k of ['fusion_ms', 'rerank_ms', 'diversity_ms'] as const) if (res.timings[k] !== undefined) timings[k] = res.timings[k]!;
  timings.confidence_ms = ms(tc);
  const out: RankedAnswer = {
    hits: res.hits,
    mode: res.mode,
    reranker: res.reranker,
    timings,
    confidence: assessed.confidence,
    message: assessed.message,
    signals: assessed.signals,
  };
  if (res.trace) out.trace = { ...res.trace, confidence: assessed.signals };
  return out;
}

/** A trace with positions replaced by the caller's chunk references (duplicate_of too). */
export function traceWithRefs<R extends object>(
  trace: SearchTrace & { confidence: ConfidenceSignals },
  ref: (index: number) => R,
): Omit<SearchTrace, 'candidates'> & { confidence: ConfidenceSignals; candidates: Array<R & Omit<TraceCandidate, 'index' | 'duplicate_of'> & { duplicate_of?: R }> } {
  return {
    ...trace,
    candidates: trace.candidates.map(({ index, duplicate_of, ...c }) => ({
      ...ref(index),
      ...c,
      ...(duplicate_of !== undefined ? { duplicate_of: ref(duplicate_of) } : {}),
    })),
  };
}
