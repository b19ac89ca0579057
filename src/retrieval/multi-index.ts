/**
 * Searching several documents as one: each document keeps its own indexes, and their results are
 * merged into one candidate list over the concatenated chunks (item i of part p is at offset_p + i).
 * BM25 scores of the same query are merged by score (same formula, per-document statistics);
 * dense scores by cosine when every part was embedded by the same model, else by rank, since
 * cosines of different models are not comparable.
 */
import type { ScoredIndex } from './bm25.ts';
import type { DenseSearch, LexicalSearch } from './search.ts';

export interface Part<T> {
  offset: number;
  size: number;
  search: T;
}

function partOf<T>(parts: readonly Part<T>[], index: number): Part<T> {
  for (const p of parts) if (index >= p.offset && index < p.offset + p.size) return p;
  throw new RangeError(`item ${index} is in no part`);
}

export function mergeLexical(parts: readonly Part<LexicalSearch>[]): LexicalSearch {
  if (parts.length === 1 && parts[0].offset === 0) return parts[0].search;
  return {
    search(query: string, k: number): ScoredIndex[] {
      const all: ScoredIndex[] = [];
      for (const p of parts) for (const h of p.search.search(query, k)) all.push({ index: h.index + p.offset, score: h.score });
      return all.sort((a, b) => b.score - a.score || a.index - b.index).slice(0, k);
    },
    termIds(index: number): Int32Array {
      const p = partOf(parts, index);
      return p.search.termIds(index - p.offset);
    },
  };
}

export function mergeDense(parts: readonly Part<DenseSearch>[]): DenseSearch {
  if (parts.length === 1 && parts[0].offset === 0) return parts[0].search;
  const ids = [...new Set(parts.map((p) => p.search.embedderId))];
  const sameModel = ids.length === 1;
  return {
    embedderId: ids.join(','),
    async search(query: string, k: number, signal?: AbortSignal): Promise<ScoredIndex[]> {
      const lists = await Promise.all(parts.map(async (p) => (await p.search.search(query, k, signal)).map((h) => ({ index: h.index + p.offset, score: h.score }))));
      if (sameModel) return lists.flat().sort((a, b) => b.score - a.score || a.index - b.index).slice(0, k);
      // Interleave by rank: every document's best first, then every second best, ...
      const out: ScoredIndex[] = [];
      for (let r = 0; out.length < k && lists.some((l) => l.length > r); r++) {
        const tier = lists.filter((l) => l.length > r).map((l) => l[r]);
        tier.sort((a, b) => b.score - a.score || a.index - b.index);
        out.push(...tier);
      }
      return out.slice(0, k);
    },
  };
}
