/**
 * The first stage of retrieve_chunks over several documents: each document keeps its own indexes,
 * each index type is searched with the query, and the results are merged into one candidate list
 * over the concatenated chunks (item i of part p is at offset_p + i), which the shared ranking
 * stage (src/kb/search-answer.ts) takes as search_collection's candidates.
 * BM25 scores of the same query are merged by score (same formula, per-document statistics);
 * dense scores by cosine when every part was embedded by the same model, else by rank, since
 * cosines of different models are not comparable.
 */
import type { ScoredIndex } from './bm25.ts';
import type { TermStatistics } from '../kb/search-answer.ts';
import type { DenseSearch, LexicalSearch } from './search.ts';

/** A document's lexical index as the first stage and confidence read it (DocumentLexicalIndex). */
export type DocumentLexical = LexicalSearch & TermStatistics;

export interface Part<T> {
  offset: number;
  size: number;
  search: T;
}

function partOf<T>(parts: readonly Part<T>[], index: number): Part<T> {
  for (const p of parts) if (index >= p.offset && index < p.offset + p.size) return p;
  throw new RangeError(`item ${index} is in no part`);
}

/**
 * Confidence weighs the query's terms over all the documents: sizes and document frequencies add
 * up; the query is analyzed by the first document's rules (each document has its language's).
 */
export function mergeLexical(parts: readonly Part<DocumentLexical>[]): DocumentLexical {
  if (parts.length === 1 && parts[0].offset === 0) return parts[0].search;
  return {
    size: parts.reduce((n, p) => n + p.search.size, 0),
    analyzer: parts[0].search.analyzer,
    docFreq(term: string): number {
      return parts.reduce((n, p) => n + p.search.docFreq(term), 0);
    },
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
