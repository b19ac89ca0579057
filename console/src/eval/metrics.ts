/**
 * Evaluation metrics in the browser: the per-query formulas are the server's own, from the
 * contract (src/contract/metrics.ts, no Node imports, so the bundle imports it as is); this file
 * turns search hits into ranked ids, averages over queries and summarises latency.
 */
import { hitAt, mrrAt, ndcgAt, recallAt } from '../../../src/contract/metrics.ts';

import type { CollectionHit } from '../../../src/contract/kb-types.ts';

export { hitAt, mrrAt, ndcgAt, recallAt };

/** Relevance judgements: query id -> (target id -> graded relevance > 0). */
export type Qrels = Map<string, Map<string, number>>;

/** What a search hit says about itself (the contract's collection hit). */
export type HitRef = Pick<CollectionHit, 'chunk_id' | 'document_id' | 'source'>;

/** The last path segment of a source without "upload:", "path:" or the extension: "upload:doc-7.txt" -> "doc-7". */
export function sourceStem(source: string): string {
  const bare = source.replace(/^(upload|path):/, '').replace(/[?#].*$/, '');
  const base = bare.split(/[\\/]/).filter(Boolean).pop() ?? bare;
  let name = base;
  try {
    name = decodeURIComponent(base);
  } catch {
    // keep it as it is
  }
  const dot = name.lastIndexOf('.');
  return dot > 0 ? name.slice(0, dot) : name;
}

/** Every name a hit's document goes by: its id, its source, the source's file name with and without extension. */
export function documentAliases(hit: HitRef): string[] {
  const bare = hit.source.replace(/^(upload|path):/, '');
  const path = bare.replace(/[?#].*$/, '');
  const base = path.split(/[\\/]/).filter(Boolean).pop() ?? path;
  return [...new Set([hit.document_id, hit.source, bare, base, sourceStem(hit.source)])];
}

/**
 * The ranked target ids of one query's hits, de-duplicated in order. level "chunk" ranks chunk ids;
 * level "document" ranks documents, each named by the alias the judgements use (else its id), so
 * several chunks of one document count once, at its best rank, as BEIR ranks documents.
 */
export function rankedTargets(hits: readonly HitRef[], relevant: ReadonlyMap<string, number>, level: 'document' | 'chunk'): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const h of hits) {
    let key: string;
    if (level === 'chunk') key = String(h.chunk_id);
    else key = documentAliases(h).find((a) => relevant.has(a)) ?? h.document_id;
    if (!seen.has(key)) {
      seen.add(key);
      out.push(key);
    }
  }
  return out;
}

export interface VariantMetrics {
  ndcg_at_10: number;
  recall_at_100: number;
  mrr_at_10: number;
  /** Hit@K with the K the user chose. */
  hit_at_k: number;
  k: number;
  queries: number;
}

const round4 = (x: number) => Math.round(x * 10_000) / 10_000;

/** Means over the judged queries (a query without judgements is left out, as the server's harness does). */
export function scoreRuns(ranked: ReadonlyMap<string, readonly string[]>, qrels: Qrels, k: number): VariantMetrics {
  let n = 0;
  const sum = { ndcg: 0, recall: 0, mrr: 0, hit: 0 };
  for (const [qid, rel] of qrels) {
    if (![...rel.values()].some((g) => g > 0)) continue;
    const r = ranked.get(qid) ?? [];
    n++;
    sum.ndcg += ndcgAt(r, rel, 10);
    sum.recall += recallAt(r, rel, 100);
    sum.mrr += mrrAt(r, rel, 10);
    sum.hit += hitAt(r, rel, k);
  }
  const mean = (x: number) => (n === 0 ? 0 : round4(x / n));
  return { ndcg_at_10: mean(sum.ndcg), recall_at_100: mean(sum.recall), mrr_at_10: mean(sum.mrr), hit_at_k: mean(sum.hit), k, queries: n };
}

export interface LatencySummary {
  mean_ms: number;
  p50_ms: number;
  p95_ms: number;
  max_ms: number;
}

/** Nearest-rank percentiles of per-query times. */
export function latencySummary(samples: readonly number[]): LatencySummary {
  if (samples.length === 0) return { mean_ms: 0, p50_ms: 0, p95_ms: 0, max_ms: 0 };
  const s = [...samples].sort((a, b) => a - b);
  const pct = (p: number) => s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
  const r1 = (x: number) => Math.round(x * 10) / 10;
  return { mean_ms: r1(s.reduce((a, b) => a + b, 0) / s.length), p50_ms: r1(pct(50)), p95_ms: r1(pct(95)), max_ms: r1(s[s.length - 1]) };
}
