/**
 * Collections in the store: create, read, list, stats, embedder, delete with everything under it;
 * a taken name is CONFLICT, a bad name VALIDATION_ERROR, an unknown one null.
 */
import t, { type Test } from 'tap';
import path from 'node:path';
import { KbStore } from '../../src/kb/kb-store.ts';
import { makeChunks, makeVectors, versionOf, tempDir } from './fixtures/store-data.ts';

function openStore(t: Test): KbStore {
  const store = new KbStore(path.join(tempDir(t), 'kb'));
  t.teardown(() => store.close());
  return store;
}

t.test('create, get, list; duplicate name CONFLICT; bad name VALIDATION_ERROR; unknown null', async (t) => {
  const store = openStore(t);
  const a = store.createCollection('alpha', 'first');
  t.match(a, { name: 'alpha', description: 'first', version: 0, embedder: null, dimension: null });
  t.type(a.id, 'number');
  t.match(a.created_at, /^\d{4}-\d\d-\d\dT/);
  store.createCollection('beta', null);
  t.throws(() => store.createCollection('alpha', 'again'), { code: 'CONFLICT', message: /"alpha" already exists/ });
  t.throws(() => store.createCollection('Bad Name', null), { code: 'VALIDATION_ERROR' });
  t.throws(() => store.createCollection('', null), { code: 'VALIDATION_ERROR' });
  t.same(store.getCollection('alpha'), a);
  t.equal(store.getCollection('nope'), null);
  t.equal(store.getCollectionById(9999), null);
  t.same(
    store.listCollections().map((c) => c.name),
    ['alpha', 'beta'],
  );
  t.throws(() => store.deleteCollection(9999), { code: 'NOT_FOUND' });
});

t.test('embedder is fixed once; a different one is CONFLICT', async (t) => {
  const store = openStore(t);
  const c = store.createCollection('emb', null);
  store.setCollectionEmbedder(c.id, 'onnx:m:q8', 4);
  store.setCollectionEmbedder(c.id, 'onnx:m:q8', 4);
  t.match(store.getCollection('emb'), { embedder: 'onnx:m:q8', dimension: 4, version: 0 });
  t.throws(() => store.setCollectionEmbedder(c.id, 'onnx:other', 8), { code: 'CONFLICT' });
  t.throws(() => store.setCollectionEmbedder(12345, 'x', 4), { code: 'NOT_FOUND' });
});

t.test('stats aggregate documents by status, language, type; delete removes everything under it', async (t) => {
  const store = openStore(t);
  const c = store.createCollection('stats', null);
  const other = store.createCollection('other', null);
  store.setCollectionEmbedder(c.id, 'e', 3);
  const d1 = store.ensureDocument(c.id, { source: 'https://h/1', source_kind: 'url', source_key: 'https://h/1', filename: null });
  const d2 = store.ensureDocument(c.id, { source: 'https://h/2', source_kind: 'url', source_key: 'https://h/2', filename: null });
  store.ensureDocument(c.id, { source: 'https://h/3', source_kind: 'url', source_key: 'https://h/3', filename: null });
  store.replaceDocument(c.id, d1.id, versionOf('https://h/1', 'a'.repeat(64), { bytes: 100, pages: 3, language: 'en', type: 'pdf' }), makeChunks(4, 'v1'), makeVectors(4, 3, 1));
  store.replaceDocument(c.id, d2.id, versionOf('https://h/2', 'b'.repeat(64), { bytes: 50, pages: 2, language: 'fr', type: 'pdf' }), makeChunks(3, 'v1'), makeVectors(3, 3, 2));
  store.markDocumentFailed(c.id, d2.id, { code: 'DOWNLOAD_ERROR', message: 'gone' }, 'job_x');
  const od = store.ensureDocument(other.id, { source: 'https://h/1', source_kind: 'url', source_key: 'https://h/1', filename: null });
  store.replaceDocument(other.id, od.id, versionOf('https://h/1', 'c'.repeat(64)), makeChunks(2, 'v1'));
  store.createJob({ id: 'job_stats1', collection: 'stats', status: 'succeeded', reason: null, items: [], counts: { total: 0, done: 0, skipped: 0, failed: 0, cancelled: 0 }, created_at: new Date().toISOString(), started_at: null, finished_at: null, resumed: 0 });

  t.same(store.collectionStats(c.id), {
    documents: 3,
    documents_by_status: { pending: 1, ready: 1, failed: 1 },
    chunks: 7,
    bytes: 150,
    pages: 5,
    languages: { en: 1, fr: 1 },
    types: { pdf: 2 },
  });
  t.same(store.deleteCollection(c.id), { documents: 3, chunks: 7 });
  t.equal(store.getCollection('stats'), null);
  t.equal(store.getDocument(c.id, d1.id), null);
  t.equal(store.getJob('job_stats1'), null, 'its jobs went');
  t.same(store.history(d1.id), [], 'its history went');
  t.same([...store.iterateChunks(c.id)], []);
  t.same([...store.iterateVectors(c.id)], []);
  t.equal(store.collectionStats(other.id).chunks, 2, 'the other collection is untouched');
  t.equal([...store.iterateChunks(other.id)].length, 2);
});
