/**
 * replaceDocument swaps a document's chunk set in one transaction (a failure half-way leaves the
 * old set), bumps the collection version and the revision, stores vectors that read back bit for
 * bit; chunk ids are never reused after deletes; failures keep the previous version; deletes keep
 * a history trail ending in 'deleted'.
 */
import t, { type Test } from 'tap';
import path from 'node:path';
import { KbStore } from '../../src/kb/kb-store.ts';
import type { NewChunk } from '../../src/kb/types.ts';
import { makeChunks, makeVectors, versionOf, tempDir } from './fixtures/store-data.ts';

function setup(t: Test) {
  const dir = path.join(tempDir(t), 'kb');
  const store = new KbStore(dir);
  t.teardown(() => store.close());
  const c = store.createCollection('docs', null);
  store.setCollectionEmbedder(c.id, 'test-embedder', 8);
  const doc = store.ensureDocument(c.id, { source: 'https://h/a.pdf', source_kind: 'url', source_key: 'https://h/a.pdf', filename: 'a.pdf' });
  return { dir, store, c, doc };
}

t.test('ensureDocument: a pending row, kept as is when the source exists', async (t) => {
  const { store, c, doc } = setup(t);
  t.match(doc.id, /^doc_[0-9a-f]{12}$/);
  t.match(doc, { status: 'pending', chunk_count: 0, revision: 0, content_sha256: null, error: null, ingested_at: null, filename: 'a.pdf' });
  t.same(store.ensureDocument(c.id, { source: 'other', source_kind: 'url', source_key: 'https://h/a.pdf', filename: null }), doc);
  t.same(store.findDocumentBySourceKey(c.id, 'https://h/a.pdf'), doc);
  t.equal(store.findDocumentBySourceKey(c.id, 'https://h/none'), null);
  t.equal(store.getDocument(c.id, 'doc_000000000000'), null);
  t.equal(store.getCollection('docs')!.version, 0, 'a pending row does not bump the version');
  t.throws(() => store.ensureDocument(777, { source: 's', source_kind: 'url', source_key: 's', filename: null }), { code: 'NOT_FOUND' });
});

t.test('replace swaps the chunk set, bumps version and revision, and vectors round-trip', async (t) => {
  const { store, c, doc } = setup(t);
  const v1 = store.replaceDocument(c.id, doc.id, versionOf('https://h/a.pdf', '1'.repeat(64), { job_id: 'job_1' }), makeChunks(5, 'v1'), makeVectors(5, 8, 1));
  t.equal(v1.version, 1);
  t.same(v1.removedChunkIds, []);
  t.equal(v1.added.length, 5);
  t.match(v1.document, { status: 'ready', revision: 1, chunk_count: 5, content_sha256: '1'.repeat(64), title: 'title of https://h/a.pdf' });
  t.ok(v1.document.ingested_at);
  const ids1 = v1.added.map((x) => x.id);
  t.same(store.getChunks(ids1), v1.added, 'stored chunks read back as returned');

  const vectors2 = makeVectors(3, 8, 2);
  const v2 = store.replaceDocument(c.id, doc.id, versionOf('https://h/a.pdf', '2'.repeat(64)), makeChunks(3, 'v2'), vectors2);
  t.equal(v2.version, 2);
  t.same(v2.removedChunkIds, ids1);
  t.match(v2.document, { revision: 2, chunk_count: 3 });
  t.ok(
    v2.added.every((x) => x.id > Math.max(...ids1)),
    'new ids above all old ones',
  );
  t.same(store.getChunks(ids1), [], 'old chunks are gone');
  t.same(
    store.documentChunks(doc.id).map((x) => x.text.split(' ')[0]),
    ['v2', 'v2', 'v2'],
  );
  const stored = [...store.iterateVectors(c.id)];
  t.same(
    stored.map((x) => x.id),
    v2.added.map((x) => x.id),
  );
  for (let i = 0; i < 3; i++) t.same(Array.from(stored[i]!.vector), Array.from(vectors2[i]!), `vector ${i} bit for bit`);
  t.equal(store.getCollection('docs')!.version, 2);
  t.same(
    store.history(doc.id).map((h) => [h.action, h.content_sha256, h.job_id]),
    [
      ['ingested', '1'.repeat(64), 'job_1'],
      ['ingested', '2'.repeat(64), null],
    ],
  );
});

t.test('a replacement failing half-way changes nothing', async (t) => {
  const { store, c, doc } = setup(t);
  const v1 = store.replaceDocument(c.id, doc.id, versionOf('https://h/a.pdf', '1'.repeat(64)), makeChunks(4, 'v1'), makeVectors(4, 8, 1));
  const bad = makeChunks(6, 'v2');
  (bad[4] as { text: unknown }).text = null; // NOT NULL fails at the 5th insert
  t.throws(() => store.replaceDocument(c.id, doc.id, versionOf('https://h/a.pdf', '2'.repeat(64)), bad as NewChunk[], makeVectors(6, 8, 2)));
  t.throws(() => store.replaceDocument(c.id, doc.id, versionOf('https://h/a.pdf', '3'.repeat(64)), makeChunks(2, 'v3'), makeVectors(2, 4, 3)), { code: 'CONFLICT' }, 'wrong dimension');
  t.throws(() => store.replaceDocument(c.id, 'doc_missing', versionOf('x', '4'.repeat(64)), makeChunks(1, 'v4')), { code: 'NOT_FOUND' });
  const b = store.ensureDocument(c.id, { source: 'https://h/b', source_kind: 'url', source_key: 'https://h/b', filename: null });
  t.throws(() => store.replaceDocument(c.id, b.id, versionOf('https://h/a.pdf', '5'.repeat(64)), makeChunks(1, 'v5')), { code: 'CONFLICT' }, 'another document’s source_key');
  t.same(store.documentChunks(doc.id), v1.added, 'the old chunks are all there');
  t.equal([...store.iterateVectors(c.id)].length, 4);
  t.match(store.getDocument(c.id, doc.id), { revision: 1, chunk_count: 4, content_sha256: '1'.repeat(64) });
  t.equal(store.getCollection('docs')!.version, 1);
  t.equal(store.history(doc.id).length, 1);
});

t.test('a failed attempt keeps the previous version searchable', async (t) => {
  const { store, c, doc } = setup(t);
  const v1 = store.replaceDocument(c.id, doc.id, versionOf('https://h/a.pdf', '1'.repeat(64)), makeChunks(2, 'v1'), makeVectors(2, 8, 1));
  const failed = store.markDocumentFailed(c.id, doc.id, { code: 'PROCESSING_ERROR', message: 'bad xref' }, 'job_9');
  t.match(failed, { status: 'failed', error: { code: 'PROCESSING_ERROR', message: 'bad xref' }, revision: 1, chunk_count: 2 });
  t.same(store.documentChunks(doc.id), v1.added);
  t.equal(store.getCollection('docs')!.version, 1, 'a failure does not bump the version');
  store.recordSkipped(doc.id, '1'.repeat(64), 'job_10');
  t.same(
    store.history(doc.id).map((h) => [h.action, h.job_id]),
    [
      ['ingested', null],
      ['failed', 'job_9'],
      ['skipped', 'job_10'],
    ],
  );
  const v2 = store.replaceDocument(c.id, doc.id, versionOf('https://h/a.pdf', '2'.repeat(64)), makeChunks(1, 'v2'), makeVectors(1, 8, 2));
  t.match(v2.document, { status: 'ready', error: null, revision: 2 });
});

t.test('delete removes chunks and vectors, keeps a history trail; chunk ids are never reused', async (t) => {
  const { dir, store, c, doc } = setup(t);
  const v1 = store.replaceDocument(c.id, doc.id, versionOf('https://h/a.pdf', '1'.repeat(64)), makeChunks(3, 'v1'), makeVectors(3, 8, 1));
  const maxId = Math.max(...v1.added.map((x) => x.id));
  const del = store.deleteDocument(c.id, doc.id);
  t.same(del, { version: 2, removedChunkIds: v1.added.map((x) => x.id) });
  t.equal(store.getDocument(c.id, doc.id), null);
  t.same([...store.iterateChunks(c.id)], []);
  t.same([...store.iterateVectors(c.id)], []);
  t.same(
    store.history(doc.id).map((h) => h.action),
    ['ingested', 'deleted'],
  );
  t.throws(() => store.deleteDocument(c.id, doc.id), { code: 'NOT_FOUND' });
  store.close();

  // Reopen: AUTOINCREMENT keeps the high-water mark on disk, even with the table empty.
  const again = new KbStore(dir);
  t.teardown(() => again.close());
  const d2 = again.ensureDocument(c.id, { source: 'https://h/a.pdf', source_kind: 'url', source_key: 'https://h/a.pdf', filename: null });
  t.not(d2.id, doc.id, 'a new document id');
  const v2 = again.replaceDocument(c.id, d2.id, versionOf('https://h/a.pdf', '2'.repeat(64)), makeChunks(2, 'v2'), makeVectors(2, 8, 2));
  t.ok(
    v2.added.every((x) => x.id > maxId),
    `ids ${v2.added.map((x) => x.id)} above ${maxId}`,
  );
  t.equal(v2.version, 3);
});
