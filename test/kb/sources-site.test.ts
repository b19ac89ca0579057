/**
 * A site source on a loopback site the test serves (robots.txt, three linked pages, one outside
 * the prefix): the first sync ingests the pages in scope; a resync is answered 304 by the origin
 * for unchanged pages; a page that changes is replaced and one that vanishes (404) is deleted.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import type { FastifyInstance } from 'fastify';
import { buildTestApp } from '../helper.ts';
import { pollUntil } from '../poll.ts';

const html = (title: string, body: string, links: string[] = []) =>
  `<!doctype html><html><head><title>${title}</title></head><body><nav>menu</nav><main><h1>${title}</h1><p>${body}</p>${links.map((l) => `<a href="${l}">${l}</a>`).join(' ')}</main></body></html>`;

async function settled(app: FastifyInstance, id: string, after: string | null): Promise<Record<string, any>> {
  let s: Record<string, any> = {};
  await pollUntil(async () => {
    s = (await app.inject('/v1/collections/site/sources')).json().items.find((x: { id: string }) => x.id === id);
    return Boolean(s && !s.running && s.last_sync_at && s.last_sync_at !== after);
  }, 'the sync to end', { timeoutMs: 120_000, everyMs: 50 });
  return s;
}

t.test('site source: scope, 304 on resync, a changed page replaced, a vanished page deleted', async (t) => {
  const pages = new Map<string, { body: string; etag: string }>([
    ['/docs/', { body: html('Home', 'Welcome to the guide.', ['/docs/install', '/docs/usage', '/blog/news']), etag: '"h1"' }],
    ['/docs/install', { body: html('Install', 'Install the widget with the package manager.'), etag: '"i1"' }],
    ['/docs/usage', { body: html('Usage', 'Turn the crank clockwise to wind the spring.'), etag: '"u1"' }],
    ['/blog/news', { body: html('News', 'Out of scope announcement.'), etag: '"n1"' }],
  ]);
  const seen: Array<{ path: string; status: number }> = [];
  const server = http.createServer((req, res) => {
    const path = req.url ?? '';
    if (path === '/robots.txt') return res.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: *\nAllow: /\n');
    const p = pages.get(path);
    const status = !p ? 404 : req.headers['if-none-match'] === p.etag ? 304 : 200;
    seen.push({ path, status });
    if (status !== 200) return res.writeHead(status).end();
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', etag: p!.etag }).end(p!.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const app = await buildTestApp(t, { env: { ALLOW_PRIVATE_NETWORKS: 'true', SOURCES_SCHEDULER: 'false', CRAWL_DELAY_MS: '0' } });

  const added = await app.inject({ method: 'POST', url: '/v1/collections/site/sources', payload: { kind: 'site', start_url: `${base}/docs/`, scope: 'prefix', max_depth: 2 } });
  t.equal(added.statusCode, 201, added.body);
  const id = added.json().id as string;
  let s = await settled(app, id, null);
  t.equal(s.last_status, 'succeeded', JSON.stringify(s));
  t.match(s.counts, { new: 3, gone: 0, failed: 0 }, JSON.stringify(s.counts));
  t.notOk(seen.some((r) => r.path === '/blog/news'), 'the page outside the prefix was not fetched');

  seen.length = 0;
  pages.set('/docs/usage', { body: html('Usage', 'Turn the crank counterclockwise to release the spring.'), etag: '"u2"' });
  pages.delete('/docs/install');
  await app.inject({ method: 'POST', url: `/v1/collections/site/sources/${id}/sync` });
  s = await settled(app, id, s.last_sync_at);
  t.match(s.counts, { changed: 1, gone: 1, unchanged: 1 }, JSON.stringify(s.counts));
  t.ok(seen.some((r) => r.path === '/docs/' && r.status === 304), 'the unchanged home page cost a 304');
  const docs = (await app.inject('/v1/collections/site/documents?limit=10')).json();
  t.same(docs.items.map((d: { source: string }) => new URL(d.source).pathname).sort(), ['/docs/', '/docs/usage']);
});
