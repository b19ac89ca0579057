import t, { type Test } from 'tap';
import fs from 'node:fs/promises';
import path from 'node:path';
import os from 'node:os';
import { createHash } from 'node:crypto';
import { INDEX_FORMAT_VERSION, IndexStore } from '../../src/retrieval/store/index-store.ts';
import type { Chunk } from '../../src/retrieval/types.ts';

const sha = (s: string) => createHash('sha256').update(s).digest('hex');

function chunks(n: number): Chunk[] {
  return Array.from({ length: n }, (_, i) => ({
    text: `chunk ${i} about topic ${i % 7}`,
    chunk_index: i,
    total_chunks: n,
    importance_score: 0.5,
    content_type: 'text',
    doc_type: 'pdf',
    page_start: 1 + Math.floor(i / 3),
    page_end: 1 + Math.floor(i / 3),
    char_start: i * 100,
    char_end: i * 100 + 90,
    heading_path: ['Intro'],
  }));
}

function rng(seed: number) {
  let s = seed >>> 0;
  return () => ((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32) * 2 - 1;
}

function unitVectors(n: number, dim: number, seed = 1): Float32Array[] {
  const r = rng(seed);
  return Array.from({ length: n }, () => {
    const v = Float32Array.from({ length: dim }, r);
    const norm = Math.hypot(...v);
    return v.map((x) => x / norm);
  });
}

async function tmpStore(t: Test) {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'index-store-'));
  t.teardown(() => fs.rm(dir, { recursive: true, force: true }));
  return { dir, store: new IndexStore({ dir }) };
}

const EMB = 'onnx:Xenova/all-MiniLM-L6-v2:q8';

t.test('round trip: save, then a new store instance answers from disk without the vectors', async (t) => {
  const { dir, store } = await tmpStore(t);
  const cs = chunks(30);
  const vectors = unitVectors(30, 16);
  const content = sha('document bytes');
  const saved = await store.save('abc123', { chunks: cs, vectors, embedderId: EMB, dimension: 16, contentSha256: content });
  t.equal(saved.meta.chunkCount, 30);
  t.same(saved.meta.hnsw, { M: 32, efConstruction: 200, ef: 400, space: 'cosine' });
  const top = saved.searchDense(vectors[7], 3);
  t.equal(top[0].chunkIndex, 7, 'a stored vector finds itself first');
  t.ok(Math.abs(top[0].score - 1) < 1e-5, 'cosine 1 with itself');
  t.ok(top[0].score >= top[1].score && top[1].score >= top[2].score, 'best first');
  t.same((await fs.readdir(path.join(dir, 'abc123'))).sort(), ['chunks.json', 'dense.hnsw', 'dense.hnsw.json', 'lexical.bin', 'manifest.json']);
  t.same((await fs.readdir(dir)).filter((n) => n.startsWith('.')), [], 'no temp folders left');

  // "Restart": a fresh store over the same folder.
  const restarted = new IndexStore({ dir });
  const loaded = await restarted.load('abc123', { embedderId: EMB, dimension: 16, contentSha256: content });
  t.ok(loaded, 'loaded from disk');
  t.same(loaded!.chunks, cs, 'chunks with pages, offsets and heading paths survive');
  t.match(loaded!.meta, { format: INDEX_FORMAT_VERSION, embedderId: EMB, dimension: 16, contentSha256: content, chunkCount: 30 });
  t.ok(Date.parse(loaded!.meta.createdAt) > 0);
  t.same(loaded!.searchDense(vectors[7], 3), top, 'same answers after the restart (ef restored)');
  t.same(loaded!.lexical.search('topic 3', 5), saved.lexical.search('topic 3', 5), 'the lexical index is loaded from lexical.bin and scores alike');
  t.equal(loaded!.lexical.size, 30);
  t.same(loaded!.searchDense(vectors[0], 100).length, 30, 'k above the count returns every chunk');
  t.throws(() => loaded!.searchDense(new Float32Array(8), 3), /dimension 8, index abc123 has 16/);
  loaded!.close();
  t.throws(() => loaded!.searchDense(vectors[0], 3), /closed/);
});

t.test('lexical-only indexes persist their chunks too', async (t) => {
  const { dir, store } = await tmpStore(t);
  const content = sha('lexical');
  const saved = await store.save('lex1', { chunks: chunks(5), embedderId: null, dimension: null, contentSha256: content });
  t.equal(saved.hasDense, false);
  t.same((await fs.readdir(path.join(dir, 'lex1'))).sort(), ['chunks.json', 'lexical.bin', 'manifest.json']);
  const loaded = await new IndexStore({ dir }).load('lex1', { embedderId: null, dimension: null, contentSha256: content });
  t.equal(loaded?.chunks.length, 5);
  t.throws(() => loaded!.searchDense(new Float32Array(4), 1), /lexical-only/);
});

t.test('mismatches: another embedder -> null and kept; changed dimension or content -> null and removed', async (t) => {
  const { dir, store } = await tmpStore(t);
  const content = sha('doc');
  await store.save('k1', { chunks: chunks(4), vectors: unitVectors(4, 8), embedderId: EMB, dimension: 8, contentSha256: content });
  t.equal(await store.load('k1', { embedderId: 'onnx:Xenova/bge-small-en-v1.5:q8', dimension: 8, contentSha256: content }), null, 'other embedder');
  t.equal(await store.load('k1', { embedderId: null, dimension: null, contentSha256: content }), null, 'lexical request');
  t.ok(await store.peekMeta('k1'), 'kept: a rebuild by the caller replaces it');
  t.equal(await store.load('k1', { embedderId: EMB, dimension: 384, contentSha256: content }), null, 'same id, other dimension');
  t.equal(await store.peekMeta('k1'), null, 'removed: that index can never be used');
  await fs.access(path.join(dir, 'k1')).then(() => t.fail('folder still there'), () => t.pass('folder gone'));
  await store.save('k2', { chunks: chunks(4), vectors: unitVectors(4, 8), embedderId: EMB, dimension: 8, contentSha256: content });
  t.equal(await store.load('k2', { embedderId: EMB, dimension: 8, contentSha256: sha('other') }), null, 'content hash differs');
  t.equal(await store.peekMeta('k2'), null);
  t.equal(await store.load('missing', { embedderId: EMB, dimension: 8, contentSha256: content }), null, 'missing -> null');
});

t.test('corrupt indexes load as null and are cleaned, never a crash', async (t) => {
  const content = sha('corrupt');
  const expect = { embedderId: EMB, dimension: 8, contentSha256: content };
  const corruptions: Array<[string, (d: string) => Promise<void>]> = [
    ['truncated index file', async (d) => fs.truncate(path.join(d, 'dense.hnsw'), 100)],
    ['garbage index file of the same size', async (d) => {
      const size = (await fs.stat(path.join(d, 'dense.hnsw'))).size;
      await fs.writeFile(path.join(d, 'dense.hnsw'), Buffer.alloc(size, 7));
    }],
    ['missing index file', async (d) => fs.rm(path.join(d, 'dense.hnsw'))],
    ['chunks.json edited', async (d) => fs.writeFile(path.join(d, 'chunks.json'), '[]')],
    ['lexical.bin edited', async (d) => {
      const b = await fs.readFile(path.join(d, 'lexical.bin'));
      b[b.length >> 1] ^= 0xff;
      await fs.writeFile(path.join(d, 'lexical.bin'), b);
    }],
    ['manifest.json not JSON', async (d) => fs.writeFile(path.join(d, 'manifest.json'), '{"format":')],
    ['manifest.json chunk count changed', async (d) => {
      const m = JSON.parse(await fs.readFile(path.join(d, 'manifest.json'), 'utf8'));
      m.chunks = 5;
      await fs.writeFile(path.join(d, 'manifest.json'), JSON.stringify(m));
    }],
    ['manifest.json of an older format', async (d) => {
      const m = JSON.parse(await fs.readFile(path.join(d, 'manifest.json'), 'utf8'));
      m.format = 0;
      await fs.writeFile(path.join(d, 'manifest.json'), JSON.stringify(m));
    }],
  ];
  for (const [name, corrupt] of corruptions) {
    const { dir, store } = await tmpStore(t);
    await store.save('doc', { chunks: chunks(6), vectors: unitVectors(6, 8), embedderId: EMB, dimension: 8, contentSha256: content });
    await corrupt(path.join(dir, 'doc'));
    const fresh = new IndexStore({ dir });
    t.equal(await fresh.load('doc', expect), null, `${name}: null`);
    t.same(await fs.readdir(dir), [], `${name}: folder removed`);
    const rebuilt = await fresh.save('doc', { chunks: chunks(6), vectors: unitVectors(6, 8), embedderId: EMB, dimension: 8, contentSha256: content });
    t.equal(rebuilt.meta.chunkCount, 6, `${name}: rebuilt`);
    t.ok(await new IndexStore({ dir }).load('doc', expect), `${name}: the rebuild loads`);
  }
});

t.test('saves replace atomically; concurrent saves of one key leave one whole index', async (t) => {
  const { dir, store } = await tmpStore(t);
  const content = sha('x');
  await Promise.all(
    [4, 6, 8].map((n) => store.save('same', { chunks: chunks(n), vectors: unitVectors(n, 8, n), embedderId: EMB, dimension: 8, contentSha256: content })),
  );
  const loaded = await new IndexStore({ dir }).load('same', { embedderId: EMB, dimension: 8, contentSha256: content });
  t.equal(loaded?.chunks.length, 8, 'the last save wins, whole');
  t.same(await fs.readdir(dir), ['same'], 'no temp or old folders left');
});

t.test('invalid input is refused before anything is written', async (t) => {
  const { dir, store } = await tmpStore(t);
  const content = sha('y');
  await t.rejects(store.save('../escape', { chunks: [], embedderId: null, dimension: null, contentSha256: content }), /invalid index key/);
  await t.rejects(store.save('k', { chunks: chunks(2), vectors: unitVectors(1, 8), embedderId: EMB, dimension: 8, contentSha256: content }), /1 vectors for 2 chunks/);
  await t.rejects(store.save('k', { chunks: chunks(1), vectors: unitVectors(1, 4), embedderId: EMB, dimension: 8, contentSha256: content }), /dimension 4, expected 8/);
  await t.rejects(store.save('k', { chunks: chunks(1), vectors: [new Float32Array([NaN, 0, 0, 0])], embedderId: EMB, dimension: 4, contentSha256: content }), /non-finite/);
  await t.rejects(store.save('k', { chunks: [], embedderId: null, dimension: null, contentSha256: 'nope' }), /sha256/);
  await t.rejects(store.save('k', { chunks: chunks(1), vectors: unitVectors(1, 4), embedderId: EMB, dimension: 4, contentSha256: content, hnsw: { M: 1 } }), /invalid HNSW M/);
  t.same(await fs.readdir(dir), []);
});

t.test('clear() removes everything and reports the count; stats; eviction beyond maxEntries', async (t) => {
  const { dir } = await tmpStore(t);
  const store = new IndexStore({ dir, maxEntries: 3 });
  for (let i = 0; i < 5; i++) {
    await store.save(`doc${i}`, { chunks: chunks(3), vectors: unitVectors(3, 8, i), embedderId: EMB, dimension: 8, contentSha256: sha(String(i)) });
    await new Promise((r) => setTimeout(r, 15));
  }
  const stats = await store.stats();
  t.equal(stats.entries, 3, 'bounded to maxEntries');
  t.ok(stats.bytes > 0);
  t.same((await fs.readdir(dir)).sort(), ['doc2', 'doc3', 'doc4'], 'the oldest went first');
  await fs.mkdir(path.join(dir, '.tmp-doc9-abc'));
  t.equal(await store.clear(), 3);
  t.same(await fs.readdir(dir), [], 'temp leftovers gone too');
  t.equal(await store.clear(), 0);
  t.match(await store.stats(), { entries: 0, bytes: 0 });
});

t.test('a lexical index of another analyzer is rebuilt from the stored chunks and the folder rewritten', async (t) => {
  const { dir, store } = await tmpStore(t);
  const content = sha('analyzers');
  const saved = await store.save('an1', { chunks: chunks(12), vectors: unitVectors(12, 8), embedderId: EMB, dimension: 8, contentSha256: content });
  const before = JSON.parse(await fs.readFile(path.join(dir, 'an1', 'manifest.json'), 'utf8'));
  t.equal(before.analyzer, saved.lexical.analyzer.signature);
  const other = new IndexStore({ dir, analyzer: { stem: false } });
  const loaded = await other.load('an1', { embedderId: EMB, dimension: 8, contentSha256: content });
  t.ok(loaded, 'served');
  t.not(loaded!.lexical.analyzer.signature, before.analyzer, 'built by the analyzer asked for');
  t.same(loaded!.chunks, saved.chunks);
  t.same(loaded!.searchDense(unitVectors(12, 8)[3], 1)[0]?.chunkIndex, 3, 'the dense index came along');
  const after = JSON.parse(await fs.readFile(path.join(dir, 'an1', 'manifest.json'), 'utf8'));
  t.equal(after.analyzer, loaded!.lexical.analyzer.signature, 'the folder now holds the new lexical index');
  t.same((await fs.readdir(dir)), ['an1'], 'no temp or old folders left');
  const again = await new IndexStore({ dir, analyzer: { stem: false } }).load('an1', { embedderId: EMB, dimension: 8, contentSha256: content });
  t.same(again!.lexical.search('topic 3', 5), loaded!.lexical.search('topic 3', 5));
  t.equal(JSON.parse(await fs.readFile(path.join(dir, 'an1', 'manifest.json'), 'utf8')).saved_at, after.saved_at, 'loaded as it is: not rewritten again');
});
