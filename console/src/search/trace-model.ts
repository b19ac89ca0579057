/**
 * Turns a search answer's timings and explain trace into what the Search page draws: a waterfall
 * of stages (each bar starts where the previous one ended, as the pipeline runs them in order) and
 * one row per candidate with its rank at each stage and how reranking moved it. Pure functions, so
 * the unit test checks them without a browser.
 */

import type { CollectionTrace, CollectionTraceCandidate } from '../../../src/contract/kb-types.ts';
import type { RetrieveTrace, RetrieveTraceCandidate } from '../../../src/contract/retrieval-types.ts';

/**
 * A candidate of either answer's trace, as the page reads both: retrieve_chunks names it by source,
 * search_collection by chunk and document (both contract types; the rank fields are the same).
 */
export type TraceCandidate = Omit<RetrieveTraceCandidate, 'source' | 'duplicate_of'> &
  Partial<Pick<RetrieveTraceCandidate, 'source'>> &
  Partial<Pick<CollectionTraceCandidate, 'chunk_id' | 'document_id'>>;

/** Either answer's explain trace. */
export type SearchTrace = Omit<RetrieveTrace | CollectionTrace, 'candidates'> & { candidates: TraceCandidate[] };

/** Pipeline order of the stage timings both search answers report (collection: timings_ms; URL: retrieval.timings). */
const STAGE_ORDER = ['load', 'filter', 'lexical', 'embed', 'dense', 'fetch', 'fusion', 'rerank', 'diversity', 'confidence', 'context', 'errors'];

export interface WaterfallBar {
  stage: string;
  start_ms: number;
  ms: number;
}

export interface Waterfall {
  bars: WaterfallBar[];
  total_ms: number;
  /** total minus the named stages: parsing, validation, answer assembly. */
  other_ms: number;
}

export function waterfall(timings: Readonly<Record<string, number | undefined>>): Waterfall {
  const named = Object.keys(timings)
    .filter((k) => k.endsWith('_ms') && k !== 'total_ms' && typeof timings[k] === 'number')
    .map((k) => k.slice(0, -3));
  named.sort((a, b) => rank(a) - rank(b));
  let at = 0;
  const bars: WaterfallBar[] = named.map((stage) => {
    const ms = timings[`${stage}_ms`] as number;
    const bar = { stage, start_ms: at, ms };
    at += ms;
    return bar;
  });
  const total = typeof timings.total_ms === 'number' ? timings.total_ms : at;
  return { bars, total_ms: Math.max(total, at), other_ms: Math.max(0, round2(total - at)) };
}

function rank(stage: string): number {
  const i = STAGE_ORDER.indexOf(stage);
  return i === -1 ? STAGE_ORDER.length : i;
}

const round2 = (x: number) => Math.round(x * 100) / 100;

export type Movement = 'up' | 'down' | 'unchanged' | 'new' | 'dropped' | 'outside';

/**
 * How the answer differs from the fused top_k, per candidate (the same rule as the trace summary):
 * returned and fused inside top_k -> up / down / unchanged by final vs fused rank; returned from
 * outside the fused top_k -> new; fused inside top_k but not returned -> dropped; else outside.
 */
export function movement(c: TraceCandidate, topK: number): Movement {
  if (c.final_rank !== null) {
    if (c.fused_rank > topK) return 'new';
    if (c.fused_rank > c.final_rank) return 'up';
    if (c.fused_rank < c.final_rank) return 'down';
    return 'unchanged';
  }
  return c.fused_rank <= topK ? 'dropped' : 'outside';
}

/** Candidates worth a row: everything returned or dropped, ordered by final rank then fused rank; the rest when `all`. */
export function rankRows(trace: SearchTrace, topK: number, all = false): Array<TraceCandidate & { movement: Movement }> {
  return trace.candidates
    .map((c) => ({ ...c, movement: movement(c, topK) }))
    .filter((c) => all || c.movement !== 'outside')
    .sort((a, b) => (a.final_rank ?? Infinity) - (b.final_rank ?? Infinity) || a.fused_rank - b.fused_rank);
}

/** Counts of each movement among the rows (checks the drawn table against trace.summary). */
export function movementCounts(trace: SearchTrace, topK: number): Record<Movement, number> {
  const out: Record<Movement, number> = { up: 0, down: 0, unchanged: 0, new: 0, dropped: 0, outside: 0 };
  for (const c of trace.candidates) out[movement(c, topK)]++;
  return out;
}
