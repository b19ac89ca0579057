/**
 * Exact cosine search over L2-normalised vectors held in memory: the dense index when no disk store
 * is configured, and the evaluation's honest baseline.
 */
import type { Embedder } from './types.ts';
import type { ScoredIndex } from './bm25.ts';
import type { DenseSearch } from './search.ts';

export function exactTopK(vectors: readonly Float32Array[], query: ArrayLike<number>, k: number): ScoredIndex[] {
  const scored: ScoredIndex[] = vectors.map((v, index) => {
    let s = 0;
    for (let j = 0; j < v.length; j++) s += v[j] * query[j];
    return { index, score: s };
  });
  scored.sort((a, b) => b.score - a.score || a.index - b.index);
  return scored.slice(0, k);
}

export function exactDenseSearch(embedder: Embedder, vectors: readonly Float32Array[]): DenseSearch {
  return {
    embedderId: embedder.id,
    async search(query: string, k: number, signal?: AbortSignal): Promise<ScoredIndex[]> {
      const [q] = await embedder.embed([query], 'query', signal);
      return exactTopK(vectors, q, k);
    },
  };
}
