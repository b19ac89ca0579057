/**
 * How sure a collection search is that it found something relevant, from the scores it already
 * has, so an answer can say "nothing here matches" instead of handing back the least bad noise.
 * Deterministic (no model, no randomness) and cheap: the query's analyzed terms, their document
 * frequencies, the top hit's distinct terms and the first-stage scores.
 *
 * Signals
 * - coverage: the share of the query's distinct analyzed terms (stop words gone, stemmed) that the
 *   top hit contains, each weighted by its idf over the collection. A term no chunk contains has
 *   df 0 and so the largest idf: made-up or absent words weigh most, common words least.
 * - mass: the idf the top hit matches, in units of the largest idf the collection can give (a term
 *   in no chunk, log(1 + (N + 0.5) / 0.5)). Coverage alone cannot tell "what is the capital of
 *   australia" (two common words matched, 100% of a light query) from a real question; mass says
 *   how much rare vocabulary the match rests on: ~1 is one rare word, 2.5 several.
 *   Character-trigram terms (other languages) are left out of both: a word counts once.
 * - gap: 1 - median / top over the lexical first-stage scores (reported in the trace).
 * - dense: the cosine of the best dense candidate (L2-normalised embeddings).
 * - rerank: the cross-encoder logit of the top hit (ms-marco cross-encoders: > 0 usually relevant).
 *
 * The rule (first that applies)
 * 1. No hit at all                                                           -> none
 * 2. Lexical stage ran and found no query term in any chunk, and dense either did not run or its
 *    best cosine is under DENSE_FLOOR                                         -> none
 * 3. Dense-only search whose best cosine is under DENSE_FLOOR                 -> none
 * 4. Reranked: top logit >= RERANK_HIGH -> high; >= 0 -> medium; otherwise low, except under
 *    RERANK_NONE with coverage under COVERAGE_MEDIUM (the model and the words both say no) -> none
 * 5. Otherwise the better of the lexical level and the dense level:
 *    lexical: coverage < COVERAGE_NONE or mass < MASS_NONE -> none (a one-word query under
 *             MASS_NONE whose word the top hit holds: low);
 *             coverage >= COVERAGE_HIGH and mass >= MASS_HIGH -> high;
 *             (under MASS_MIN_CHUNKS chunks mass is not read, and high needs gap >= GAP_HIGH)
 *             coverage >= COVERAGE_MEDIUM -> medium; else low.
 *    dense:   cosine >= DENSE_HIGH -> high; >= DENSE_MEDIUM -> medium; >= DENSE_FLOOR -> low.
 *
 * What the levels promise (measured by scripts/bench/confidence.bench.ts: SciFact train queries
 * in domain, XQuAD questions about Wikipedia topics as off-topic questions to the same collection):
 * high: the top hit is relevant about 9 times in 10; medium: more often than not; low: a partial
 * match, read it before trusting it; none: nothing in the collection shares enough with the
 * question, and the search returns no results (unless the caller asks for them with
 * min_confidence: 'none'). Dense thresholds assume small sentence-embedding models
 * (MiniLM / bge-small), whose unrelated pairs sit around 0-0.2.
 */
import { GRAM_MARK } from '../retrieval/tokenizer.ts';
import type { Confidence } from './types.ts';

export const COVERAGE_HIGH = 0.85;
export const COVERAGE_MEDIUM = 0.6;
export const COVERAGE_NONE = 0.3;
export const MASS_HIGH = 2.75;
export const MASS_NONE = 1.1;
/**
 * Mass is read from this many chunks up: in a smaller collection idf cannot tell rare words from
 * common ones (10 chunks: a word in one of them has idf 2.0 of a possible 3.0), so there the
 * levels rest on coverage, and high also on the gap.
 */
export const MASS_MIN_CHUNKS = 1000;
export const GAP_HIGH = 0.3;
export const DENSE_FLOOR = 0.25;
export const DENSE_MEDIUM = 0.5;
export const DENSE_HIGH = 0.7;
export const RERANK_HIGH = 2;
export const RERANK_NONE = -6;

/** An analyzed query term with its document frequency and idf over the (unfiltered) collection. */
export interface QueryTerm {
  term: string;
  /** The query word it came from, as typed (messages show it, not the stem). */
  word?: string;
  df: number;
  idf: number;
}

export interface ConfidenceInput {
  /** The collection searched (messages name it), unless `scope` names what was searched. */
  collection?: string;
  /** How messages name what was searched, e.g. 'document "https://..."' (retrieve_chunks). */
  scope?: string;
  query: string;
  /** Hits the search would return. */
  hits: number;
  /** Whether filters narrowed the collection (the message says "within the filters"). */
  filtered: boolean;
  /** null when the lexical stage did not run (dense mode). */
  lexical: {
    /** First-stage lexical candidates (score > 0). */
    candidates: number;
    /** First-stage BM25 scores, best first. */
    scores: readonly number[];
    /** Query terms (analyzed, distinct) with their idf; absent from the collection: df 0. */
    terms: readonly QueryTerm[];
    /** The query terms the top hit contains. */
    topHasTerm: readonly boolean[];
    /** Live chunks the idf was computed over (N); the unit of `mass`. */
    size?: number;
  } | null;
  /** null when the dense stage did not run. */
  dense: { topScore: number | null } | null;
  /** null when no reranker scored the hits. */
  rerank: { topLogit: number } | null;
}

export interface ConfidenceSignals {
  coverage: number | null;
  mass: number | null;
  gap: number | null;
  dense_top: number | null;
  rerank_top: number | null;
  missing_terms: string[];
}

export interface ConfidenceOutcome {
  confidence: Confidence;
  message: string;
  signals: ConfidenceSignals;
}

const LEVELS: readonly Confidence[] = ['none', 'low', 'medium', 'high'];
const better = (a: Confidence, b: Confidence): Confidence => (LEVELS.indexOf(a) >= LEVELS.indexOf(b) ? a : b);
const r2 = (x: number) => Math.round(x * 100) / 100;
const shown = (t: QueryTerm) => t.word ?? t.term;
const unique = (xs: readonly string[]) => [...new Set(xs)];
const list = (xs: readonly string[], max = 5) => (xs.length <= max ? xs.join(', ') : `${xs.slice(0, max).join(', ')} and ${xs.length - max} more`);

/** Idf-weighted share of the query terms the top hit contains (null without terms). */
export function coverageOf(terms: readonly QueryTerm[], has: readonly boolean[]): number | null {
  let all = 0;
  let got = 0;
  terms.forEach((t, i) => {
    all += t.idf;
    if (has[i]) got += t.idf;
  });
  return all > 0 ? got / all : null;
}

/** Terms a confidence weighs: words, not their character trigrams (a word counts once). */
function wordTerms(terms: readonly QueryTerm[], has: readonly boolean[]): { terms: QueryTerm[]; has: boolean[] } {
  const out: { terms: QueryTerm[]; has: boolean[] } = { terms: [], has: [] };
  terms.forEach((t, i) => {
    if (t.term.startsWith(GRAM_MARK)) return;
    out.terms.push(t);
    out.has.push(has[i] === true);
  });
  // A query of grams only (no word survived analysis) is weighed by its grams.
  return out.terms.length > 0 ? out : { terms: [...terms], has: terms.map((_, i) => has[i] === true) };
}

/** Matched idf of the top hit over the largest idf a collection of `size` chunks gives. */
export function massOf(terms: readonly QueryTerm[], has: readonly boolean[], size: number): number | null {
  if (!(size > 0) || terms.length === 0) return null;
  const unit = Math.log(1 + (size + 0.5) / 0.5);
  let got = 0;
  terms.forEach((t, i) => {
    if (has[i]) got += t.idf;
  });
  return got / unit;
}

/** 1 - median/top of first-stage scores (median of those after the top); 1 with one candidate. */
export function gapOf(scores: readonly number[]): number | null {
  if (scores.length === 0 || !(scores[0] > 0)) return null;
  const rest = scores.slice(1);
  if (rest.length === 0) return 1;
  const sorted = [...rest].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  return Math.max(0, 1 - median / scores[0]);
}

export function assessConfidence(input: ConfidenceInput): ConfidenceOutcome {
  const where = `${input.scope ?? `collection "${input.collection ?? ''}"`}${input.filtered ? ' (within the filters)' : ''}`;
  const q = input.query.length > 80 ? `${input.query.slice(0, 77)}...` : input.query;
  const lex = input.lexical;
  const words = lex ? wordTerms(lex.terms, lex.topHasTerm) : null;
  const coverage = words ? coverageOf(words.terms, words.has) : null;
  const mass = words && lex?.size !== undefined ? massOf(words.terms, words.has, lex.size) : null;
  const massCounts = mass !== null && (lex?.size ?? 0) >= MASS_MIN_CHUNKS;
  const gap = lex ? gapOf(lex.scores) : null;
  const denseTop = input.dense?.topScore ?? null;
  const rerankTop = input.rerank?.topLogit ?? null;
  const missing = words ? unique(words.terms.filter((t) => t.df === 0).map(shown)) : [];
  const signals: ConfidenceSignals = {
    coverage: coverage === null ? null : r2(coverage),
    mass: mass === null ? null : r2(mass),
    gap: gap === null ? null : r2(gap),
    dense_top: denseTop === null ? null : r2(denseTop),
    rerank_top: rerankTop === null ? null : r2(rerankTop),
    missing_terms: missing,
  };
  const none = (why: string): ConfidenceOutcome => ({ confidence: 'none', message: `Nothing in ${where} matches "${q}": ${why}.`, signals });
  const denseWeak = input.dense === null || denseTop === null || denseTop < DENSE_FLOOR;
  const denseWords = input.dense === null ? '' : denseTop === null ? ', and no passage is close in meaning' : `, and the closest passage in meaning is weak (cosine ${r2(denseTop)})`;

  // 1-3: nothing found.
  if (input.hits === 0) {
    if (lex && lex.terms.length === 0) return none('the query has no searchable words (only stop words or punctuation)');
    if (lex && lex.candidates === 0) return none(`no chunk contains any of its terms (${list(unique(lex.terms.map(shown)))})${denseWords}`);
    return none('no chunk was found');
  }
  if (lex && lex.candidates === 0 && denseWeak) {
    return none(lex.terms.length === 0 ? `the query has no searchable words${denseWords}` : `no chunk contains any of its terms (${list(unique(lex.terms.map(shown)))})${denseWords}`);
  }
  if (!lex && denseWeak) return none(`the closest passage in meaning is weak (cosine ${denseTop === null ? 'n/a' : r2(denseTop)})`);

  // 4: the cross-encoder's verdict on the top hit.
  if (rerankTop !== null) {
    if (rerankTop < RERANK_NONE && (coverage === null || coverage < COVERAGE_MEDIUM)) {
      return none(`the reranker scores even the best candidate as irrelevant (logit ${r2(rerankTop)})`);
    }
    const level: Confidence = rerankTop >= RERANK_HIGH ? 'high' : rerankTop >= 0 ? 'medium' : 'low';
    const words =
      level === 'high' ? 'the reranker judges the top hit clearly relevant' : level === 'medium' ? 'the reranker judges the top hit likely relevant' : 'the reranker judges even the top hit unlikely to be relevant';
    return { confidence: level, message: `${cap(level)} confidence: ${words} (logit ${r2(rerankTop)}${coverage === null ? '' : `; it contains ${pct(coverage)} of the query's weight`}).`, signals };
  }

  // 5: words and meaning.
  let lexLevel: Confidence = 'none';
  // A one-word query can never reach MASS_NONE (one word is at most ~1 unit): a chunk holding that
  // word is a real match, so it is low, not none ("nothing matches" would be false).
  const lightMass = massCounts && mass! < MASS_NONE;
  const oneWord = words !== null && words.terms.length === 1;
  const weak = coverage !== null && (coverage < COVERAGE_NONE || (lightMass && !oneWord));
  if (coverage !== null && lex && lex.candidates > 0 && !weak) {
    if (lightMass) lexLevel = 'low';
    else if (coverage >= COVERAGE_HIGH && (massCounts ? mass! >= MASS_HIGH : (gap ?? 0) >= GAP_HIGH)) lexLevel = 'high';
    else if (coverage >= COVERAGE_MEDIUM) lexLevel = 'medium';
    else lexLevel = 'low';
  }
  let denseLevel: Confidence = 'none';
  if (denseTop !== null) denseLevel = denseTop >= DENSE_HIGH ? 'high' : denseTop >= DENSE_MEDIUM ? 'medium' : denseTop >= DENSE_FLOOR ? 'low' : 'none';
  const level = better(lexLevel, denseLevel);
  if (level === 'none') {
    if (weak && coverage !== null) {
      return none(
        `nothing relevant was found: the best match contains only ${pct(coverage)} of the query's weight${massCounts && mass! < MASS_NONE ? ', and only common words' : ''}${missing.length > 0 ? `; no chunk contains ${list(missing)}` : ''}${denseWords}`,
      );
    }
    return none('nothing relevant was found: no chunk shares enough with the query');
  }
  const parts: string[] = [];
  if (coverage !== null) {
    parts.push(`the top hit contains ${pct(coverage)} of the query's weight`);
    if (massCounts) parts.push(`${mass! >= MASS_HIGH ? 'several rare terms' : 'few rare terms'} of the query match`);
    else if (gap !== null) parts.push(`it scores ${gap >= GAP_HIGH ? 'well above' : 'close to'} the other candidates`);
    if (missing.length > 0) parts.push(`no chunk contains ${list(missing)}`);
  }
  if (denseTop !== null) parts.push(`closest passage in meaning: cosine ${r2(denseTop)}`);
  const head = level === 'low' ? 'Low confidence, only a partial match' : `${cap(level)} confidence`;
  return { confidence: level, message: `${head}: ${parts.join('; ')}.`, signals };
}

const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
const pct = (x: number) => `${Math.round(x * 100)}%`;
