/**
 * Index catch-up on a shared DATA_DIR (issue 12), with the real KbStore and CollectionIndexes and
 * two SQLite connections on one file (a worker commits, an API process holds the indexes):
 *  1. catching up open indexes by N new chunks (one new document) in a collection of C chunks;
 *  2. opening from a snapshot that is N chunks behind (load + catch-up) against a rebuild from
 *     the store at the same version;
 *  3. the longest event-loop stall while the catch-up runs (a 1 ms timer's worst lateness), which
 *     is what /health sees meanwhile.
 *
 *   npx tsx scripts/bench/kb-catch-up.bench.ts [chunks=100000] [new=100] [dim=0]
 *
 * dim > 0 adds vectors (a dense index) of that many dimensions; HNSW inserts dominate then.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { KbStore } from '../../src/kb/kb-store.ts';
import { CollectionIndexes } from '../../src/kb/collection-index.ts';
import type { NewChunk } from '../../src/kb/types.ts';
import { seededRandom } from '../../test/fixtures-gen/seeded-random.ts';

const TOTAL = Number(process.argv[2] ?? 100_000);
const NEW = Number(process.argv[3] ?? 100);
const DIM = Number(process.argv[4] ?? 0);
const PER_DOC = 500;

const r = seededRandom(42);
const vocab = Array.from({ length: 20_000 }, (_, i) => `w${i.toString(36)}${'xyz'[i % 3]}`);
const word = () => vocab[Math.floor(vocab.length * Math.pow(r(), 2.5))]!;
function chunks(n: number): NewChunk[] {
  return Array.from({ length: n }, (_, i) => {
    const text = Array.from({ length: 60 + Math.floor(r() * 80) }, word).join(' ');
    return { ord: i, text, page_start: null, page_end: null, heading_path: ['Report', `Part ${i % 7}`], char_start: 0, char_end: text.length, importance: 0.5, content_type: 'text' };
  });
}
const vectors = (n: number) => (DIM > 0 ? Array.from({ length: n }, () => Float32Array.from({ length: DIM }, () => r() - 0.5)) : undefined);

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'kb-catch-up-bench-'));
const kbDir = path.join(root, 'kb');
const worker = new KbStore(kbDir);
const api = new KbStore(kbDir);
const c = worker.createCollection('bench', null);
if (DIM > 0) worker.setCollectionEmbedder(c.id, 'bench-embedder', DIM);
let docs = 0;
const commit = (n: number) => {
  const key = `https://bench/${docs++}`;
  const d = worker.ensureDocument(c.id, { source: key, source_kind: 'url', source_key: key, filename: null });
  const version = { source: key, source_kind: 'url' as const, source_key: key, filename: null, content_sha256: 'x'.repeat(64), bytes: 1, type: 'text', title: null, pages: null, language: 'en', job_id: null };
  worker.replaceDocument(c.id, d.id, version, chunks(n), vectors(n));
};

let t0 = performance.now();
for (let left = TOTAL; left > 0; left -= PER_DOC) commit(Math.min(PER_DOC, left));
console.log(`collection: ${TOTAL} chunks${DIM ? `, ${DIM}-d vectors` : ''} committed in ${Math.round(performance.now() - t0)} ms; catch-up of ${NEW} new chunks`);
console.log(`machine: ${os.cpus().length} cores, load ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);

/** Worst lateness of a 1 ms repeating timer while `fn` runs. */
async function withStall<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number; stallMs: number }> {
  let worst = 0;
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last - 1);
    last = now;
  }, 1);
  const start = performance.now();
  const value = await fn();
  const ms = performance.now() - start;
  clearInterval(timer);
  return { value, ms, stallMs: worst };
}

const dir = path.join(root, 'indexes');
const first = await CollectionIndexes.open(dir, api.getCollection('bench')!, api, { persistAfterRebuild: false });
await first.persist();

// 1. Open indexes, a worker commits one document of NEW chunks.
const runs: number[] = [];
const stalls: number[] = [];
for (let i = 0; i < 5; i++) {
  commit(NEW);
  const res = await withStall(() => first.catchUp());
  runs.push(res.ms);
  stalls.push(res.stallMs);
}
runs.sort((a, b) => a - b);
console.log(`1. catch-up of open indexes by ${NEW} chunks: median ${runs[2]!.toFixed(1)} ms (min ${runs[0]!.toFixed(1)}, max ${runs[4]!.toFixed(1)}); worst event-loop stall ${Math.max(...stalls).toFixed(1)} ms`);

// 2. The snapshot is now 5 x NEW chunks behind: open = load + catch-up, against a rebuild.
const stale = await withStall(() => CollectionIndexes.open(dir, api.getCollection('bench')!, api, { persistAfterRebuild: false }));
const rebuild = await withStall(() => CollectionIndexes.open(path.join(root, 'none'), api.getCollection('bench')!, api, { persistAfterRebuild: false }));
console.log(
  `2. open from a snapshot ${5 * NEW} chunks behind: ${Math.round(stale.ms)} ms (${stale.value.stats().source}; stall ${stale.stallMs.toFixed(1)} ms) vs rebuild ${Math.round(rebuild.ms)} ms (stall ${rebuild.stallMs.toFixed(1)} ms): ${(rebuild.ms / stale.ms).toFixed(1)}x`,
);
const same = JSON.stringify(stale.value.lexical.search('w1x w2y w3z w10x', 10)) === JSON.stringify(rebuild.value.lexical.search('w1x w2y w3z w10x', 10));
console.log(`   same top-10 scores: ${same}`);
t0 = performance.now();
api.collectionChunkIds(c.id);
console.log(`   reading ${TOTAL + 5 * NEW} live ids (one read transaction): ${(performance.now() - t0).toFixed(1)} ms`);
worker.close();
api.close();
fs.rmSync(root, { recursive: true, force: true });
