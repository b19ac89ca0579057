/**
 * searchCollection's filters (document ids, source prefix, content type, language, page range),
 * applied before ranking, and what every hit carries (document, source, title, pages, heading
 * path, chunk index), over a real KbStore and CollectionLexicalIndex.
 */
import t from 'tap';
import { searchCollection } from '../../src/kb/collection-search.ts';
import { filler, openFixture, signal, type SearchFixture } from './search-fixtures.ts';

const TERM = 'turbidity';

function build(t: Parameters<typeof openFixture>[0]): { fx: SearchFixture; ids: Record<string, string> } {
  const fx = openFixture(t, 'filters');
  const ids: Record<string, string> = {};
  // Every document has chunks mentioning TERM on pages 1-6, in several content types.
  const specs = [
    { key: 'https://a.example/water/plant-a.pdf', title: 'Plant A', language: 'en' },
    { key: 'https://a.example/water/plant-b.pdf', title: 'Plant B', language: 'de' },
    { key: 'https://b.example/lab/notes.txt', title: 'Lab notes', language: 'en' },
  ];
  specs.forEach((s, d) => {
    const { doc } = fx.add({
      ...s,
      chunks: Array.from({ length: 6 }, (_, i) => ({
        text: `${filler(d * 50 + i, 20)} The ${TERM} reading ${d}-${i} was logged.`,
        heading_path: [s.title, `Section ${i}`],
        page: i + 1,
        content_type: i === 2 ? ('table' as const) : i === 4 ? ('list' as const) : ('text' as const),
      })),
    });
    ids[s.key] = doc.id;
  });
  return { fx, ids };
}

t.test('no filters: hits carry their document, source, title, pages, heading path and chunk index', async (t) => {
  const { fx, ids } = build(t);
  const res = await searchCollection(fx.deps(), { query: `${TERM} reading`, top_k: 20 }, signal());
  t.equal(res.collection, 'filters');
  t.equal(res.total_chunks, 18);
  t.equal(res.filtered_chunks, null);
  t.equal(res.results.length, 18, 'every chunk mentions the term');
  for (const h of res.results) {
    const doc = fx.store.getDocument(fx.collection.id, h.document_id)!;
    t.equal(h.source, doc.source);
    t.equal(h.title, doc.title);
    const [chunk] = fx.store.getChunks([h.chunk_id]);
    t.equal(h.chunk_index, chunk!.ord);
    t.equal(h.page_start, chunk!.ord + 1);
    t.same(h.heading_path, [doc.title, `Section ${chunk!.ord}`]);
    t.equal(h.text, chunk!.text);
  }
  t.same(new Set(res.results.map((h) => h.document_id)), new Set(Object.values(ids)));
  t.same(res.errors, []);
});

t.test('each filter narrows the candidates before ranking; filtered_chunks counts what is left', async (t) => {
  const { fx, ids } = build(t);
  const run = (filters: object) => searchCollection(fx.deps(), { query: `${TERM} reading`, top_k: 20, filters }, signal());

  const byDoc = await run({ document_ids: [ids['https://b.example/lab/notes.txt']!] });
  t.equal(byDoc.filtered_chunks, 6);
  t.equal(byDoc.results.length, 6);
  t.ok(byDoc.results.every((h) => h.source === 'https://b.example/lab/notes.txt'));

  const byPrefix = await run({ source_prefix: 'https://a.example/water/' });
  t.equal(byPrefix.filtered_chunks, 12);
  t.ok(byPrefix.results.length === 12 && byPrefix.results.every((h) => h.source.startsWith('https://a.example/water/')));

  const byType = await run({ content_type: ['table', 'list'] });
  t.equal(byType.filtered_chunks, 6);
  t.ok(byType.results.every((h) => h.content_type === 'table' || h.content_type === 'list'));
  t.same(new Set(byType.results.map((h) => h.chunk_index)), new Set([2, 4]));

  const byLanguage = await run({ language: ['de'] });
  t.equal(byLanguage.filtered_chunks, 6);
  t.ok(byLanguage.results.every((h) => h.title === 'Plant B'));

  const byPages = await run({ page_from: 2, page_to: 3 });
  t.equal(byPages.filtered_chunks, 6);
  t.ok(byPages.results.every((h) => h.page_start! >= 2 && h.page_end! <= 3));

  const combined = await run({ source_prefix: 'https://a.example/', language: ['en'], page_from: 5 });
  t.equal(combined.filtered_chunks, 2);
  t.same(combined.results.map((h) => [h.title, h.page_start]).sort(), [['Plant A', 5], ['Plant A', 6]]);

  // Filters that leave nothing: no results, plainly said.
  const empty = await run({ document_ids: ['no-such-document'] });
  t.equal(empty.filtered_chunks, 0);
  t.same(empty.results, []);
  t.equal(empty.confidence, 'none');
  t.match(empty.message, /no chunk passes the filters/);
});

t.test('a failed document of the collection is listed in errors; the others are searched', async (t) => {
  const { fx } = build(t);
  const bad = fx.store.ensureDocument(fx.collection.id, { source: 'https://c.example/broken.pdf', source_kind: 'url', source_key: 'https://c.example/broken.pdf', filename: null });
  fx.store.markDocumentFailed(fx.collection.id, bad.id, { code: 'DOWNLOAD_ERROR', message: 'HTTP 404 Not Found from c.example' }, null);
  const res = await searchCollection(fx.deps(), { query: TERM }, signal());
  t.ok(res.results.length > 0);
  const failure = { code: 'DOWNLOAD_ERROR', message: 'HTTP 404 Not Found from c.example' };
  // retrieve_chunks' failure fields (source, code, message), with the document's id and the older `error`.
  t.same(res.errors, [{ source: 'https://c.example/broken.pdf', ...failure, document_id: bad.id, error: failure }]);
});

t.test('a repeated filter sees documents committed since (the id sets follow the collection version)', async (t) => {
  const { fx } = build(t);
  const filters = { source_prefix: 'https://b.example/' };
  const before = await searchCollection(fx.deps(), { query: TERM, top_k: 50, filters }, signal());
  t.equal(before.filtered_chunks, 6);
  fx.add({ key: 'https://b.example/lab/more.txt', title: 'More notes', chunks: [{ text: `The ${TERM} of the inlet.`, heading_path: ['More notes'] }] });
  const after = await searchCollection(fx.deps(), { query: TERM, top_k: 50, filters }, signal());
  t.equal(after.filtered_chunks, 7);
  t.ok(after.results.some((h) => h.title === 'More notes'));
});
