/**
 * A URL-list source against a loopback origin the test starts: the first sync ingests; a resync
 * sends conditional requests (counted at the origin) answered 304; a changed page is replaced; a
 * 503 never deletes (the old version stays, counted transient); a 404 deletes with the reason in
 * the document's history; and one sync of a source at a time (CONFLICT while one runs).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import type { FastifyInstance } from 'fastify';
import { buildTestApp } from '../helper.ts';
import { pollUntil } from '../poll.ts';

interface Page { body: string; etag: string; status?: number; hold?: boolean }

async function origin(t: Parameters<typeof buildTestApp>[0]) {
  const pages = new Map<string, Page>();
  const log: Array<{ path: string; conditional: boolean; status: number }> = [];
  let release: (() => void) | null = null;
  const server = http.createServer((req, res) => {
    const p = pages.get(req.url ?? '');
    const answer = () => {
      const conditional = req.headers['if-none-match'] !== undefined;
      let status = p ? (p.status ?? 200) : 404;
      if (status === 200 && p && req.headers['if-none-match'] === p.etag) status = 304;
      log.push({ path: req.url ?? '', conditional, status });
      if (status !== 200) return res.writeHead(status).end();
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', etag: p!.etag }).end(p!.body);
    };
    if (p?.hold) release = answer;
    else answer();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { base, pages, log, held: () => release !== null, release: () => { const r = release; release = null; r?.(); } };
}

async function settled(app: FastifyInstance, id: string, after: string | null): Promise<Record<string, any>> {
  let s: Record<string, any> = {};
  await pollUntil(async () => {
    s = (await app.inject('/v1/collections/web/sources')).json().items.find((x: { id: string }) => x.id === id);
    return Boolean(s && !s.running && s.last_sync_at && s.last_sync_at !== after);
  }, 'the sync to end', { timeoutMs: 120_000, everyMs: 50 });
  return s;
}

const sync = (app: FastifyInstance, id: string) => app.inject({ method: 'POST', url: `/v1/collections/web/sources/${id}/sync` });

t.test('URL list: conditional requests, changes, transient 503 kept, 404 deleted, one sync at a time', async (t) => {
  const o = await origin(t);
  o.pages.set('/a.txt', { body: 'Aardvarks dig burrows at night.', etag: '"a1"' });
  o.pages.set('/b.txt', { body: 'Bison graze the open prairie.', etag: '"b1"' });
  o.pages.set('/c.txt', { body: 'Cormorants dive for fish.', etag: '"c1"' });
  const app = await buildTestApp(t, { env: { ALLOW_PRIVATE_NETWORKS: 'true', SOURCES_SCHEDULER: 'false' } });
  const urls = ['/a.txt', '/b.txt', '/c.txt'].map((p) => o.base + p);
  const added = await app.inject({ method: 'POST', url: '/v1/collections/web/sources', payload: { kind: 'urls', urls } });
  t.equal(added.statusCode, 201, added.body);
  const id = added.json().id as string;
  let s = await settled(app, id, null);
  t.match(s.counts, { new: 3, unchanged: 0, gone: 0, failed: 0, requests: 3, not_modified: 0 }, JSON.stringify(s));

  // Nothing changed: three conditional requests, three 304s, no job.
  o.log.length = 0;
  t.equal((await sync(app, id)).statusCode, 202);
  s = await settled(app, id, s.last_sync_at);
  t.match(s.counts, { new: 0, changed: 0, unchanged: 3, requests: 3, not_modified: 3 });
  t.same(o.log.map((r) => [r.path, r.conditional, r.status]), urls.map((u) => [new URL(u).pathname, true, 304]), 'the origin saw three conditional requests answered 304');
  t.equal(s.last_job_id, null);

  // b changes, c answers 503 (transient), a vanishes (404).
  o.pages.set('/b.txt', { body: 'Bison migrate across the northern plains.', etag: '"b2"' });
  o.pages.set('/c.txt', { body: '', etag: '"c1"', status: 503 });
  const aDoc = (await app.inject('/v1/collections/web/documents?limit=10')).json().items.find((d: { source: string }) => d.source.endsWith('/a.txt'));
  o.pages.delete('/a.txt');
  t.equal((await sync(app, id)).statusCode, 202);
  s = await settled(app, id, s.last_sync_at);
  t.match(s.counts, { changed: 1, gone: 1, failed: 1, transient: 1 }, JSON.stringify(s.counts));
  t.equal(s.last_status, 'partial');
  t.match(s.notes.join('\n'), /c\.txt: HTTP 503.*transient/);
  const docs = (await app.inject('/v1/collections/web/documents?limit=10')).json();
  t.same(docs.items.map((d: { source: string }) => new URL(d.source).pathname).sort(), ['/b.txt', '/c.txt'], 'the 503 page is kept; the 404 page is deleted');
  const history = (await app.inject(`/v1/collections/web/documents/${aDoc.id}`)).statusCode;
  t.equal(history, 404, 'the deleted document is gone');
  const hits = (await app.inject({ method: 'POST', url: '/v1/collections/web/search', payload: { query: 'cormorants dive fish' } })).json();
  t.ok(hits.results.some((r: { source: string }) => r.source.endsWith('/c.txt')), 'the old version of the 503 page is still searchable');

  // One sync at a time: the origin holds b's answer; a second sync is CONFLICT until it ends.
  o.pages.set('/c.txt', { body: 'Cormorants dive for fish.', etag: '"c1"' });
  o.pages.set('/b.txt', { body: 'Bison migrate across the northern plains.', etag: '"b2"', hold: true });
  const before = s.last_sync_at;
  t.equal((await sync(app, id)).statusCode, 202);
  await pollUntil(() => o.held(), 'the sync to reach the held page');
  const second = await sync(app, id);
  t.equal(second.statusCode, 409, second.body);
  t.equal(second.json().code, 'CONFLICT');
  t.equal((await app.inject('/v1/collections/web/sources')).json().items[0].running, true, 'listed as running');
  o.pages.get('/b.txt')!.hold = false;
  o.release();
  s = await settled(app, id, before);
  // b and c unchanged (304); a is still listed and still answers 404: a failure, nothing left to delete.
  t.match(s.counts, { unchanged: 2, failed: 1, gone: 0 }, JSON.stringify(s.counts));
});
