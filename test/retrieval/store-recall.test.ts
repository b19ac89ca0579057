import t from 'tap';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { IndexStore } from '../../src/retrieval/store/index-store.ts';
import type { Chunk } from '../../src/retrieval/types.ts';

// Random unit vectors are the hardest case for HNSW (real embeddings cluster); the default
// parameters must still find >= 99% of the exact top 10.
const N = 3000;
const DIM = 96;
const QUERIES = 100;
const K = 10;

function gaussian(seed: number) {
  let s = seed >>> 0;
  const u = () => ((s = (s * 1664525 + 1013904223) >>> 0) + 1) / (2 ** 32 + 1);
  return () => Math.sqrt(-2 * Math.log(u())) * Math.cos(2 * Math.PI * u());
}

function unit(g: () => number): Float32Array {
  const v = Float32Array.from({ length: DIM }, g);
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
}

const dot = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i], 0);

t.test('default HNSW parameters: recall@10 >= 0.99 against brute force, before and after reload', async (t) => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'recall-'));
  t.teardown(() => fs.rm(dir, { recursive: true, force: true }));
  const g = gaussian(7);
  const vectors = Array.from({ length: N }, () => unit(g));
  const queries = Array.from({ length: QUERIES }, () => unit(g));
  const truth = queries.map((q) =>
    vectors
      .map((v, i) => [dot(v, q), i] as const)
      .sort((a, b) => b[0] - a[0])
      .slice(0, K)
      .map(([, i]) => i),
  );
  const chunks: Chunk[] = vectors.map((_, i) => ({
    text: `c${i}`, chunk_index: i, total_chunks: N, importance_score: 0.5, content_type: 'text', doc_type: 'txt',
    page_start: null, page_end: null, char_start: 0, char_end: 0, heading_path: [],
  }));
  const content = createHash('sha256').update('random').digest('hex');

  let maxGap = 0;
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    maxGap = Math.max(maxGap, now - last);
    last = now;
  }, 5);
  const started = performance.now();
  const built = await new IndexStore({ dir }).save('random', { chunks, vectors, embedderId: 'test:random', dimension: DIM, contentSha256: content });
  const buildMs = performance.now() - started;
  clearInterval(timer);

  const recall = (search: (q: Float32Array) => number[]) => {
    let hits = 0;
    queries.forEach((q, i) => (hits += search(q).filter((x) => truth[i].includes(x)).length));
    return hits / (QUERIES * K);
  };
  const r1 = recall((q) => built.searchDense(q, K).map((h) => h.chunkIndex));
  const loaded = await new IndexStore({ dir }).load('random', { embedderId: 'test:random', dimension: DIM, contentSha256: content });
  const qStart = performance.now();
  const r2 = recall((q) => loaded!.searchDense(q, K).map((h) => h.chunkIndex));
  const queryMs = (performance.now() - qStart) / QUERIES;
  t.ok(r1 >= 0.99, `recall@10 after build ${r1}`);
  t.ok(r2 >= 0.99, `recall@10 after reload ${r2}`);
  // Relative to the build's own duration, so a loaded machine slows both alike: a build that did
  // not yield would stall the loop for about all of it.
  t.ok(maxGap < buildMs / 4, `building yields to the event loop (longest stall ${maxGap.toFixed(0)} ms of ${buildMs.toFixed(0)} ms)`);
  t.comment(`${N} x ${DIM}-d random: build+save ${buildMs.toFixed(0)} ms, recall@10 ${r1} / ${r2}, ${queryMs.toFixed(2)} ms per query, longest stall ${maxGap.toFixed(0)} ms`);
});
