/**
 * Building and searching one hnswlib-node cosine index. Building adds points in time slices and
 * yields between them, so indexing a large document never blocks the event loop for long.
 */
import type hnswlibTypes from 'hnswlib-node';
import { yieldToEventLoopEvery } from '../../util/yield.ts';

export type Hnsw = InstanceType<typeof hnswlibTypes.HierarchicalNSW>;

// The native addon loads on first use, not at server start.
let hnswlib: Promise<typeof hnswlibTypes> | undefined;
const loadHnswlib = async () => (await (hnswlib ??= import('hnswlib-node').then((m) => m.default))).HierarchicalNSW;

export interface HnswParams {
  M: number;
  efConstruction: number;
  /** Search breadth; raised to k per query when k is larger. */
  ef: number;
}

/**
 * Measured on random unit vectors (the hardest case: real embeddings have far lower intrinsic
 * dimension): 5,000 x 384-d, M 32 / efConstruction 200 / ef 400 gives recall@10 1.000 against brute
 * force (M 16 / ef 100: 0.69; M 32 / ef 200: 0.98), about 2.5 ms a query. Typical documents hold a
 * few hundred chunks, where ef >= n makes the search exhaustive.
 */
export const DEFAULT_HNSW: Readonly<HnswParams> = Object.freeze({ M: 32, efConstruction: 200, ef: 400 });
export const HNSW_SEED = 100;

export async function buildHnsw(vectors: Float32Array[], dimension: number, params: HnswParams, signal?: AbortSignal): Promise<Hnsw> {
  const HierarchicalNSW = await loadHnswlib();
  const index = new HierarchicalNSW('cosine', dimension);
  index.initIndex(Math.max(1, vectors.length), params.M, params.efConstruction, HNSW_SEED);
  const tick = yieldToEventLoopEvery(10);
  for (let i = 0; i < vectors.length; i++) {
    index.addPoint(Array.from(vectors[i]), i);
    if (await tick()) signal?.throwIfAborted();
  }
  index.setEf(params.ef);
  return index;
}

export async function readHnsw(file: string, dimension: number, ef: number): Promise<Hnsw> {
  const HierarchicalNSW = await loadHnswlib();
  const index = new HierarchicalNSW('cosine', dimension);
  await index.readIndex(file);
  // ef is not stored in the index file.
  index.setEf(ef);
  return index;
}

export function searchHnsw(index: Hnsw, query: ArrayLike<number>, k: number, ef: number): Array<{ chunkIndex: number; score: number }> {
  const count = index.getCurrentCount();
  const n = Math.min(Math.max(0, Math.floor(k)), count);
  if (n === 0) return [];
  index.setEf(Math.max(ef, n));
  const { neighbors, distances } = index.searchKnn(Array.from(query), n);
  return neighbors
    .map((label, i) => ({ chunkIndex: label, score: 1 - distances[i] }))
    .sort((a, b) => b.score - a.score || a.chunkIndex - b.chunkIndex);
}
