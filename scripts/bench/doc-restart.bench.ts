/**
 * Restart load of a big document's stored index: the time from a fresh RetrievalService (a
 * restarted server: empty memory cache, the index folder on disk) to its first retrieve_chunks
 * answer, for the snapshot format (lexical.bin loaded) and for a folder of the previous layout
 * (meta.json: the lexical index is built from the chunks, as every load did before, and the folder
 * is rewritten once). Also the parts: reading chunks.json, building the lexical index from the
 * chunks (the old load), reading + verifying + deserializing lexical.bin (the new load).
 *
 *   npm run bench:doc-restart                         # ~20,000 chunks, lexical only
 *   npm run bench:doc-restart -- --chunks 5000 --runs 3
 *   npm run bench:doc-restart -- --dense              # with a 64-d hashing embedder (HNSW build is slow)
 *
 * The OS page cache is warm in every run (the folder was just written or read): these are CPU
 * costs, not disk reads.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { CacheRegistry } from '../../src/cache/cache-registry.ts';
import type { DocumentSource } from '../../src/call-context.ts';
import type { ProcessedDocument } from '../../src/extractors/shared/types.ts';
import type { DocumentAccess, ModelLayer } from '../../src/retrieval/contracts.ts';
import { RetrievalService } from '../../src/retrieval/retrieval-service.ts';
import { IndexStore } from '../../src/retrieval/store/index-store.ts';
import { readChunks } from '../../src/retrieval/store/chunks-file.ts';
import { DocumentLexicalIndex } from '../../src/retrieval/document-lexical-index.ts';
import { loadLexical, readManifest } from '../../src/kb/index-snapshot.ts';
import { Analyzer, SERVER_ANALYZER } from '../../src/retrieval/tokenizer.ts';
import type { Embedder } from '../../src/retrieval/types.ts';

const args = process.argv.slice(2);
const arg = (name: string, def: number) => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) : def);
const TARGET_CHUNKS = arg('--chunks', process.env.BENCH_QUICK === '1' ? 3000 : 20_000);
const RUNS = arg('--runs', 5);
const DENSE = args.includes('--dense');

const WORDS = 'the of and to in is was for on that with as by at from which this be are were has have had not but all they one been'.split(' ');
const RARE = 'zirconium basalt quasar flange aqueduct lichen obsidian turbine glacier meridian sextant tundra'.split(' ');

/** Paragraphs of ~700 characters, a heading every 40; the chunker puts about 2.86 in a chunk. */
function makeText(chunks: number): string {
  let s = 42;
  const r = (n: number) => (s = (s * 1103515245 + 12345) >>> 0) % n;
  const parts: string[] = [];
  for (let i = 0; i < Math.ceil(chunks * 2.86); i++) {
    if (i % 40 === 0) parts.push(`## Section ${i / 40}`);
    const words = Array.from({ length: 110 }, () => (r(30) === 0 ? RARE[r(RARE.length)]! : r(40) === 0 ? `n${r(5000)}` : WORDS[r(WORDS.length)]!));
    parts.push(`${words.join(' ')}.`);
  }
  return parts.join('\n\n');
}

const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const URL_ = 'https://bench.example/big-document';
const content = makeText(TARGET_CHUNKS);
const doc: ProcessedDocument = { kind: 'text', content, metadata: {}, tables: [], images: [], urls: [], pages: [] };

const counts = { loads: 0 };
const access: DocumentAccess = {
  async fetch(source: DocumentSource) {
    const url = 'url' in source ? source.url : '';
    return { url, sha256: sha(content), source: url };
  },
  async load(source: DocumentSource) {
    counts.loads++;
    const url = 'url' in source ? source.url : '';
    return { key: url, contentSha256: sha(content), source: url, doc };
  },
};

const embedder: Embedder = {
  id: 'bench:hashing-64',
  dimension: 64,
  async embed(texts) {
    return texts.map((text) => {
      const v = new Float32Array(64);
      for (const w of text.toLowerCase().match(/[a-z0-9]{3,}/g) ?? []) v[createHash('md5').update(w).digest()[0]! % 64] += 1;
      const n = Math.hypot(...v) || 1;
      return v.map((x) => x / n);
    });
  },
};
const models: ModelLayer | null = DENSE
  ? {
      embedderFor: () => embedder,
      embedderById: (id) => (id === embedder.id ? embedder : null),
      denseUnavailableReason: () => null,
      rerank: async () => ({ status: 'unavailable', reason: 'none' }),
      rerankerId: () => null,
      rerankerUnavailableReason: () => 'no reranker in the benchmark',
    }
  : null;

const silent = { info() {}, warn() {}, error() {}, debug() {}, trace() {}, fatal() {}, child: () => silent } as never;
const ctx = () => ({ signal: new AbortController().signal, log: silent });
const ms = (t0: number) => Math.round((performance.now() - t0) * 10) / 10;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function firstAnswer(dir: string): Promise<{ ms: number; origin: string; chunks: number; results: string[] }> {
  const svc = new RetrievalService({ documents: access, caches: new CacheRegistry({ ttlMs: 600_000 }), models, store: new IndexStore({ dir }) });
  const t0 = performance.now();
  const res = await svc.retrieve({ sources: [{ url: URL_ }], query: 'zirconium basalt n1234 glacier', topK: 5 }, ctx());
  return { ms: ms(t0), origin: res.retrieval.documents[0]!.index, chunks: res.total_chunks, results: res.results.map((h) => `${h.chunk_index}:${h.score}`) };
}

/** What the previous version left: meta.json of format 3 and no lexical.bin / manifest.json. */
async function downgrade(folder: string): Promise<void> {
  const m = JSON.parse(await fs.readFile(path.join(folder, 'manifest.json'), 'utf8'));
  await fs.rm(path.join(folder, 'manifest.json'));
  await fs.rm(path.join(folder, 'lexical.bin'));
  const digest = async (name: string) => {
    const buf = await fs.readFile(path.join(folder, name));
    return { bytes: buf.length, sha256: createHash('sha256').update(buf).digest('hex') };
  };
  const files: Record<string, unknown> = { 'chunks.json': await digest('chunks.json') };
  if (m.embedder) for (const f of ['dense.hnsw', 'dense.hnsw.json']) files[f] = await digest(f);
  const meta: Record<string, unknown> = {
    format: 3, key: m.key, embedderId: m.embedder, dimension: m.dimension, contentSha256: m.content_sha256,
    chunkCount: m.chunks, hnsw: m.hnsw, createdAt: m.saved_at, files,
  };
  meta.checksum = sha(JSON.stringify(meta));
  await fs.writeFile(path.join(folder, 'meta.json'), JSON.stringify(meta, null, 1));
}

async function main(): Promise<void> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'bench-doc-restart-'));
  try {
    const t0 = performance.now();
    const cold = await firstAnswer(dir);
    const coldMs = ms(t0);
    if (cold.results.length === 0) throw new Error('the query found nothing: the benchmark would time an empty answer');
    const [key] = (await fs.readdir(dir)).filter((n) => !n.startsWith('.'));
    const folder = path.join(dir, key!);
    const sizes = Object.fromEntries(await Promise.all((await fs.readdir(folder)).map(async (f) => [f, (await fs.stat(path.join(folder, f))).size] as const)));
    console.log(`document: ${(content.length / 1e6).toFixed(1)} M characters, ${cold.chunks} chunks, ${DENSE ? 'hybrid (64-d hashing embedder)' : 'lexical only'}; cold build + save ${coldMs} ms`);
    console.log(`folder: ${Object.entries(sizes).map(([f, b]) => `${f} ${(b / 1048576).toFixed(2)} MB`).join(', ')}`);

    const snapshot: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const r = await firstAnswer(dir);
      if (r.origin !== 'disk' || r.results.join() !== cold.results.join()) throw new Error(`restart ${i}: ${r.origin}, answer ${r.results.join() === cold.results.join() ? 'same' : 'differs'}`);
      snapshot.push(r.ms);
    }
    const legacy: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      await downgrade(folder);
      const r = await firstAnswer(dir);
      if (r.origin !== 'disk' || r.results.join() !== cold.results.join()) throw new Error(`legacy restart ${i}: ${r.origin}, answer ${r.results.join() === cold.results.join() ? 'same' : 'differs'}`);
      legacy.push(r.ms);
    }
    if (counts.loads !== 1) throw new Error(`the document was extracted ${counts.loads} times`);

    // The parts, on the folder as it now is (rewritten in the snapshot format).
    const analyzer = new Analyzer(SERVER_ANALYZER);
    const readMs: number[] = [];
    const buildMs: number[] = [];
    const lexMs: number[] = [];
    const read = await readManifest(folder);
    if (!read.ok) throw new Error(read.reason);
    for (let i = 0; i < RUNS; i++) {
      let t = performance.now();
      const { chunks } = await readChunks(path.join(folder, 'chunks.json'));
      readMs.push(ms(t));
      t = performance.now();
      await DocumentLexicalIndex.forDocument(chunks, analyzer);
      buildMs.push(ms(t));
      t = performance.now();
      await loadLexical(folder, read.manifest, DocumentLexicalIndex.analyzerFor(analyzer, read.manifest.language));
      lexMs.push(ms(t));
    }
    const row = (what: string, xs: number[]) => console.log(`| ${what} | ${median(xs)} ms | ${Math.min(...xs)}-${Math.max(...xs)} ms |`);
    console.log(`\n${RUNS} runs each, fresh RetrievalService + IndexStore per run (a restart), same answer checked every run.\n`);
    console.log('| measured | median | range |');
    console.log('|---|---|---|');
    row('first retrieve_chunks answer after a restart, snapshot folder (lexical.bin loaded)', snapshot);
    row('first answer after a restart, previous layout (lexical index built from the chunks, folder rewritten once)', legacy);
    row('part: chunks.json read + parsed + hashed (both)', readMs);
    row('part: lexical index built from the chunks (every load before)', buildMs);
    row('part: lexical.bin read + sha256 + deserialized (every load now)', lexMs);
  } finally {
    if (process.env.BENCH_KEEP_DIR) console.log(`kept ${dir}`);
    else await fs.rm(dir, { recursive: true, force: true });
  }
}

await main();
