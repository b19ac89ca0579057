/**
 * A collection snapshot of format 2 (files written in place: lexical.bin, dense.hnsw(.json) and a
 * manifest with the lexical trailer and the dense manifest's sha256), generated here in that
 * layout, opens without a rebuild from the store, and the next persist writes it in the shared
 * snapshot format; a damaged one is still refused and rebuilt.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { COLLECTION_INDEX_FORMAT, CollectionIndexes } from '../../src/kb/collection-index.ts';
import { CollectionDenseIndex } from '../../src/kb/dense-index.ts';
import { CollectionLexicalIndex } from '../../src/kb/lexical-index.ts';
import type { ChunkRecord, CollectionRecord, KbStoreApi } from '../../src/kb/types.ts';
import { Analyzer, SERVER_ANALYZER } from '../../src/retrieval/tokenizer.ts';
import { generatedChunks, rng } from './index-lexical-fixtures.ts';

const DIM = 8;
const DB = 'd'.repeat(32);
const sha = (b: Uint8Array | string) => createHash('sha256').update(b).digest('hex');

class FakeStore implements Pick<KbStoreApi, 'iterateChunks' | 'iterateVectors' | 'databaseId'> {
  chunkReads = 0;
  constructor(readonly chunks: ChunkRecord[], readonly vectors: Map<number, Float32Array>) {}
  databaseId(): string {
    return DB;
  }
  *iterateChunks(): IterableIterator<ChunkRecord> {
    this.chunkReads++;
    yield* this.chunks;
  }
  *iterateVectors(): IterableIterator<{ id: number; vector: Float32Array }> {
    for (const c of this.chunks) yield { id: c.id, vector: this.vectors.get(c.id)! };
  }
}

const collection: CollectionRecord = {
  id: 3, name: 'docs', description: null, version: 12, embedder: 'test/embedder', dimension: DIM, chunk_size: null,
  created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z',
};

function fixture() {
  const chunks: ChunkRecord[] = generatedChunks(200, 5, 1).map((c, i) => ({
    ...c, document_id: `doc-${i >> 3}`, collection_id: 3, ord: i & 7, page_start: null, page_end: null,
    char_start: 0, char_end: c.text.length, importance: 0.5, content_type: 'text',
  }));
  const vectors = new Map(chunks.map((c) => {
    const r = rng(c.id);
    return [c.id, Float32Array.from({ length: DIM }, () => r() - 0.5)] as const;
  }));
  return { chunks, vectors };
}

/** What the previous version wrote for the collection, in place, manifest format 2. */
async function writeFormat2(dir: string, chunks: ChunkRecord[], vectors: Map<number, Float32Array>): Promise<void> {
  await fs.mkdir(dir, { recursive: true });
  const lex = new CollectionLexicalIndex(new Analyzer(SERVER_ANALYZER));
  lex.add(chunks.map((c) => ({ id: c.id, text: c.text, heading_path: c.heading_path })));
  const buf = lex.serialize({ databaseId: DB });
  await fs.writeFile(path.join(dir, 'lexical.bin'), buf);
  const dense = await CollectionDenseIndex.create({ embedderId: 'test/embedder', dimension: DIM });
  await dense.add(chunks.map((c) => c.id), chunks.map((c) => vectors.get(c.id)!));
  await dense.save(path.join(dir, 'dense.hnsw'), { databaseId: DB });
  const manifest: Record<string, unknown> = {
    format: 2, database_id: DB, collection_id: 3, version: 12, analyzer: lex.analyzer.signature, embedder: 'test/embedder', dimension: DIM,
    chunks: lex.size, lexical: { bytes: buf.length, checksum: buf.subarray(buf.length - 32).toString('hex') },
    dense: { sha256: sha(await fs.readFile(path.join(dir, 'dense.hnsw.json'))) }, saved_at: new Date().toISOString(),
  };
  manifest.checksum = sha(JSON.stringify(manifest));
  await fs.writeFile(path.join(dir, 'manifest.json'), JSON.stringify(manifest));
}

async function tempDir(t: Test): Promise<string> {
  const root = await fs.mkdtemp(path.join(os.tmpdir(), 'kb-format2-'));
  t.teardown(() => fs.rm(root, { recursive: true, force: true }));
  return path.join(root, 'indexes', '3');
}

t.test('a format-2 collection snapshot is loaded, not rebuilt, and written again in the current format', async (t) => {
  const dir = await tempDir(t);
  const { chunks, vectors } = fixture();
  await writeFormat2(dir, chunks, vectors);
  const store = new FakeStore(chunks, vectors);
  const ix = await CollectionIndexes.open(dir, collection, store, { persistAfterRebuild: false });
  t.equal(ix.stats().source, 'snapshot', 'loaded from the old files');
  t.equal(store.chunkReads, 0, 'the store was not read');
  t.equal(ix.lexical.size, 200);
  t.equal(ix.dense?.size, 200);
  const q = chunks[17]!.text.split(' ').slice(0, 3).join(' ');
  const before = ix.lexical.search(q, 5);
  t.ok(before.length > 0);
  t.equal(ix.dense!.search(vectors.get(42)!, 1)[0]?.id, 42);
  t.equal(ix.stats().persisted_version, null, 'counts as not saved in the current format');

  await ix.persist();
  const manifest = JSON.parse(await fs.readFile(path.join(dir, 'manifest.json'), 'utf8'));
  t.match(manifest, { format: COLLECTION_INDEX_FORMAT, kind: 'collection', database_id: DB, collection_id: 3, version: 12, key: null, content_sha256: null });
  t.same(Object.keys(manifest.files).sort(), ['dense.hnsw', 'dense.hnsw.json', 'lexical.bin']);
  t.same((await fs.readdir(dir)).sort(), ['dense.hnsw', 'dense.hnsw.json', 'lexical.bin', 'manifest.json']);
  t.same((await fs.readdir(path.dirname(dir))).sort(), ['3'], 'no temp or old folders beside it');

  const reopened = await CollectionIndexes.open(dir, collection, store, { persistAfterRebuild: false });
  t.equal(reopened.stats().source, 'snapshot');
  t.equal(reopened.stats().persisted_version, 12);
  t.equal(store.chunkReads, 0);
  t.same(reopened.lexical.search(q, 5), before, 'the same scores after the rewrite');
});

t.test('a damaged format-2 snapshot is refused with its reason and rebuilt from the store', async (t) => {
  const dir = await tempDir(t);
  const { chunks, vectors } = fixture();
  await writeFormat2(dir, chunks, vectors);
  const file = path.join(dir, 'lexical.bin');
  const b = await fs.readFile(file);
  b[b.length >> 1] ^= 0xff;
  await fs.writeFile(file, b);
  const store = new FakeStore(chunks, vectors);
  const ix = await CollectionIndexes.open(dir, collection, store, { persistAfterRebuild: false });
  t.equal(ix.stats().source, 'rebuild');
  t.match(ix.stats().rebuild_reason, /format 2: lexical snapshot unusable: .*checksum/);
  t.equal(store.chunkReads, 1);
  t.equal(ix.lexical.size, 200);
});
