/**
 * The job events stream over a real socket (127.0.0.1:0): auth applies as for every route, a
 * running job streams its state and progress, a client that goes away is unsubscribed, and a
 * cancelled job's stream ends with its final event.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { buildTestApp } from '../helper.ts';
import { listenLoopback, parseSse, readSse } from './surface-fixtures.ts';
import type { KnowledgeBaseApi } from '../../src/kb/types.ts';

/** A document server that holds every response until released (a job that stays running). */
async function stallingServer(t: { teardown(fn: () => unknown): void }) {
  const held: http.ServerResponse[] = [];
  let arrived: () => void = () => {};
  const first = new Promise<void>((r) => (arrived = r));
  const server = http.createServer((_req, res) => {
    held.push(res);
    arrived();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(
    () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/slow.txt`, first };
}

t.test('SSE: auth, live stream of a running job, disconnect unsubscribes, cancel ends it', async (t) => {
  const app = await buildTestApp(t, { env: { ALLOW_PRIVATE_NETWORKS: 'true', API_KEYS: 'sekrit-key-1234567890' } });
  const origin = await listenLoopback(app);
  const auth = { authorization: 'Bearer sekrit-key-1234567890' };
  const kb: KnowledgeBaseApi = app.services.kb;
  let live = 0;
  const subscribe = kb.subscribe.bind(kb);
  kb.subscribe = (id, listener) => {
    live++;
    const off = subscribe(id, listener);
    return () => {
      live--;
      off();
    };
  };

  const slow = await stallingServer(t);
  const started = await fetch(`${origin}/v1/collections/slow/documents`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ urls: [slow.url] }),
  });
  t.equal(started.status, 202);
  const job = (await started.json()) as { id: string };

  const refused = await readSse(`${origin}/v1/jobs/${job.id}/events`);
  t.equal(refused.status, 401, 'no key: refused before streaming');
  t.equal(JSON.parse(refused.body).code, 'UNAUTHORIZED');

  await slow.first;
  // A client that reads the first event and goes away.
  await new Promise<void>((resolve, reject) => {
    const req = http.get(`${origin}/v1/jobs/${job.id}/events`, { headers: auth }, (res) => {
      t.equal(res.statusCode, 200);
      t.match(res.headers['content-type'], /^text\/event-stream/);
      res.setEncoding('utf8');
      let text = '';
      res.on('data', (d: string) => {
        text += d;
        if (!text.includes('\n\n')) return;
        const [state] = parseSse(text);
        t.equal(state!.event, 'state');
        t.equal(state!.data.status, 'running');
        t.equal(live, 1, 'subscribed while streaming');
        req.destroy();
        resolve();
      });
    });
    req.on('error', (err) => ((err as NodeJS.ErrnoException).code === 'ECONNRESET' ? undefined : reject(err)));
  });
  while (live > 0) await new Promise((r) => setTimeout(r, 10));
  t.equal(live, 0, 'the client went away: unsubscribed');

  // A stream open while the job is cancelled ends with the final job event.
  const streaming = readSse(`${origin}/v1/jobs/${job.id}/events`, auth);
  while (live === 0) await new Promise((r) => setTimeout(r, 10));
  const cancelled = await fetch(`${origin}/v1/jobs/${job.id}/cancel`, { method: 'POST', headers: auth });
  t.equal(cancelled.status, 200);
  const events = parseSse((await streaming).body);
  t.equal(events[0]!.event, 'state');
  t.equal(events.at(-1)!.event, 'job');
  t.equal(events.at(-1)!.data.job.status, 'cancelled');
  t.equal(live, 0);
});
