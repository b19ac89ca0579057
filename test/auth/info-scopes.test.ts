/**
 * GET /info lists only the tools the caller's key may call, as MCP tools/list does: a search-only
 * key sees no delete, ingest or collection-admin tools; a full key sees them all.
 */
import t from 'tap';
import { buildTestApp } from '../helper.ts';
import { auth, writeKeyFile } from './fixtures.ts';

t.test('/info follows the key', async (t) => {
  const app = await buildTestApp(t, { env: { API_KEYS_FILE: writeKeyFile(t) } });
  const names = async (key: 'admin' | 'reader') => {
    const res = await app.inject({ url: '/info', headers: auth(key) });
    t.equal(res.statusCode, 200);
    return (res.json().tools as Array<{ name: string }>).map((x) => x.name);
  };
  const all = await names('admin');
  const reader = await names('reader');
  t.ok(all.includes('delete_document') && all.includes('ingest_documents') && all.includes('delete_collection'), 'a full key sees the destructive tools');
  t.ok(reader.includes('search_collection') && reader.includes('retrieve_chunks'), 'a search key sees what it may call');
  for (const hidden of ['delete_document', 'ingest_documents', 'delete_collection', 'create_collection']) {
    t.notOk(reader.includes(hidden), `a search key does not see ${hidden}`);
  }
  t.ok(reader.length < all.length);
});
