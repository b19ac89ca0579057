/**
 * Reads of the store: listDocuments paging and filters (a source prefix with '%' and '_' taken
 * literally), chunkIdsWhere filters (document ids, source prefix, content type, language, page
 * overlap with page-less chunks left out), getChunks in the order asked, documentChunks ranges,
 * batched iteration that sees every chunk once whatever the batch size, and the two reads every
 * collection search makes (failed documents, documents by id).
 */
import t from 'tap';
import path from 'node:path';
import { KbStore } from '../../src/kb/kb-store.ts';
import { makeChunks, versionOf, tempDir } from './fixtures/store-data.ts';

const store = new KbStore(path.join(tempDir(t), 'kb'));
t.teardown(() => store.close());
const c = store.createCollection('q', null);
const other = store.createCollection('other', null);

// 60 documents: sources https://site/a_N (N < 30) and https://site/b%N; en or de; pdf or html.
const docs = Array.from({ length: 60 }, (_, i) => {
  const source = i < 30 ? `https://site/a_${i}` : `https://site/b%${i}`;
  return store.ensureDocument(c.id, { source, source_kind: 'url', source_key: source, filename: null });
});
const chunkIds: Record<string, number[]> = {};
for (const [i, d] of docs.entries()) {
  if (i >= 50) continue; // 50..59 stay pending
  const r = store.replaceDocument(
    c.id,
    d.id,
    versionOf(d.source, String(i).padStart(64, '0'), { language: i % 2 ? 'de' : 'en', type: i % 3 ? 'pdf' : 'html' }),
    makeChunks(4, `d${i}`, { pages: i % 4 !== 3 }),
  );
  chunkIds[d.id] = r.added.map((x) => x.id);
}
store.markDocumentFailed(c.id, docs[0]!.id, { code: 'DOWNLOAD_ERROR', message: 'x' }, null);
const od = store.ensureDocument(other.id, { source: 'https://site/a_1', source_kind: 'url', source_key: 'https://site/a_1', filename: null });
store.replaceDocument(other.id, od.id, versionOf('https://site/a_1', 'f'.repeat(64), { language: 'de' }), makeChunks(4, 'other'));

t.test('listDocuments pages in insertion order with total and next_offset', async (t) => {
  const p1 = store.listDocuments(c.id, {});
  t.equal(p1.items.length, 50, 'default limit 50');
  t.equal(p1.total, 60);
  t.equal(p1.next_offset, 50);
  t.same(
    p1.items.map((d) => d.id),
    docs.slice(0, 50).map((d) => d.id),
  );
  const p2 = store.listDocuments(c.id, { offset: p1.next_offset! });
  t.equal(p2.items.length, 10);
  t.equal(p2.next_offset, null);
  t.equal(store.listDocuments(c.id, { limit: 100_000 }).items.length, 60, 'limit capped (500) but covers all 60');
  t.equal(store.listDocuments(c.id, { limit: 7, offset: 7 }).next_offset, 14);
  t.equal(store.listDocuments(c.id, { limit: 0 }).items.length, 1, 'limit at least 1');
});

t.test('listDocuments filters', async (t) => {
  t.equal(store.listDocuments(c.id, { status: 'pending' }).total, 10);
  t.equal(store.listDocuments(c.id, { status: 'failed' }).total, 1);
  t.equal(store.listDocuments(c.id, { status: 'ready' }).total, 49);
  t.equal(store.listDocuments(c.id, { source_prefix: 'https://site/a_' }).total, 30);
  t.equal(store.listDocuments(c.id, { source_prefix: 'https://site/a_1' }).total, 11, 'a_1, a_10..a_19');
  t.equal(store.listDocuments(c.id, { source_prefix: 'https://site/a%' }).total, 0, "'%' is literal");
  t.equal(store.listDocuments(c.id, { source_prefix: 'https://site/b%' }).total, 30);
  t.equal(store.listDocuments(c.id, { source_prefix: 'https://site/_' }).total, 0, "'_' is literal");
  t.equal(store.listDocuments(c.id, { language: 'de' }).total, 25);
  t.equal(store.listDocuments(c.id, { language: 'de', type: 'html', status: 'ready' }).total, docs.filter((_, i) => i < 50 && i % 2 && !(i % 3)).length);
  t.equal(store.listDocuments(other.id, {}).total, 1);
});

t.test('chunkIdsWhere filters', async (t) => {
  const all = store.chunkIdsWhere(c.id, {});
  t.equal(all.length, 200);
  t.same(all, [...all].sort((a, b) => a - b), 'ascending ids');
  t.same(store.chunkIdsWhere(c.id, { document_ids: [docs[3]!.id, docs[5]!.id, 'doc_unknown'] }), [...chunkIds[docs[3]!.id]!, ...chunkIds[docs[5]!.id]!]);
  t.same(store.chunkIdsWhere(c.id, { document_ids: [] }), [], 'an empty list matches nothing');
  t.same(store.chunkIdsWhere(c.id, { document_ids: [od.id] }), [], 'another collection’s document is not here');
  t.equal(store.chunkIdsWhere(c.id, { source_prefix: 'https://site/b%' }).length, 20 * 4);
  t.equal(store.chunkIdsWhere(c.id, { source_prefix: 'https://site/a_' }).length, 30 * 4);
  t.equal(store.chunkIdsWhere(c.id, { content_type: ['table'] }).length, 50, 'ord 0 and 5 of 4: one per document');
  t.equal(store.chunkIdsWhere(c.id, { content_type: ['table', 'text'] }).length, 200);
  t.equal(store.chunkIdsWhere(c.id, { language: ['de'] }).length, 25 * 4);
  t.equal(store.chunkIdsWhere(c.id, { language: ['de', 'en'] }).length, 200);
  t.equal(store.chunkIdsWhere(c.id, { language: ['xx'] }).length, 0);

  // Pages of ord 0..3: [1,1], [1,2], [2,2], [2,3]; documents with i % 4 === 3 have none.
  const paged = docs.slice(0, 50).filter((_, i) => i % 4 !== 3).length;
  t.equal(store.chunkIdsWhere(c.id, { page_from: 1 }).length, paged * 4, 'page-less chunks excluded');
  t.equal(store.chunkIdsWhere(c.id, { page_from: 3 }).length, paged, 'only [2,3] reaches page 3');
  t.equal(store.chunkIdsWhere(c.id, { page_to: 1 }).length, paged * 2, '[1,1] and [1,2] start by page 1');
  t.equal(store.chunkIdsWhere(c.id, { page_from: 2, page_to: 2 }).length, paged * 3, 'overlap with page 2: [1,2] [2,2] [2,3]');
  t.equal(store.chunkIdsWhere(c.id, { page_from: 4, page_to: 9 }).length, 0);
  const combined = store.chunkIdsWhere(c.id, { document_ids: [docs[2]!.id, docs[4]!.id], content_type: ['text'], page_from: 2, language: ['en'] });
  t.same(combined, [chunkIds[docs[2]!.id]![1]!, chunkIds[docs[2]!.id]![2]!, chunkIds[docs[2]!.id]![3]!, chunkIds[docs[4]!.id]![1]!, chunkIds[docs[4]!.id]![2]!, chunkIds[docs[4]!.id]![3]!]);
  t.equal(store.chunkIdsWhere(other.id, { language: ['de'] }).length, 4);
});

t.test('getChunks keeps the asked order and leaves out missing ids; documentChunks by ord range', async (t) => {
  const ids = chunkIds[docs[6]!.id]!;
  const asked = [ids[2]!, 999_999, ids[0]!];
  t.same(
    store.getChunks(asked).map((x) => x.id),
    [ids[2], ids[0]],
  );
  t.same(store.getChunks([]), []);
  const ch = store.getChunks([ids[1]!])[0]!;
  t.same(ch.heading_path, ['Intro', 'Section 1']);
  t.match(ch, { document_id: docs[6]!.id, collection_id: c.id, ord: 1, page_start: 1, page_end: 2, char_start: 100, char_end: 199, importance: 0.1, content_type: 'text' });
  t.same(
    store.documentChunks(docs[6]!.id, 1, 2).map((x) => x.ord),
    [1, 2],
  );
  t.same(
    store.documentChunks(docs[6]!.id).map((x) => x.ord),
    [0, 1, 2, 3],
  );
  t.same(store.documentChunks('doc_none'), []);
});

t.test('iterateChunks and iterateVectors see every chunk once, in id order, at any batch size', async (t) => {
  const expected = store.chunkIdsWhere(c.id, {});
  for (const size of [1, 3, 199, 200, 201, 2000]) {
    t.same(
      [...store.iterateChunks(c.id, size)].map((x) => x.id),
      expected,
      `batch ${size}`,
    );
  }
  t.same([...store.iterateVectors(c.id, 7)], [], 'no vectors stored in a lexical collection');
});

t.test('what every search reads: failed documents as listDocuments lists them, and documents by id from this collection only', async (t) => {
  const otherDoc = store.ensureDocument(other.id, { source: 'https://site/other', source_kind: 'url', source_key: 'https://site/other', filename: null });
  store.markDocumentFailed(other.id, otherDoc.id, { code: 'DOWNLOAD_ERROR', message: 'gone' }, null);
  for (const d of docs.slice(52, 57)) store.markDocumentFailed(c.id, d.id, { code: 'UNSUPPORTED_FORMAT', message: `no ${d.source}` }, null);
  for (const limit of [1, 3, 5, 10]) {
    t.same(store.failedDocuments(c.id, limit), store.listDocuments(c.id, { status: 'failed', limit }).items, `limit ${limit}`);
  }
  t.same(
    store.failedDocuments(c.id, 10).map((d) => d.id),
    [docs[0].id, ...docs.slice(52, 57).map((d) => d.id)],
    'the six failed ones (one from the start), oldest first',
  );
  t.same(store.failedDocuments(other.id, 10).map((d) => d.id), [otherDoc.id], "the other collection's own");

  const asked = [docs[7].id, 'doc_missing', otherDoc.id, docs[3].id, docs[7].id];
  const got = store.documentsByIds(c.id, asked);
  t.same(
    [...new Map(got.map((d) => [d.id, d])).values()].sort((a, b) => a.id.localeCompare(b.id)),
    [docs[3].id, docs[7].id].sort().map((id) => store.getDocument(c.id, id)),
    'each present document as getDocument gives it; missing ids and other collections left out',
  );
  t.same(store.documentsByIds(c.id, []), []);
});

t.test('records carry exactly the API fields, in column order: no internal columns', async (t) => {
  const failed = store.getDocument(c.id, docs[0]!.id)!;
  t.same(Object.keys(failed), [
    'id', 'collection_id', 'source', 'source_kind', 'source_key', 'filename', 'content_sha256', 'bytes', 'type', 'title', 'pages',
    'language', 'status', 'chunk_count', 'revision', 'created_at', 'updated_at', 'ingested_at', 'error',
  ]);
  t.same(failed.error, { code: 'DOWNLOAD_ERROR', message: 'x' });
  t.equal(store.getDocument(c.id, docs[1]!.id)!.error, null);
  const [chunk] = store.getChunks([chunkIds[docs[1]!.id]![0]!]);
  t.same(Object.keys(chunk!), ['id', 'document_id', 'collection_id', 'ord', 'text', 'page_start', 'page_end', 'heading_path', 'char_start', 'char_end', 'importance', 'content_type']);
  t.ok(Array.isArray(chunk!.heading_path), 'heading_path parsed from its JSON column');
  const [indexed] = store.getChunksForIndex([chunk!.id]);
  t.equal(indexed!.language, 'de', 'chunks read for indexing carry their document language');
  t.same(Object.keys(indexed!).at(-1), 'language');
});
