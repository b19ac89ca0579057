import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { CollectionIndexes } from '../../src/kb/collection-index.ts';
import type { ChunkRecord, CollectionRecord, CommitResult, DocumentRecord, KbStoreApi } from '../../src/kb/types.ts';
import { generatedChunks, rng } from './index-lexical-fixtures.ts';

const DIM = 8;

/** The two store reads the indexes use, over arrays, counting how often each is called. */
class FakeStore implements Pick<KbStoreApi, 'iterateChunks' | 'iterateVectors'> {
  chunks: ChunkRecord[] = [];
  vectors = new Map<number, Float32Array>();
  chunkReads = 0;
  vectorReads = 0;
  *iterateChunks(collectionId: number): IterableIterator<ChunkRecord> {
    this.chunkReads++;
    for (const c of [...this.chunks].sort((a, b) => a.id - b.id)) if (c.collection_id === collectionId) yield c;
  }
  *iterateVectors(collectionId: number): IterableIterator<{ id: number; vector: Float32Array }> {
    this.vectorReads++;
    for (const c of [...this.chunks].sort((a, b) => a.id - b.id)) if (c.collection_id === collectionId && this.vectors.has(c.id)) yield { id: c.id, vector: this.vectors.get(c.id)! };
  }
}

function chunkRecords(n: number, seed: number, firstId: number, collectionId = 7): ChunkRecord[] {
  return generatedChunks(n, seed, firstId).map((c, i) => ({
    ...c,
    document_id: `doc-${Math.floor(i / 10)}`,
    collection_id: collectionId,
    ord: i % 10,
    page_start: null,
    page_end: null,
    char_start: 0,
    char_end: c.text.length,
    importance: 0.5,
    content_type: 'text',
  }));
}

function vectorFor(id: number): Float32Array {
  const r = rng(id);
  return Float32Array.from({ length: DIM }, () => r() - 0.5);
}

const collection = (version: number, embedded: boolean): CollectionRecord => ({
  id: 7,
  name: 'docs',
  description: null,
  version,
  embedder: embedded ? 'test/embedder' : null,
  dimension: embedded ? DIM : null,
  chunk_size: null,
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-01T00:00:00.000Z',
});

class Log {
  lines: Array<{ level: string; obj: Record<string, unknown> }> = [];
  info(obj: object) {
    this.lines.push({ level: 'info', obj: obj as Record<string, unknown> });
  }
  warn(obj: object) {
    this.lines.push({ level: 'warn', obj: obj as Record<string, unknown> });
  }
  reasons() {
    return this.lines.filter((l) => l.obj.event === 'kb.index_rebuild').map((l) => String(l.obj.reason));
  }
}

async function tempDir(t: Test): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'kb-ix-'));
  t.teardown(() => fs.rm(dir, { recursive: true, force: true }));
  return path.join(dir, 'indexes', '7');
}


for (const embedded of [false, true]) {
  t.test(`${embedded ? 'lexical + dense' : 'lexical only'}: rebuild, persist, load, stale and corrupt snapshots`, async (t) => {
    const dir = await tempDir(t);
    const store = new FakeStore();
    store.chunks = chunkRecords(300, 1, 1);
    if (embedded) for (const c of store.chunks) store.vectors.set(c.id, vectorFor(c.id));
    const noPersist = { persistAfterRebuild: false };

    // 1. Nothing on disk: rebuilt from the store.
    let log = new Log();
    const first = await CollectionIndexes.open(dir, collection(5, embedded), store, { log, ...noPersist });
    t.equal(store.chunkReads, 1, 'chunks read from the store');
    t.equal(store.vectorReads, embedded ? 1 : 0, embedded ? 'vectors read from the store' : 'no vectors for a lexical-only collection');
    t.same(log.reasons(), ['no snapshot']);
    t.equal(first.version, 5);
    t.equal(first.lexical.size, 300);
    t.equal(first.dense?.size ?? null, embedded ? 300 : null);
    const q = store.chunks[17].text.split(' ').slice(0, 3).join(' ');
    const hitsBefore = first.lexical.search(q, 10);
    t.ok(hitsBefore.length > 0);

    // 2. A commit: chunks replaced, version 6; persisted (twice at once: serialized, shared).
    const added = chunkRecords(20, 2, 1000);
    if (embedded) for (const c of added) store.vectors.set(c.id, vectorFor(c.id));
    const removed = store.chunks.filter((c) => c.document_id === 'doc-3').map((c) => c.id);
    store.chunks = [...store.chunks.filter((c) => !removed.includes(c.id)), ...added];
    const commit: CommitResult = {
      document: {} as DocumentRecord,
      version: 6,
      removedChunkIds: removed,
      added,
      vectors: embedded ? added.map((c) => vectorFor(c.id)) : undefined,
    };
    await first.apply(commit);
    t.equal(first.version, 6);
    t.equal(first.lexical.size, 310);
    for (const id of removed) t.equal(first.lexical.has(id), false);
    if (embedded) {
      t.equal(first.dense!.size, 310);
      t.equal(first.dense!.search(vectorFor(1005), 1)[0].id, 1005);
    }
    await first.apply(commit); // replayed: at or below the version, skipped
    t.equal(first.lexical.size, 310);
    await Promise.all([first.persist(), first.persist(), first.persist()]);
    const files = (await fs.readdir(dir)).sort();
    t.same(files, embedded ? ['dense.hnsw', 'dense.hnsw.json', 'lexical.bin', 'manifest.json'] : ['lexical.bin', 'manifest.json'], 'no temp files left');
    t.equal(first.stats().persisted_version, 6);
    const hitsAt6 = first.lexical.search(q, 10);

    // 3. Reopen at the same version: loaded, the store untouched.
    log = new Log();
    const second = await CollectionIndexes.open(dir, collection(6, embedded), store, { log, ...noPersist });
    t.equal(store.chunkReads, 1, 'loaded from the snapshot: chunks not read again');
    t.equal(store.vectorReads, embedded ? 1 : 0, 'vectors not read again');
    t.same(log.reasons(), []);
    t.equal(second.stats().source, 'snapshot');
    t.equal(second.version, 6);
    t.same(second.lexical.search(q, 10), hitsAt6, 'same scores as before the restart');
    if (embedded) t.equal(second.dense!.search(vectorFor(1005), 1)[0].id, 1005);

    // 4. The collection moved on without a persist: stale snapshot, rebuilt.
    log = new Log();
    const third = await CollectionIndexes.open(dir, collection(7, embedded), store, { log, ...noPersist });
    t.equal(store.chunkReads, 2);
    t.match(log.reasons(), [/snapshot at version 6, collection at 7/]);
    t.equal(third.version, 7);
    t.same(third.lexical.search(q, 10), hitsAt6, 'the rebuild scores as the mutable index did');

    // 5. A corrupt lexical file (checksummed), then a corrupt dense file: not served, rebuilt.
    const lexFile = path.join(dir, 'lexical.bin');
    const bytes = await fs.readFile(lexFile);
    bytes[100] ^= 0xff;
    await fs.writeFile(lexFile, bytes);
    log = new Log();
    await CollectionIndexes.open(dir, collection(6, embedded), store, { log, ...noPersist });
    t.equal(store.chunkReads, 3);
    t.match(log.reasons(), [/lexical snapshot unusable: .*checksum/]);
    bytes[100] ^= 0xff;
    await fs.writeFile(lexFile, bytes);
    t.equal((await CollectionIndexes.open(dir, collection(6, embedded), store, noPersist)).stats().source, 'snapshot', 'restored: loads again');
    if (embedded) {
      const hnswFile = path.join(dir, 'dense.hnsw');
      const hb = await fs.readFile(hnswFile);
      hb[hb.length - 10] ^= 0xff;
      await fs.writeFile(hnswFile, hb);
      log = new Log();
      const rebuilt = await CollectionIndexes.open(dir, collection(6, embedded), store, { log, ...noPersist });
      t.match(log.reasons(), [/dense snapshot unusable: .*corrupt/]);
      t.equal(rebuilt.dense!.size, 310);
    }
    // A manifest edited by hand fails its own checksum.
    const mFile = path.join(dir, 'manifest.json');
    const m = JSON.parse(await fs.readFile(mFile, 'utf8'));
    await fs.writeFile(mFile, JSON.stringify({ ...m, version: 99 }));
    log = new Log();
    await CollectionIndexes.open(dir, collection(99, embedded), store, { log, ...noPersist });
    t.match(log.reasons(), [/manifest fails its checksum/]);

    // 6. Default: a rebuild persists at once, so the next open loads; removeChunks; destroy.
    const fourth = await CollectionIndexes.open(dir, collection(8, embedded), store);
    await fourth.persist();
    const reads = store.chunkReads;
    const fifth = await CollectionIndexes.open(dir, collection(8, embedded), store, noPersist);
    t.equal(store.chunkReads, reads, 'the snapshot written after the rebuild is loaded');
    await fifth.removeChunks(9, added.slice(0, 5).map((c) => c.id));
    t.equal(fifth.lexical.size, 305);
    t.equal(fifth.version, 9);
    if (embedded) t.equal(fifth.dense!.size, 305);
    await fifth.persist();
    t.equal((await CollectionIndexes.open(dir, collection(9, embedded), store, noPersist)).lexical.size, 305);
    await fifth.destroy();
    await t.rejects(fs.stat(dir), { code: 'ENOENT' }, 'files removed');
    await fifth.persist();
    await t.rejects(fs.stat(dir), { code: 'ENOENT' }, 'a persist after destroy writes nothing');
  });
}

t.test('the first embedded document creates the dense index of a lexical-only collection', async (t) => {
  const dir = await tempDir(t);
  const store = new FakeStore();
  store.chunks = chunkRecords(30, 3, 1);
  const ix = await CollectionIndexes.open(dir, collection(1, false), store, { persistAfterRebuild: false });
  t.equal(ix.dense, null);
  const added = chunkRecords(5, 4, 500);
  const commit: CommitResult = { document: {} as DocumentRecord, version: 2, removedChunkIds: [], added, vectors: added.map((c) => vectorFor(c.id)) };
  await t.rejects(ix.apply(commit), { code: 'INTERNAL_ERROR' }, 'without the collection record it cannot know the embedder');
  await ix.apply(commit, collection(2, true));
  t.equal(ix.dense!.size, 5);
  t.equal(ix.dense!.embedderId, 'test/embedder');
  t.equal(ix.version, 2);
});
