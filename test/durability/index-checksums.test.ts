/**
 * Every file of a stored index is checksummed: one flipped byte, a truncation, a missing part or
 * manifest, or a half-written temp folder is detected and reported, the entry removed, never
 * served, and the rebuild answers exactly as a fresh build does.
 */
import t, { type Test } from 'tap';
import fs from 'node:fs/promises';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { tempDir } from '../helper.ts';
import { IndexStore, type StoredIndex } from '../../src/retrieval/store/index-store.ts';
import type { Chunk } from '../../src/retrieval/types.ts';
import { deadPid } from '../dead-pid.ts';

const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const EMB = 'test:embedder';
const DIM = 12;
const CONTENT = sha('the document');
const EXPECT = { embedderId: EMB, dimension: DIM, contentSha256: CONTENT };

function chunks(n: number): Chunk[] {
  return Array.from({ length: n }, (_, i) => ({
    text: `chunk ${i}: "quoted" text with a newline\nand ünïcödé ${'x'.repeat(i % 50)}`,
    chunk_index: i,
    total_chunks: n,
    importance_score: 0.5,
    content_type: 'text',
    doc_type: 'pdf',
    page_start: 1 + (i >> 2),
    page_end: 1 + (i >> 2),
    char_start: i * 100,
    char_end: i * 100 + 90,
    heading_path: i % 3 ? ['Intro'] : [],
  }));
}

function vectors(n: number): Float32Array[] {
  let s = 7;
  const r = () => ((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32) * 2 - 1;
  return Array.from({ length: n }, () => {
    const v = Float32Array.from({ length: DIM }, r);
    const norm = Math.hypot(...v);
    return v.map((x) => x / norm);
  });
}

const N = 40;
const DATA = { chunks: chunks(N), vectors: vectors(N), embedderId: EMB, dimension: DIM, contentSha256: CONTENT };
const QUERIES = vectors(5).map((v) => v.map((x, i) => (i % 2 ? -x : x)));

/** What an index answers: its chunks and the dense top-5 of a few queries. */
function answers(index: StoredIndex) {
  return { chunks: index.chunks, dense: QUERIES.map((q) => index.searchDense(q, 5)) };
}

async function freshAnswers(t: Test) {
  const store = new IndexStore({ dir: tempDir(t) });
  return answers(await store.save('doc', DATA));
}

async function flipByte(file: string, at: (size: number) => number) {
  const buf = await fs.readFile(file);
  const i = at(buf.length);
  buf[i] ^= 0x01;
  await fs.writeFile(file, buf);
}

t.test('each corruption is detected, reported, removed, and the rebuild equals a fresh build', async (t) => {
  const fresh = await freshAnswers(t);
  const cases: Array<[string, (d: string) => Promise<void>]> = [
    ['one byte flipped in the middle of dense.hnsw', (d) => flipByte(path.join(d, 'dense.hnsw'), (n) => n >> 1)],
    ['one byte flipped in chunks.json', (d) => flipByte(path.join(d, 'chunks.json'), (n) => n >> 1)],
    ['one byte flipped in the middle of lexical.bin', (d) => flipByte(path.join(d, 'lexical.bin'), (n) => n >> 1)],
    ['one byte flipped in manifest.json (a digit of the saved time)', async (d) => {
      const text = await fs.readFile(path.join(d, 'manifest.json'), 'utf8');
      const at = text.indexOf('"saved_at": "') + '"saved_at": "'.length + 3;
      await fs.writeFile(path.join(d, 'manifest.json'), text.slice(0, at) + String((Number(text[at]) + 1) % 10) + text.slice(at + 1));
    }],
    ['dense.hnsw truncated by one byte', async (d) => fs.truncate(path.join(d, 'dense.hnsw'), (await fs.stat(path.join(d, 'dense.hnsw'))).size - 1)],
    ['chunks.json truncated at a line end', async (d) => {
      const text = await fs.readFile(path.join(d, 'chunks.json'), 'utf8');
      await fs.writeFile(path.join(d, 'chunks.json'), text.slice(0, text.indexOf('\n', text.length >> 1) + 1));
    }],
    ['lexical.bin truncated by one byte', async (d) => fs.truncate(path.join(d, 'lexical.bin'), (await fs.stat(path.join(d, 'lexical.bin'))).size - 1)],
    ['manifest.json truncated', async (d) => fs.truncate(path.join(d, 'manifest.json'), 40)],
    ['manifest deleted', (d) => fs.rm(path.join(d, 'manifest.json'))],
    ['lexical.bin deleted', (d) => fs.rm(path.join(d, 'lexical.bin'))],
    ['dense.hnsw.json deleted', (d) => fs.rm(path.join(d, 'dense.hnsw.json'))],
    ['chunks.json deleted', (d) => fs.rm(path.join(d, 'chunks.json'))],
    ['dense.hnsw deleted', (d) => fs.rm(path.join(d, 'dense.hnsw'))],
    ['chunks.json emptied', (d) => fs.writeFile(path.join(d, 'chunks.json'), '')],
  ];
  for (const [name, corrupt] of cases) {
    const dir = tempDir(t);
    await new IndexStore({ dir }).save('doc', DATA);
    await corrupt(path.join(dir, 'doc'));
    const rejected: string[] = [];
    const store = new IndexStore({ dir, onReject: (key, why) => rejected.push(`${key}: ${why}`) });
    t.equal(await store.load('doc', EXPECT), null, `${name}: not served`);
    t.equal(rejected.length, 1, `${name}: reported (${rejected[0]})`);
    t.same(await fs.readdir(dir), [], `${name}: entry removed`);
    await store.save('doc', DATA);
    const reloaded = await new IndexStore({ dir }).load('doc', EXPECT);
    t.ok(reloaded, `${name}: the rebuild loads`);
    t.same(answers(reloaded!), fresh, `${name}: rebuilt answers equal a fresh build`);
  }
});

t.test('a lexical-only index (chunks only) is checked the same way', async (t) => {
  const dir = tempDir(t);
  const lexical = { chunks: chunks(5), embedderId: null, dimension: null, contentSha256: CONTENT };
  const expect = { embedderId: null, dimension: null, contentSha256: CONTENT };
  await new IndexStore({ dir }).save('lex', lexical);
  t.same((await new IndexStore({ dir }).load('lex', expect))!.chunks, lexical.chunks, 'round trip');
  await flipByte(path.join(dir, 'lex', 'chunks.json'), (n) => n - 10);
  t.equal(await new IndexStore({ dir }).load('lex', expect), null, 'a flipped byte near the end is caught');
});

t.test('a half-written temp folder left by a kill is never served and is swept at start-up', async (t) => {
  const dir = tempDir(t);
  const store = new IndexStore({ dir });
  await store.save('doc', DATA);
  // What a kill -9 mid-save leaves: a temp folder with a partial chunks file and no manifest,
  // and one with every file (killed just before the rename).
  const partial = path.join(dir, `.tmp-p${deadPid()}-doc-0123456789ab`);
  await fs.cp(path.join(dir, 'doc'), partial, { recursive: true });
  await fs.rm(path.join(partial, 'manifest.json'));
  await fs.truncate(path.join(partial, 'chunks.json'), 100);
  const whole = path.join(dir, `.tmp-p${deadPid()}-doc-ba9876543210`);
  await fs.cp(path.join(dir, 'doc'), whole, { recursive: true });
  const fresh = new IndexStore({ dir });
  t.same(answers((await fresh.load('doc', EXPECT))!), await freshAnswers(t), 'the committed version is what loads');
  t.same(await fs.readdir(dir), ['doc'], 'both temp folders were swept before the first load, whatever their age');
});

t.test('killed between moving the old version aside and renaming the new one in: the old one is put back', async (t) => {
  const dir = tempDir(t);
  await new IndexStore({ dir }).save('doc', DATA);
  await fs.rename(path.join(dir, 'doc'), path.join(dir, `.old-p${deadPid()}-doc-00112233aabb`));
  await fs.mkdir(path.join(dir, `.tmp-p${deadPid()}-doc-ffeeddccbbaa`));
  const store = new IndexStore({ dir });
  t.same(await store.sweepLeftovers(), { removed: 1, restored: 1 });
  t.same(answers((await store.load('doc', EXPECT))!), await freshAnswers(t), 'the previous version serves');
  t.same(await fs.readdir(dir), ['doc']);
});

t.test("another live process's save in progress is left alone", async (t) => {
  const dir = tempDir(t);
  const live = path.join(dir, `.tmp-p${process.ppid}-doc-0123456789ab`);
  await fs.mkdir(live, { recursive: true });
  const store = new IndexStore({ dir });
  t.same(await store.sweepLeftovers(), { removed: 0, restored: 0 });
  t.equal(await store.clear(), 0);
  t.same(await fs.readdir(dir), [path.basename(live)], 'the parent process (alive) keeps its temp folder');
});

/** A pid that is certainly not running: a child that has already exited. */
