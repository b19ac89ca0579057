/**
 * The ranking core shared by retrieve_chunks, search_collection and the evaluation harness, in two
 * parts:
 *   firstStage: lexical (BM25F) top-N and/or dense top-N, each index type given the query;
 *   rank(candidates): Reciprocal Rank Fusion -> optional cross-encoder rerank -> diversity filter
 *     -> top_k, with timings per stage and, on request, a per-stage trace of every candidate.
 * A caller whose first stage is its own (a collection, with filters and global ids) hands rank()
 * the candidate lists it found; searchChunks runs both parts over one chunk list.
 */
import type { Chunk, RerankOutcome, RerankStatus } from './types.ts';
import type { Bm25Params, LexicalDoc, ScoredIndex } from './bm25.ts';
import { DocumentLexicalIndex } from './document-lexical-index.ts';
import { reciprocalRankFusion, RRF_K } from './fusion.ts';
import { diversify, DEFAULT_DIVERSITY_THRESHOLD } from './diversity.ts';
import type { Analyzer } from './tokenizer.ts';

export type RetrievalMode = 'lexical' | 'dense' | 'hybrid';
export const RETRIEVAL_MODES: readonly RetrievalMode[] = ['lexical', 'dense', 'hybrid'];

/** Candidate depth of each first stage: max(MIN_CANDIDATES, CANDIDATE_FACTOR x top_k). */
export const MIN_CANDIDATES = 20;
export const CANDIDATE_FACTOR = 3;

/** The one place candidate depth is computed (every tool reports it as `retrieval.candidates`). */
export function candidateDepth(topK: number): number {
  return Math.max(MIN_CANDIDATES, CANDIDATE_FACTOR * Math.max(1, Math.floor(topK)));
}

/** Dense top-k over the same chunk list the lexical index was built from. */
export interface DenseSearch {
  readonly embedderId: string;
  search(query: string, k: number, signal?: AbortSignal): Promise<ScoredIndex[]>;
}

/** What the ranking core needs of a lexical index (a DocumentLexicalIndex, or several merged). */
export interface LexicalSearch {
  search(query: string, k: number): ScoredIndex[];
  /** Sorted distinct term hashes of an item, for the diversity filter. */
  termIds(index: number): Int32Array;
}

/** Scores passages for a query; never throws for model trouble: it reports it in the outcome. */
export type RerankFn = (query: string, passages: string[], signal?: AbortSignal) => Promise<RerankOutcome>;

/** What the lexical index sees of a chunk: the heading path as a title field, the text as body (as CollectionLexicalIndex reads it). */
export function lexicalDocOf(chunk: Pick<Chunk, 'text' | 'heading_path'>): LexicalDoc {
  return chunk.heading_path.length > 0 ? { title: chunk.heading_path.join(' \n '), body: chunk.text } : { body: chunk.text };
}

/** The passage a cross-encoder reads: the heading path gives a chunk its context. */
export function passageOf(chunk: Pick<Chunk, 'text' | 'heading_path'>): string {
  return chunk.heading_path.length > 0 ? `${chunk.heading_path.join(' > ')}\n${chunk.text}` : chunk.text;
}

export function buildLexicalIndex(
  chunks: ReadonlyArray<Pick<Chunk, 'text' | 'heading_path'>>,
  analyzer: Analyzer,
  params?: Partial<Bm25Params>,
): DocumentLexicalIndex {
  return DocumentLexicalIndex.build(chunks, analyzer, params);
}

/** buildLexicalIndex in time slices (a document of any size never stalls the event loop). */
export function buildLexicalIndexSliced(
  chunks: ReadonlyArray<Pick<Chunk, 'text' | 'heading_path'>>,
  analyzer: Analyzer,
  params?: Partial<Bm25Params>,
  signal?: AbortSignal,
): Promise<DocumentLexicalIndex> {
  return DocumentLexicalIndex.buildSliced(chunks, analyzer, params, signal);
}

export interface SearchRequest {
  query: string;
  chunks: ReadonlyArray<Pick<Chunk, 'text' | 'heading_path'>>;
  lexical: LexicalSearch;
  mode: RetrievalMode;
  /** Results wanted. The tool clamps it to 1-20; the evaluation asks for 100. */
  topK: number;
  /** Candidates per first stage; default max(20, 3 x topK). */
  candidates?: number;
  dense?: DenseSearch | null;
  /** Present when reranking was asked for and a reranker exists. */
  rerank?: RerankFn | null;
  /** Why rerank is absent ('skipped' when the caller said no, 'unavailable' when there is no model). */
  rerankAbsent?: { status: Extract<RerankStatus, 'skipped' | 'unavailable'>; reason: string };
  /** Overlap threshold of the diversity filter, or false to keep near-duplicates. */
  diversity?: number | false;
  explain?: boolean;
  signal?: AbortSignal;
}

export interface SearchHit {
  index: number;
  /** The final stage's score: rerank logit, else RRF score (hybrid), BM25 (lexical) or cosine (dense). */
  score: number;
  lexical_rank: number | null;
  dense_rank: number | null;
  fused_rank: number;
  rerank_rank: number | null;
}

export interface StageTimings {
  lexical_ms?: number;
  dense_ms?: number;
  fusion_ms?: number;
  rerank_ms?: number;
  diversity_ms?: number;
  total_ms: number;
}

export interface TraceCandidate {
  index: number;
  lexical_rank: number | null;
  lexical_score: number | null;
  dense_rank: number | null;
  dense_score: number | null;
  fused_rank: number;
  fused_score: number;
  rerank_rank: number | null;
  rerank_score: number | null;
  /** fused_rank - rerank_rank: positive when reranking moved the candidate up. */
  rerank_delta: number | null;
  /** 1-based rank in the answer, null when not returned. */
  final_rank: number | null;
  /** Why a candidate that ranked inside top_k before reranking is not in the answer. */
  dropped_reason?: 'duplicate' | 'reranked_out';
  duplicate_of?: number;
}

export interface SearchTrace {
  stages: string[];
  rrf_k: number | null;
  candidates_per_stage: number;
  diversity_threshold: number | null;
  candidates: TraceCandidate[];
  /** Answer compared with the first-stage (fused) top_k. */
  summary: { moved_up: number; moved_down: number; unchanged: number; new: number; dropped: number };
}

export interface SearchResult {
  hits: SearchHit[];
  mode: RetrievalMode;
  reranker: { status: RerankStatus; reason?: string };
  timings: StageTimings;
  trace?: SearchTrace;
}

const ms = (t0: number) => Math.round((performance.now() - t0) * 100) / 100;

/** First-stage candidate lists, best first (null for an index type the mode does not use). */
export interface Candidates {
  lexical: ScoredIndex[] | null;
  dense: ScoredIndex[] | null;
}

/** The first stage over one chunk list: each index type searched with the query, n deep. */
export async function firstStage(
  req: Pick<SearchRequest, 'query' | 'lexical' | 'dense' | 'mode' | 'signal'>,
  n: number,
  timings: StageTimings,
): Promise<Candidates> {
  if (req.mode !== 'lexical' && !req.dense) throw new Error(`mode ${req.mode} needs a dense index`);
  let lexical: ScoredIndex[] | null = null;
  let dense: ScoredIndex[] | null = null;
  if (req.mode !== 'dense') {
    const t0 = performance.now();
    lexical = req.lexical.search(req.query, n);
    timings.lexical_ms = ms(t0);
  }
  if (req.mode !== 'lexical') {
    const t0 = performance.now();
    dense = await req.dense!.search(req.query, n, req.signal);
    timings.dense_ms = ms(t0);
  }
  return { lexical, dense };
}

/** What rank() needs besides the candidates: the passages (by position) and their term ids. */
export interface RankRequest {
  query: string;
  chunks: ReadonlyArray<Pick<Chunk, 'text' | 'heading_path'>>;
  /** Sorted distinct term hashes of the item at a position, for the diversity filter. */
  termIds(index: number): Int32Array;
  mode: RetrievalMode;
  topK: number;
  /** The depth the first stage searched (trace and fusion cut-off). */
  candidates: number;
  rerank?: RerankFn | null;
  rerankAbsent?: SearchRequest['rerankAbsent'];
  diversity?: number | false;
  explain?: boolean;
  signal?: AbortSignal;
}

export async function searchChunks(req: SearchRequest): Promise<SearchResult> {
  const tStart = performance.now();
  const topK = Math.max(1, Math.floor(req.topK));
  const n = Math.max(req.candidates ?? candidateDepth(topK), topK);
  const timings: StageTimings = { total_ms: 0 };
  const found = await firstStage(req, n, timings);
  const lexical = req.lexical;
  const res = await rank(found, { ...req, termIds: (i) => lexical.termIds(i), topK, candidates: n }, timings);
  res.timings.total_ms = ms(tStart);
  return res;
}

/**
 * Fusion, rerank, diversity and top_k over first-stage candidates (positions into req.chunks).
 * Stage timings are added to `timings` (a first stage's are kept); total_ms covers rank() alone
 * unless the caller sets it.
 */
export async function rank(found: Candidates, req: RankRequest, timings: StageTimings = { total_ms: 0 }): Promise<SearchResult> {
  const tStart = performance.now();
  const topK = Math.max(1, Math.floor(req.topK));
  const n = Math.max(req.candidates, topK);
  const { lexical, dense } = found;

  // First stage: fused list (a single list fuses to itself, keeping its own scores).
  const t0 = performance.now();
  const lexRank = rankMap(lexical);
  const denseRank = rankMap(dense);
  let fused: Array<{ index: number; score: number }>;
  if (lexical && dense) {
    fused = reciprocalRankFusion([dense.map((h) => h.index), lexical.map((h) => h.index)], RRF_K).slice(0, n);
    timings.fusion_ms = ms(t0);
  } else {
    fused = (lexical ?? dense ?? []).slice(0, n);
  }

  // Rerank the fused candidates.
  let reranker: SearchResult['reranker'] = req.rerankAbsent ?? { status: 'skipped', reason: 'not requested' };
  let order = fused.map((f, i) => ({ index: f.index, score: f.score, fusedRank: i + 1, rerankRank: null as number | null, rerankScore: null as number | null }));
  if (req.rerank && fused.length > 0) {
    const tr = performance.now();
    const outcome = await req.rerank(req.query, fused.map((f) => passageOf(req.chunks[f.index])), req.signal);
    timings.rerank_ms = ms(tr);
    if (outcome.status === 'used' && outcome.scores && outcome.scores.length === fused.length) {
      const scores = outcome.scores;
      order = order
        .map((o, i) => ({ ...o, rerankScore: scores[i], score: scores[i] }))
        .sort((a, b) => b.score - a.score || a.fusedRank - b.fusedRank)
        .map((o, i) => ({ ...o, rerankRank: i + 1 }));
      reranker = { status: 'used' };
    } else if (outcome.status === 'used') {
      reranker = { status: 'failed', reason: 'reranker returned a wrong number of scores' };
    } else {
      reranker = { status: outcome.status, ...(outcome.reason ? { reason: outcome.reason } : {}) };
    }
  } else if (req.rerank) {
    reranker = { status: 'skipped', reason: 'no candidates' };
  }

  // Diversity filter, then top_k.
  const threshold = req.diversity === false ? null : req.diversity ?? DEFAULT_DIVERSITY_THRESHOLD;
  let kept = order.slice(0, topK);
  let dropped: Array<{ index: number; duplicateOf: number }> = [];
  if (threshold !== null) {
    const td = performance.now();
    const out = diversify(order, (o) => req.termIds(o.index), topK, threshold);
    kept = out.kept;
    dropped = out.dropped.map((d) => ({ index: d.item.index, duplicateOf: d.duplicateOf.index }));
    timings.diversity_ms = ms(td);
  }

  const hits: SearchHit[] = kept.map((o) => ({
    index: o.index,
    score: round(o.score),
    lexical_rank: lexRank.get(o.index)?.rank ?? null,
    dense_rank: denseRank.get(o.index)?.rank ?? null,
    fused_rank: o.fusedRank,
    rerank_rank: o.rerankRank,
  }));
  timings.total_ms = ms(tStart);
  const result: SearchResult = { hits, mode: req.mode, reranker, timings };
  if (req.explain) result.trace = buildTrace(req.mode, order, hits, dropped, lexRank, denseRank, n, threshold, topK);
  return result;
}

function rankMap(list: ScoredIndex[] | null): Map<number, { rank: number; score: number }> {
  const m = new Map<number, { rank: number; score: number }>();
  list?.forEach((h, i) => {
    if (!m.has(h.index)) m.set(h.index, { rank: i + 1, score: h.score });
  });
  return m;
}

const round = (x: number) => Math.round(x * 10_000) / 10_000;

function buildTrace(
  mode: RetrievalMode,
  order: Array<{ index: number; score: number; fusedRank: number; rerankRank: number | null; rerankScore: number | null }>,
  hits: SearchHit[],
  dropped: Array<{ index: number; duplicateOf: number }>,
  lexRank: Map<number, { rank: number; score: number }>,
  denseRank: Map<number, { rank: number; score: number }>,
  n: number,
  threshold: number | null,
  topK: number,
): SearchTrace {
  const finalRank = new Map(hits.map((h, i) => [h.index, i + 1]));
  const dupOf = new Map(dropped.map((d) => [d.index, d.duplicateOf]));
  const stages = [
    ...(mode !== 'dense' ? ['lexical'] : []),
    ...(mode !== 'lexical' ? ['dense'] : []),
    ...(mode === 'hybrid' ? ['fusion'] : []),
    ...(order.some((o) => o.rerankRank !== null) ? ['rerank'] : []),
    ...(threshold !== null ? ['diversity'] : []),
    'top_k',
  ];
  const candidates: TraceCandidate[] = [...order]
    .sort((a, b) => a.fusedRank - b.fusedRank)
    .map((o) => {
      const lex = lexRank.get(o.index);
      const den = denseRank.get(o.index);
      const fr = finalRank.get(o.index) ?? null;
      const c: TraceCandidate = {
        index: o.index,
        lexical_rank: lex?.rank ?? null,
        lexical_score: lex ? round(lex.score) : null,
        dense_rank: den?.rank ?? null,
        dense_score: den ? round(den.score) : null,
        fused_rank: o.fusedRank,
        fused_score: round(mode === 'hybrid' ? rrfScore(lex?.rank, den?.rank) : (lex ?? den)?.score ?? 0),
        rerank_rank: o.rerankRank,
        rerank_score: o.rerankScore === null ? null : round(o.rerankScore),
        rerank_delta: o.rerankRank === null ? null : o.fusedRank - o.rerankRank,
        final_rank: fr,
      };
      if (fr === null && o.fusedRank <= topK) {
        if (dupOf.has(o.index)) {
          c.dropped_reason = 'duplicate';
          c.duplicate_of = dupOf.get(o.index)!;
        } else c.dropped_reason = 'reranked_out';
      } else if (dupOf.has(o.index)) {
        c.dropped_reason = 'duplicate';
        c.duplicate_of = dupOf.get(o.index)!;
      }
      return c;
    });
  const summary = { moved_up: 0, moved_down: 0, unchanged: 0, new: 0, dropped: 0 };
  hits.forEach((h, i) => {
    if (h.fused_rank > topK) summary.new++;
    else if (h.fused_rank > i + 1) summary.moved_up++;
    else if (h.fused_rank < i + 1) summary.moved_down++;
    else summary.unchanged++;
  });
  for (const o of order) if (o.fusedRank <= topK && !finalRank.has(o.index)) summary.dropped++;
  return { stages, rrf_k: mode === 'hybrid' ? RRF_K : null, candidates_per_stage: n, diversity_threshold: threshold, candidates, summary };
}

function rrfScore(lexRank: number | undefined, denseRank: number | undefined): number {
  return (lexRank ? 1 / (RRF_K + lexRank) : 0) + (denseRank ? 1 / (RRF_K + denseRank) : 0);
}
