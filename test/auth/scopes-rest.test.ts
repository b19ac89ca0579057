/**
 * Scoped keys over REST (app.inject): a table of key x operation -> HTTP status. A collection
 * outside a key's patterns, and its jobs, answer 404 as if they did not exist; a visible one
 * without the action answers 403 FORBIDDEN; no key or an expired one 401. Rows that change
 * something list the keys refused first and the one allowed last.
 */
import t from 'tap';
import { auth, KEYS, scopedWorld, type KeyName } from './fixtures.ts';
import { kbWorld, listenLoopback, readSse } from '../kb/surface-fixtures.ts';

type Who = KeyName | 'none';
interface Row {
  op: string;
  method: 'GET' | 'POST' | 'DELETE';
  url: string;
  body?: unknown;
  expect: Partial<Record<Who, number>>;
}

t.test('REST: every scope against every route', async (t) => {
  const w = await scopedWorld(t);
  const { a: jobA, b: jobB } = w.jobs;
  const { a: docA, b: docB } = w.docs;
  const rows: Row[] = [
    { op: 'whoami', method: 'GET', url: '/v1/whoami', expect: { admin: 200, reader: 200, editor: 200, uploader: 200, plain: 200, expired: 401, none: 401 } },
    { op: 'list collections', method: 'GET', url: '/v1/collections', expect: { admin: 200, reader: 200, editor: 200, uploader: 403, plain: 200, expired: 401, none: 401 } },
    { op: 'get own collection', method: 'GET', url: '/v1/collections/team-a-docs', expect: { admin: 200, reader: 200, editor: 200, uploader: 403, plain: 200 } },
    { op: 'get other collection', method: 'GET', url: '/v1/collections/team-b-docs', expect: { admin: 200, reader: 404, editor: 404, uploader: 404, plain: 200 } },
    { op: 'get missing in scope', method: 'GET', url: '/v1/collections/team-a-nothing', expect: { reader: 404, admin: 404 } },
    { op: 'search own', method: 'POST', url: '/v1/collections/team-a-docs/search', body: { query: 'otters' }, expect: { admin: 200, reader: 200, editor: 200, uploader: 403, plain: 200 } },
    { op: 'search other', method: 'POST', url: '/v1/collections/team-b-docs/search', body: { query: 'bread' }, expect: { admin: 200, reader: 404, editor: 404, uploader: 404, plain: 200 } },
    { op: 'list other documents', method: 'GET', url: '/v1/collections/team-b-docs/documents', expect: { admin: 200, reader: 404, editor: 404, uploader: 404 } },
    { op: 'get other document', method: 'GET', url: `/v1/collections/team-b-docs/documents/${docB}`, expect: { admin: 200, reader: 404 } },
    { op: 'chunks of own document', method: 'GET', url: `/v1/collections/team-a-docs/documents/${docA}/chunks`, expect: { admin: 200, reader: 200, uploader: 403 } },
    { op: 'get own job', method: 'GET', url: `/v1/jobs/${jobA}`, expect: { admin: 200, reader: 200, editor: 200, uploader: 200, plain: 200 } },
    { op: 'get other job', method: 'GET', url: `/v1/jobs/${jobB}`, expect: { admin: 200, reader: 404, editor: 404, uploader: 404, plain: 200 } },
    { op: 'stream other job', method: 'GET', url: `/v1/jobs/${jobB}/events`, expect: { reader: 404, editor: 404, uploader: 404, none: 401 } },
    { op: 'jobs of other collection', method: 'GET', url: '/v1/jobs?collection=team-b-docs', expect: { admin: 200, reader: 404, editor: 404 } },
    { op: 'list jobs', method: 'GET', url: '/v1/jobs', expect: { admin: 200, reader: 200, uploader: 200, none: 401 } },
    { op: 'per-URL tool (detect)', method: 'POST', url: '/v1/language/detect', body: { text: 'Les loutres de mer se tiennent la main.' }, expect: { admin: 200, reader: 200, editor: 200, uploader: 403, plain: 200, expired: 401, none: 401 } },
    { op: 'health tool', method: 'GET', url: '/v1/health', expect: {} },
    { op: 'cache stats', method: 'POST', url: '/v1/cache', body: { action: 'stats' }, expect: { admin: 200, reader: 200, uploader: 403 } },
    { op: 'cache clear', method: 'POST', url: '/v1/cache', body: { action: 'clear' }, expect: { reader: 403, editor: 403, uploader: 403, admin: 200, plain: 200 } },
    { op: 'create in scope', method: 'POST', url: '/v1/collections', body: { name: 'team-a-new' }, expect: { reader: 403, editor: 403, uploader: 404, admin: 201 } },
    { op: 'create out of scope', method: 'POST', url: '/v1/collections', body: { name: 'team-b-new' }, expect: { reader: 404, editor: 404, plain: 201 } },
    { op: 'ingest own', method: 'POST', url: '/v1/collections/team-a-docs/documents', body: { urls: [w.urls.otters] }, expect: { reader: 403, uploader: 202, editor: 202 } },
    { op: 'ingest other', method: 'POST', url: '/v1/collections/team-b-docs/documents', body: { urls: [w.urls.otters] }, expect: { reader: 404, editor: 404, uploader: 404 } },
    { op: 'reingest own', method: 'POST', url: `/v1/collections/team-a-docs/documents/${docA}/reingest`, expect: { reader: 403, editor: 202 } },
    // The reader lacks ingest for every job alike (403 whatever the id, so nothing leaks); the editor
    // may cancel jobs, but not this one it cannot see.
    { op: 'cancel other job', method: 'POST', url: `/v1/jobs/${jobB}/cancel`, expect: { reader: 403, editor: 404, uploader: 404, admin: 409 } },
    { op: 'delete own document', method: 'DELETE', url: `/v1/collections/team-a-docs/documents/${docA}`, expect: { reader: 403, uploader: 403, editor: 200 } },
    { op: 'delete other document', method: 'DELETE', url: `/v1/collections/team-b-docs/documents/${docB}`, expect: { reader: 404, editor: 404, uploader: 404, admin: 200 } },
    { op: 'delete own collection', method: 'DELETE', url: '/v1/collections/team-a-new', expect: { reader: 403, editor: 403, admin: 200 } },
    { op: 'delete other collection', method: 'DELETE', url: '/v1/collections/team-b-docs', expect: { reader: 404, editor: 404, uploader: 404, plain: 200 } },
  ];
  const health = rows.find((r) => r.op === 'health tool')!;
  const healthTool = w.app.tools.find((x) => x.name === 'get_system_health')!;
  health.url = healthTool.rest.path;
  health.expect = { admin: 200, reader: 200, uploader: 403, none: 401 };

  for (const row of rows) {
    for (const [who, status] of Object.entries(row.expect) as Array<[Who, number]>) {
      const res = await w.app.inject({
        method: row.method,
        url: row.url,
        headers: auth(who === 'none' ? null : who),
        ...(row.body !== undefined ? { payload: row.body as object } : {}),
      });
      t.equal(res.statusCode, status, `${row.op} as ${who}: ${status} (${res.statusCode >= 400 ? res.body.slice(0, 160) : 'ok'})`);
      if (status === 403) t.equal(res.json().code, 'FORBIDDEN', `${row.op} as ${who}: FORBIDDEN`);
      if (status === 404) t.equal(res.json().code, 'NOT_FOUND', `${row.op} as ${who}: NOT_FOUND`);
    }
  }
});

t.test('REST: listings show only what the key may see, and 404s do not tell hidden from missing', async (t) => {
  const w = await scopedWorld(t);
  const get = async (url: string, who: KeyName) => (await w.app.inject({ url, headers: auth(who) })).json();

  t.same((await get('/v1/collections', 'reader')).collections.map((c: { name: string }) => c.name), ['team-a-docs']);
  t.same((await get('/v1/collections', 'admin')).collections.map((c: { name: string }) => c.name).sort(), ['team-a-docs', 'team-b-docs']);

  const readerJobs = await get('/v1/jobs', 'reader');
  t.equal(readerJobs.total, 1, 'one job visible to the reader, counted in SQL');
  t.same(readerJobs.items.map((j: { collection: string }) => j.collection), ['team-a-docs']);
  t.notOk(JSON.stringify(readerJobs).includes('bread'), 'no source of the other team leaks');
  t.equal((await get('/v1/jobs', 'admin')).total, 2);

  const hidden = await w.app.inject({ url: '/v1/collections/team-b-docs', headers: auth('reader') });
  const missing = await w.app.inject({ url: '/v1/collections/team-b-nothing', headers: auth('admin') });
  t.equal(hidden.json().error, 'Collection "team-b-docs" not found');
  t.equal(missing.json().error, 'Collection "team-b-nothing" not found', 'worded alike');
  const hiddenJob = await w.app.inject({ url: `/v1/jobs/${w.jobs.b}`, headers: auth('reader') });
  t.equal(hiddenJob.json().error, `Job ${w.jobs.b} not found`);

  t.same(await get('/v1/whoami', 'reader'), { name: 'reader', auth: true, actions: ['search'], collections: ['team-a-*'], expires_at: null });
  t.match(await get('/v1/whoami', 'plain'), { name: 'API_KEYS[1]', actions: ['search', 'ingest', 'delete', 'admin'], collections: ['*'] });
  const expired = await w.app.inject({ url: '/v1/whoami', headers: { 'x-api-key': KEYS.expired } });
  t.equal(expired.statusCode, 401);
  t.match(expired.json().error, /"expired" has expired/);

  const forbidden = await w.app.inject({ method: 'DELETE', url: `/v1/collections/team-a-docs/documents/${w.docs.a}`, headers: auth('reader') });
  t.match(forbidden.json().error, /"reader" may not delete documents: it needs the "delete" action/);
  const still = await w.app.inject({ url: `/v1/collections/team-a-docs/documents/${w.docs.a}`, headers: auth('reader') });
  t.equal(still.statusCode, 200, 'the refused delete changed nothing');

  // The SSE job stream over a real socket: an ingest-only key follows its collection's job; the
  // reader cannot see the other team's.
  const origin = await listenLoopback(w.app);
  const own = await readSse(`${origin}/v1/jobs/${w.jobs.a}/events`, auth('uploader'));
  t.equal(own.status, 200, 'ingest alone may follow a job of its collection');
  t.match(own.body, /event: state\ndata: .*"collection":"team-a-docs"/);
  const other = await readSse(`${origin}/v1/jobs/${w.jobs.b}/events`, auth('reader'));
  t.equal(other.status, 404);
  t.match(JSON.parse(other.body), { code: 'NOT_FOUND', error: `Job ${w.jobs.b} not found` });
});

t.test('no keys configured: everything works without a key, as before', async (t) => {
  const { app } = await kbWorld(t);
  const who = await app.inject('/v1/whoami');
  t.same(who.json(), { name: 'local', auth: false, actions: ['search', 'ingest', 'delete', 'admin'], collections: ['*'], expires_at: null });
  t.equal((await app.inject({ method: 'POST', url: '/v1/collections', payload: { name: 'anything' } })).statusCode, 201);
  t.equal((await app.inject({ method: 'POST', url: '/v1/cache', payload: { action: 'clear' } })).statusCode, 200, 'REST needs no confirm');
  t.equal((await app.inject({ method: 'DELETE', url: '/v1/collections/anything' })).statusCode, 200);
});
