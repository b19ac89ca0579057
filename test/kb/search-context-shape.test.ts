/**
 * One reading-context shape in both search tools (src/contract/answer-schemas.ts HitContextSchema):
 * search_collection and retrieve_chunks, asked over REST on the real app for the same document
 * with the same context settings, answer contexts with the same fields, the same chunk_indexes
 * (counted as the hits' chunk_index) and the same text. search_collection also names the chunks
 * by chunk_id, which must be the hits' own ids.
 */
import t from 'tap';
import { jobEnded, kbWorld } from './surface-fixtures.ts';

const SHARED_FIELDS = ['chunk_indexes', 'kind', 'text', 'truncated'];

t.test('search_collection and retrieve_chunks answer one context shape', async (t) => {
  const { app, urls } = await kbWorld(t);
  const added = await app.inject({ method: 'POST', url: '/v1/collections/shape/documents', payload: { urls: [urls.volcanoes] } });
  t.equal(added.statusCode, 202, added.body);
  t.equal((await jobEnded(app, added.json().id)).status, 'succeeded');

  for (const kind of ['neighbors', 'section'] as const) {
    const query = 'caldera magma chamber';
    const search = await app.inject({ method: 'POST', url: '/v1/collections/shape/search', payload: { query, top_k: 1, context: kind, context_chars: 2000 } });
    t.equal(search.statusCode, 200, search.body);
    const retrieve = await app.inject({ method: 'POST', url: '/v1/documents/retrieve', payload: { document_url: urls.volcanoes, query, top_k: 1, context: kind, context_chars: 2000 } });
    t.equal(retrieve.statusCode, 200, retrieve.body);
    const fromSearch = search.json().results[0];
    const fromRetrieve = retrieve.json().results[0];
    t.ok(fromSearch?.context && fromRetrieve?.context, `${kind}: both tools answer a context`);
    const a = fromSearch.context;
    const b = fromRetrieve.context;
    t.same(Object.keys(b).sort(), SHARED_FIELDS, `${kind}: retrieve_chunks' context fields`);
    t.same(Object.keys(a).filter((k) => k !== 'chunk_ids').sort(), SHARED_FIELDS, `${kind}: search_collection's are the same (and chunk_ids)`);
    t.equal(a.kind, kind);
    t.equal(b.kind, kind);
    t.equal(fromSearch.chunk_index, fromRetrieve.chunk_index, `${kind}: the same hit`);
    t.ok(a.chunk_indexes.includes(fromSearch.chunk_index), `${kind}: the hit is in its context, by chunk_index`);
    t.same(a.chunk_indexes, b.chunk_indexes, `${kind}: the same chunks`);
    t.equal(a.text, b.text, `${kind}: the same text`);
    t.equal(a.truncated, b.truncated);
    t.equal(a.chunk_ids.length, a.chunk_indexes.length, 'one chunk_id per chunk_index');
    t.ok(a.chunk_ids.includes(fromSearch.chunk_id), "chunk_ids are the hits' own ids");
  }
});
