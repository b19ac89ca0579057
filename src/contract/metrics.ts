/**
 * Ranking metrics as BEIR reports them (pytrec_eval definitions): nDCG@k with graded gains and
 * log2 discounts, Recall@k, MRR@k and Hit@k, per query; the harness averages them over queries.
 */
export interface QueryMetrics {
  ndcg_at_10: number;
  recall_at_100: number;
  mrr_at_10: number;
  hit_at_5: number;
}

export function ndcgAt(ranked: readonly string[], rel: ReadonlyMap<string, number>, k: number): number {
  let dcg = 0;
  for (let i = 0; i < Math.min(k, ranked.length); i++) {
    const g = rel.get(ranked[i]) ?? 0;
    if (g > 0) dcg += g / Math.log2(i + 2);
  }
  const ideal = [...rel.values()].filter((g) => g > 0).sort((a, b) => b - a);
  let idcg = 0;
  for (let i = 0; i < Math.min(k, ideal.length); i++) idcg += ideal[i] / Math.log2(i + 2);
  return idcg === 0 ? 0 : dcg / idcg;
}

export function recallAt(ranked: readonly string[], rel: ReadonlyMap<string, number>, k: number): number {
  const relevant = [...rel.entries()].filter(([, g]) => g > 0).length;
  if (relevant === 0) return 0;
  let found = 0;
  for (const id of ranked.slice(0, k)) if ((rel.get(id) ?? 0) > 0) found++;
  return found / relevant;
}

export function mrrAt(ranked: readonly string[], rel: ReadonlyMap<string, number>, k: number): number {
  for (let i = 0; i < Math.min(k, ranked.length); i++) if ((rel.get(ranked[i]) ?? 0) > 0) return 1 / (i + 1);
  return 0;
}

export function hitAt(ranked: readonly string[], rel: ReadonlyMap<string, number>, k: number): number {
  return mrrAt(ranked, rel, k) > 0 ? 1 : 0;
}

export function queryMetrics(ranked: readonly string[], rel: ReadonlyMap<string, number>): QueryMetrics {
  return {
    ndcg_at_10: ndcgAt(ranked, rel, 10),
    recall_at_100: recallAt(ranked, rel, 100),
    mrr_at_10: mrrAt(ranked, rel, 10),
    hit_at_5: hitAt(ranked, rel, 5),
  };
}

export function meanMetrics(all: readonly QueryMetrics[]): QueryMetrics {
  const keys: Array<keyof QueryMetrics> = ['ndcg_at_10', 'recall_at_100', 'mrr_at_10', 'hit_at_5'];
  const out = { ndcg_at_10: 0, recall_at_100: 0, mrr_at_10: 0, hit_at_5: 0 };
  if (all.length === 0) return out;
  for (const k of keys) out[k] = Math.round((all.reduce((s, m) => s + m[k], 0) / all.length) * 10_000) / 10_000;
  return out;
}
