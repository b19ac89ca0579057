/**
 * Per-document index folders written by earlier versions, generated here in their old layouts:
 *  - format 3 (meta.json + chunks.json + dense.hnsw(.json), no lexical.bin): read as it is,
 *    served without extracting or embedding again, and rewritten in the snapshot format
 *    (lexical.bin + dense.hnsw(.json) + chunks.json + manifest.json);
 *  - format 2 (hnswlib's file as index.hnsw, no dense manifest): not served; retrieve_chunks
 *    indexes the document again without being asked and replaces the folder.
 * Either way the answer is the same and the next start loads the new folder from disk.
 */
import t from 'tap';
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { CacheRegistry } from '../../src/cache/cache-registry.ts';
import type { DocumentSource } from '../../src/call-context.ts';
import type { ProcessedDocument } from '../../src/extractors/shared/types.ts';
import type { DocumentAccess, ModelLayer } from '../../src/retrieval/contracts.ts';
import { RetrievalService } from '../../src/retrieval/retrieval-service.ts';
import { INDEX_FORMAT_VERSION, IndexStore } from '../../src/retrieval/store/index-store.ts';
import type { Embedder } from '../../src/retrieval/types.ts';
import { handbookMarkdown } from '../fixtures-gen/texts.ts';

const URL_ = 'https://docs.example/handbook';
const content = handbookMarkdown();
const doc: ProcessedDocument = { kind: 'docx', content, metadata: {}, tables: [], images: [], urls: [], pages: [] };
const sha = (s: string) => createHash('sha256').update(s).digest('hex');

function access(calls: { load: number }): DocumentAccess {
  return {
    async fetch(source: DocumentSource) {
      const url = 'url' in source ? source.url : '';
      return { url, sha256: sha(content), source: url };
    },
    async load(source: DocumentSource) {
      calls.load++;
      const url = 'url' in source ? source.url : '';
      return { key: url, contentSha256: sha(content), source: url, doc };
    },
  };
}

/** Word hashing into 64 dimensions, L2-normalised: deterministic, enough for dense indexing. */
const embedded = { passages: 0 };
const embedder: Embedder = {
  id: 'test:hashing-64',
  dimension: 64,
  async embed(texts, kind) {
    if (kind === 'passage') embedded.passages += texts.length;
    return texts.map((text) => {
      const v = new Float32Array(64);
      for (const w of text.toLowerCase().match(/[a-z0-9]{3,}/g) ?? []) v[createHash('md5').update(w).digest()[0] % 64] += 1;
      const n = Math.hypot(...v) || 1;
      return v.map((x) => x / n);
    });
  },
};

const models: ModelLayer = {
  embedderFor: () => embedder,
  embedderById: (id) => (id === embedder.id ? embedder : null),
  denseUnavailableReason: () => null,
  rerank: async () => ({ status: 'unavailable', reason: 'none' }),
  rerankerId: () => null,
  rerankerUnavailableReason: () => 'no reranker in the test',
};

const ctx = () => ({ signal: new AbortController().signal, log: pino({ level: 'silent' }) });

const CURRENT = ['chunks.json', 'dense.hnsw', 'dense.hnsw.json', 'lexical.bin', 'manifest.json'];

/**
 * Turns a current folder into what version 3 wrote: no lexical.bin, no manifest.json, a meta.json
 * of format 3 (camelCase fields, the digests of the other files, a sha256 of itself).
 */
async function downgradeToFormat3(folder: string): Promise<void> {
  const m = JSON.parse(await fs.readFile(path.join(folder, 'manifest.json'), 'utf8'));
  await fs.rm(path.join(folder, 'manifest.json'));
  await fs.rm(path.join(folder, 'lexical.bin'));
  const digest = async (name: string) => {
    const buf = await fs.readFile(path.join(folder, name));
    return { bytes: buf.length, sha256: createHash('sha256').update(buf).digest('hex') };
  };
  const meta: Record<string, unknown> = {
    format: 3,
    key: m.key,
    embedderId: m.embedder,
    dimension: m.dimension,
    contentSha256: m.content_sha256,
    chunkCount: m.chunks,
    hnsw: m.hnsw,
    createdAt: m.saved_at,
    files: { 'dense.hnsw': await digest('dense.hnsw'), 'dense.hnsw.json': await digest('dense.hnsw.json'), 'chunks.json': await digest('chunks.json') },
  };
  meta.checksum = sha(JSON.stringify(meta));
  await fs.writeFile(path.join(folder, 'meta.json'), JSON.stringify(meta, null, 1));
}

/** Turns a current folder into what version 2 wrote: index.hnsw alone, meta format 2 with its checksum. */
async function downgradeToFormat2(folder: string): Promise<void> {
  await downgradeToFormat3(folder);
  await fs.rename(path.join(folder, 'dense.hnsw'), path.join(folder, 'index.hnsw'));
  await fs.rm(path.join(folder, 'dense.hnsw.json'));
  const meta = JSON.parse(await fs.readFile(path.join(folder, 'meta.json'), 'utf8'));
  meta.format = 2;
  meta.files['index.hnsw'] = meta.files['dense.hnsw'];
  delete meta.files['dense.hnsw'];
  delete meta.files['dense.hnsw.json'];
  delete meta.checksum;
  meta.checksum = sha(JSON.stringify(meta));
  await fs.writeFile(path.join(folder, 'meta.json'), JSON.stringify(meta, null, 1));
}

t.test('an index folder of format 3 is read and rewritten in the snapshot format, without extracting or embedding again', async (t) => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'rag-store-migration-'));
  t.teardown(() => fs.rm(dir, { recursive: true, force: true }));
  const calls = { load: 0 };
  const service = () => new RetrievalService({ documents: access(calls), caches: new CacheRegistry({ ttlMs: 60_000 }), models, store: new IndexStore({ dir }) });
  const ask = (svc: RetrievalService) => svc.retrieve({ sources: [{ url: URL_ }], query: 'database security administrator duties', topK: 5 }, ctx());

  const first = await ask(service());
  t.equal(first.retrieval.mode, 'hybrid');
  t.ok(first.results.length > 0);
  const [key] = (await fs.readdir(dir)).filter((n) => !n.startsWith('.'));
  const folder = path.join(dir, key!);
  await downgradeToFormat3(folder);
  t.same((await fs.readdir(folder)).sort(), ['chunks.json', 'dense.hnsw', 'dense.hnsw.json', 'meta.json'], 'a folder as version 3 left it');
  const passages = embedded.passages;

  const migrated = await ask(service());
  t.equal(migrated.retrieval.documents[0]!.index, 'disk', 'served from the old folder');
  t.same(migrated.results, first.results, 'the same answer');
  t.equal(calls.load, 1, 'not extracted again');
  t.equal(embedded.passages, passages, 'not embedded again');
  t.same((await fs.readdir(folder)).sort(), CURRENT, 'the folder is rewritten in the snapshot format');
  const manifest = JSON.parse(await fs.readFile(path.join(folder, 'manifest.json'), 'utf8'));
  t.match(manifest, { format: INDEX_FORMAT_VERSION, kind: 'document', key, content_sha256: sha(content), embedder: embedder.id, dimension: 64, database_id: null, collection_id: null, version: null });
  t.same((await fs.readdir(dir)).filter((n) => n.startsWith('.')), [], 'no temp or old folders left');

  const restarted = await ask(service());
  t.equal(restarted.retrieval.documents[0]!.index, 'disk', 'the next start loads the rewritten folder');
  t.same(restarted.results, first.results);
  t.equal(calls.load, 1);
  t.equal(embedded.passages, passages);
});

t.test('an index folder of format 2 is rebuilt in the current one without user action', async (t) => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'rag-store-migration-'));
  t.teardown(() => fs.rm(dir, { recursive: true, force: true }));
  const calls = { load: 0 };
  const service = () => new RetrievalService({ documents: access(calls), caches: new CacheRegistry({ ttlMs: 60_000 }), models, store: new IndexStore({ dir }) });
  const ask = (svc: RetrievalService) => svc.retrieve({ sources: [{ url: URL_ }], query: 'database security administrator duties', topK: 5 }, ctx());

  const first = await ask(service());
  t.equal(first.retrieval.mode, 'hybrid');
  const [key] = (await fs.readdir(dir)).filter((n) => !n.startsWith('.'));
  const folder = path.join(dir, key!);
  await downgradeToFormat2(folder);
  t.same((await fs.readdir(folder)).sort(), ['chunks.json', 'index.hnsw', 'meta.json'], 'a folder as version 2 left it');

  const migrated = await ask(service());
  t.equal(migrated.retrieval.documents[0]!.index, 'built', 'the old folder is not served: the document is indexed again');
  t.same(migrated.results, first.results, 'the same answer');
  t.equal(calls.load, 2, 'read again once, without user action');
  const manifest = JSON.parse(await fs.readFile(path.join(folder, 'manifest.json'), 'utf8'));
  t.equal(manifest.format, INDEX_FORMAT_VERSION, 'the folder is rewritten in the current format');
  t.same((await fs.readdir(folder)).sort(), CURRENT);

  const restarted = await ask(service());
  t.equal(restarted.retrieval.documents[0]!.index, 'disk', 'the next start loads the migrated folder');
  t.same(restarted.results, first.results);
  t.equal(calls.load, 2, 'no extraction after the restart');
});
