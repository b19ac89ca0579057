/** The two versions save-loop.ts writes, and how to tell them apart. */
import { createHash } from 'node:crypto';
import type { Chunk } from '../../src/retrieval/types.ts';

export const DIM = 16;
export const COUNT = 3000;
export const EMBEDDER = 'test:kill';

export const contentOf = (v: number) => createHash('sha256').update(`version ${v}`).digest('hex');

export function versionData(v: number) {
  const chunks: Chunk[] = Array.from({ length: COUNT }, (_, i) => ({
    text: `version ${v} chunk ${i} ${'lorem ipsum '.repeat(12)}`,
    chunk_index: i,
    total_chunks: COUNT,
    importance_score: 0.5,
    content_type: 'text',
    doc_type: 'text',
    page_start: null,
    page_end: null,
    char_start: i * 200,
    char_end: i * 200 + 150,
    heading_path: [],
  }));
  let s = v + 1;
  const r = () => ((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32) * 2 - 1;
  const vectors = chunks.map(() => {
    const x = Float32Array.from({ length: DIM }, r);
    const n = Math.hypot(...x);
    return x.map((y) => y / n);
  });
  // A cheap graph, so most of a save's time is spent writing files, where the kills should land.
  return { chunks, vectors, embedderId: EMBEDDER, dimension: DIM, contentSha256: contentOf(v), hnsw: { M: 4, efConstruction: 10, ef: 50 } };
}
