import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { CollectionDenseIndex } from '../../src/kb/dense-index.ts';
import { rng } from './index-lexical-fixtures.ts';

const DIM = 16;

function vectors(n: number, seed: number): Float32Array[] {
  const r = rng(seed);
  return Array.from({ length: n }, () => Float32Array.from({ length: DIM }, () => r() * 2 - 1));
}

function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return dot / Math.sqrt(na * nb);
}

/** Exact top-k ids by cosine over the live points that pass `filter`. */
function exact(live: Map<number, Float32Array>, q: Float32Array, k: number, filter?: (id: number) => boolean): number[] {
  return [...live]
    .filter(([id]) => !filter || filter(id))
    .map(([id, v]) => ({ id, s: cosine(q, v) }))
    .sort((a, b) => b.s - a.s || a.id - b.id)
    .slice(0, k)
    .map((h) => h.id);
}

const opts = { embedderId: 'test/embedder', dimension: DIM, params: { ef: 2000 } };

t.test('adds (growing past the initial capacity), removes, filters: exact top-k at small n', async (t) => {
  const idx = await CollectionDenseIndex.create(opts);
  const live = new Map<number, Float32Array>();
  const vs = vectors(1500, 1);
  const ids = vs.map((_, i) => 10 + i * 2);
  await idx.add(ids.slice(0, 1200), vs.slice(0, 1200));
  await idx.add(ids.slice(1200), vs.slice(1200));
  ids.forEach((id, i) => live.set(id, vs[i]));
  t.equal(idx.size, 1500);
  const queries = vectors(30, 2);
  const recall = () => {
    let hit = 0;
    let total = 0;
    for (const q of queries) {
      const want = exact(live, q, 10);
      const got = idx.search(q, 10).map((h) => h.id);
      total += want.length;
      hit += got.filter((id) => want.includes(id)).length;
    }
    return hit / total;
  };
  t.equal(recall(), 1, 'recall@10 1.0 after adds');
  const first = idx.search(queries[0], 3);
  t.ok(Math.abs(first[0].score - cosine(queries[0], live.get(first[0].id)!)) < 1e-5, 'score is cosine similarity');
  t.ok(first[0].score >= first[1].score && first[1].score >= first[2].score, 'best first');

  const gone = ids.filter((id) => id % 3 === 0);
  t.equal(idx.remove([...gone, 999999]), gone.length);
  for (const id of gone) live.delete(id);
  t.equal(idx.size, live.size);
  t.equal(idx.has(gone[0]), false);
  t.equal(recall(), 1, 'recall@10 1.0 after removes');
  for (const q of queries) t.notOk(idx.search(q, 50).some((h) => gone.includes(h.id)), 'removed points never returned');

  // Re-adding a removed id brings it back with its (new) vector.
  const again = vs[0].map((x) => -x);
  await idx.add([gone[0]], [again]);
  live.set(gone[0], again);
  t.equal(idx.search(again, 1)[0].id, gone[0]);

  const admit = (id: number) => id % 5 === 0;
  for (const q of queries.slice(0, 10)) t.same(idx.search(q, 10, admit).map((h) => h.id), exact(live, q, 10, admit), 'filtered top-10 exact');
  t.same(idx.search(queries[0], 10, () => false), []);
  t.equal(idx.search(queries[0], 100000).length, live.size, 'k past the size returns every live point');
  t.throws(() => idx.search(new Float32Array(3), 5), { code: 'INTERNAL_ERROR' });
  await t.rejects(idx.add([1], [new Float32Array(3)]), { code: 'INTERNAL_ERROR' });
});

t.test('save / load round trip; embedder, dimension and corruption checked on load', async (t) => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'kb-dense-'));
  t.teardown(() => fs.rm(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'dense.hnsw');
  const vs = vectors(2000, 5);
  const idx = await CollectionDenseIndex.build({ ...opts, params: { efConstruction: 40 } }, vs.map((vector, i) => ({ id: i + 1, vector })));
  idx.remove([1, 2, 3]);
  // A remove while hnswlib writes: held back from the file, hidden from searches at once.
  const saving = idx.save(file);
  for (let i = 0; i < 10000 && !idx.saveInProgress; i++) await new Promise((r) => setImmediate(r));
  t.ok(idx.saveInProgress, 'the write is under way');
  idx.remove([4]);
  t.notOk(idx.search(vs[3], 5).some((h) => h.id === 4), 'removed during the save: hidden');
  await saving;
  t.equal(idx.deletedCount, 4, 'and marked deleted once the write ended');
  t.same((await fs.readdir(dir)).sort(), ['dense.hnsw', 'dense.hnsw.json'], 'no temp files left');

  const loaded = await CollectionDenseIndex.load(file, { embedderId: 'test/embedder', dimension: DIM, params: { ef: 2000 } });
  t.equal(loaded.size, 1997, 'the file holds the state when the write began (id 4 removed later)');
  t.equal(loaded.has(4), true);
  t.equal(loaded.has(1), false);
  const q = vectors(5, 6);
  const strip = (hs: Array<{ id: number }>) => hs.map((h) => h.id).filter((id) => id !== 4);
  for (const v of q) t.same(strip(loaded.search(v, 10)).slice(0, 9), strip(idx.search(v, 10)).slice(0, 9));
  t.equal(loaded.params.ef, 2000, 'ef set after readIndex');
  // Still mutable after the load.
  await loaded.add([5000], [q[0]]);
  t.equal(loaded.search(q[0], 1)[0].id, 5000);

  await t.rejects(CollectionDenseIndex.load(file, { embedderId: 'other/model', dimension: DIM }), { message: /embedder/ });
  await t.rejects(CollectionDenseIndex.load(file, { embedderId: 'test/embedder', dimension: 8 }), { message: /dimension/ });
  const bytes = await fs.readFile(file);
  bytes[Math.floor(bytes.length / 2)] ^= 0xff;
  await fs.writeFile(file, bytes);
  await t.rejects(CollectionDenseIndex.load(file, { embedderId: 'test/embedder', dimension: DIM }), { code: 'INTERNAL_ERROR', message: /corrupt/ });
  await CollectionDenseIndex.removeFiles(file);
  await t.rejects(CollectionDenseIndex.load(file, { embedderId: 'test/embedder', dimension: DIM }), { message: /missing/ });
});
