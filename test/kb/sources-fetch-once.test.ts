/**
 * A URL-list source downloads a changed URL once per sync: the sync's own request (conditional
 * once the URL is known) brings the body, and the job ingests those bytes instead of fetching the
 * URL again. Counted at a loopback origin the test starts. Also: a 410 deletes the document, and
 * its 404 answer through REST names the reason from its history.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t, { type Test } from 'tap';
import type { FastifyInstance } from 'fastify';
import { buildTestApp } from '../helper.ts';
import { pollUntil } from '../poll.ts';

async function origin(t: Test) {
  const pages = new Map<string, { body: string; etag: string; status?: number }>();
  const hits = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const p = req.url ?? '';
    hits.set(p, (hits.get(p) ?? 0) + 1);
    const page = pages.get(p);
    if (!page) return res.writeHead(404).end();
    if (page.status) return res.writeHead(page.status).end();
    if (req.headers['if-none-match'] === page.etag) return res.writeHead(304).end();
    res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', etag: page.etag }).end(page.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, pages, hits, reset: () => hits.clear() };
}

async function settled(app: FastifyInstance, id: string, after: string | null): Promise<Record<string, unknown> & { counts: Record<string, number>; last_sync_at: string }> {
  let s: Record<string, unknown> & { counts: Record<string, number>; last_sync_at: string } = { counts: {}, last_sync_at: '' };
  await pollUntil(async () => {
    s = (await app.inject('/v1/collections/once/sources')).json().items.find((x: { id: string }) => x.id === id);
    return Boolean(s && !s.running && s.last_sync_at && s.last_sync_at !== after);
  }, 'the sync to end', { timeoutMs: 120_000, everyMs: 50 });
  return s;
}

async function search(app: FastifyInstance, query: string): Promise<string[]> {
  const res = await app.inject({ method: 'POST', url: '/v1/collections/once/search', payload: { query, top_k: 5, min_confidence: 'none' } });
  return (res.json().results as Array<{ source: string }>).map((r) => new URL(r.source).pathname);
}

t.test('a changed URL is fetched once per sync; a 410 deletes with its reason', async (t) => {
  const o = await origin(t);
  o.pages.set('/a.txt', { body: 'Albatrosses glide for hours over the ocean.', etag: '"a1"' });
  o.pages.set('/b.txt', { body: 'Beavers build dams across small rivers.', etag: '"b1"' });
  const app = await buildTestApp(t, { env: { ALLOW_PRIVATE_NETWORKS: 'true', SOURCES_SCHEDULER: 'false', SOURCES_WATCH: 'false' } });
  const added = await app.inject({ method: 'POST', url: '/v1/collections/once/sources', payload: { kind: 'urls', urls: [`${o.base}/a.txt`, `${o.base}/b.txt`] } });
  t.equal(added.statusCode, 201, added.body);
  const id = added.json().id as string;
  let s = await settled(app, id, null);
  t.match(s.counts, { new: 2, failed: 0 }, JSON.stringify(s));
  t.equal(o.hits.get('/a.txt'), 1, 'first sync: a.txt downloaded once (the sync and its job share the body)');
  t.equal(o.hits.get('/b.txt'), 1, 'first sync: b.txt downloaded once');
  t.same(await search(app, 'albatrosses glide ocean'), ['/a.txt'], 'the shared body was ingested');

  // b changes: one conditional request each; b's 200 body is the one ingested.
  o.pages.set('/b.txt', { body: 'Beavers gnaw through aspen trunks with orange teeth.', etag: '"b2"' });
  o.reset();
  t.equal((await app.inject({ method: 'POST', url: `/v1/collections/once/sources/${id}/sync` })).statusCode, 202);
  s = await settled(app, id, s.last_sync_at);
  t.match(s.counts, { changed: 1, unchanged: 1, not_modified: 1, requests: 2, failed: 0 }, JSON.stringify(s.counts));
  t.equal(o.hits.get('/b.txt'), 1, 'the changed URL was fetched once in this sync, not twice');
  t.equal(o.hits.get('/a.txt'), 1, 'the unchanged URL cost one 304');
  t.same(await search(app, 'aspen trunks orange teeth'), ['/b.txt'], 'the new version is searchable');

  // a answers 410: deleted, and its history says why.
  const aDoc = (await app.inject('/v1/collections/once/documents?limit=10')).json().items.find((d: { source: string }) => d.source.endsWith('/a.txt'));
  o.pages.set('/a.txt', { body: '', etag: '"a1"', status: 410 });
  t.equal((await app.inject({ method: 'POST', url: `/v1/collections/once/sources/${id}/sync` })).statusCode, 202);
  s = await settled(app, id, s.last_sync_at);
  t.match(s.counts, { gone: 1, unchanged: 1 }, JSON.stringify(s.counts));
  const gone = await app.inject(`/v1/collections/once/documents/${aDoc.id}`);
  t.equal(gone.statusCode, 404);
  t.match(gone.json().error, /was deleted from collection "once" at .*chunks removed; HTTP 410/, 'the reason is in its history');
});
