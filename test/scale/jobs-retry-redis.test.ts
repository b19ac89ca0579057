/**
 * Retries under REDIS_URL behave as in process (test/kb/jobs-retry.test.ts, document-executor.ts):
 * a transient failure (the origin answering 503 past the downloader's own tries) is tried again by
 * the Redis worker after its backoff and the document lands, with the same note and the same
 * "retrying" event; a failure the document causes (404) is not tried again. Requests are counted
 * at a loopback origin; a real redis-server and the real server process (api and worker roles).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { tempDir } from '../helper.ts';
import { startRedisServer } from './redis-server.ts';
import { startApi, waitFor, type ApiProcess } from './api-process.ts';

// The downloader tries a URL 3 times itself (download.ts's default maxAttempts).
const DOWNLOADER_TRIES = 3;

async function call(api: ApiProcess, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${api.address}${path}`, {
    method,
    ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

/** Reads a job's SSE stream until its `job` event; `onOpen` runs once the stream answered. */
async function readEvents(api: ApiProcess, id: string, onOpen: () => void, ms: number): Promise<Array<{ event: string; data: any }>> {
  const ctrl = new AbortController();
  const timer = setTimeout(() => ctrl.abort(), ms);
  const out: Array<{ event: string; data: any }> = [];
  try {
    const res = await fetch(`${api.address}/v1/jobs/${id}/events`, { signal: ctrl.signal });
    onOpen();
    let buf = '';
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      buf += Buffer.from(chunk).toString('utf8');
      let cut: number;
      while ((cut = buf.indexOf('\n\n')) >= 0) {
        const frame = buf.slice(0, cut);
        buf = buf.slice(cut + 2);
        const event = /^event: (.+)$/m.exec(frame)?.[1];
        const data = /^data: (.+)$/m.exec(frame)?.[1];
        if (event && data) out.push({ event, data: JSON.parse(data) });
      }
    }
  } catch (err) {
    if (!ctrl.signal.aborted) throw err;
  } finally {
    clearTimeout(timer);
  }
  return out;
}

t.test('a transient failure is retried by the Redis worker as in process; a 404 is not', async (t) => {
  const redis = await startRedisServer(t);
  let flaky = 0;
  let missing = 0;
  // The first request waits until the test follows the job's events, so no event is missed.
  let following!: () => void;
  const followed = new Promise<void>((r) => (following = r));
  const origin = http.createServer((req, res) => {
    const p = new URL(req.url ?? '/', 'http://x').pathname;
    if (p === '/missing.txt') {
      missing++;
      res.writeHead(404);
      res.end('no');
      return;
    }
    flaky++;
    void followed.then(() => {
      if (flaky <= DOWNLOADER_TRIES) {
        res.writeHead(503);
        res.end('busy');
        return;
      }
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
      res.end('Notes on the quokka.\n\nA plain text document about a small marsupial that smiles, retried after the origin was busy.\n');
    });
  });
  await new Promise<void>((r) => origin.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => {
    following();
    origin.closeAllConnections();
    origin.close(() => r());
  }));
  const base = `http://127.0.0.1:${(origin.address() as AddressInfo).port}`;
  const env = {
    REDIS_URL: redis.url,
    DATA_DIR: tempDir(t, 'rag-retry-redis-'),
    ALLOW_PRIVATE_NETWORKS: 'true',
    RATE_LIMIT_RPM: '100000',
    INGEST_ATTEMPTS: '3',
  };
  const [api, worker] = await Promise.all([startApi(t, env, ['--role', 'api']), startApi(t, env, ['--role', 'worker'])]);
  t.equal((await call(api, 'POST', '/v1/collections', { name: 'retry' })).status, 201);
  const added = await call(api, 'POST', '/v1/collections/retry/documents', { urls: [`${base}/flaky.txt`, `${base}/missing.txt`] });
  t.equal(added.status, 202, 'the API takes the job');
  const events = await readEvents(api, added.body.id, following, 120_000);

  const last = events.at(-1);
  t.equal(last?.event, 'job', 'the stream ends with the job event');
  const done = (await call(api, 'GET', `/v1/jobs/${added.body.id}`)).body;
  t.equal(done.status, 'partial', JSON.stringify(done.items));
  t.equal(done.items[0].stage, 'done', 'the flaky document landed on the job-level retry');
  t.equal(flaky, DOWNLOADER_TRIES + 1, 'one more request after the downloader gave up: the job retried once');
  t.match(done.items[0].note, /try 1 of 3 failed \(DOWNLOAD_ERROR/, 'the same note as in process');
  t.ok(
    events.some((e) => e.event === 'progress' && /retrying after DOWNLOAD_ERROR/.test(e.data.message ?? '')),
    'a retry event reached the API over the bus',
  );
  t.equal(done.items[1].stage, 'failed');
  t.equal(done.items[1].error?.code, 'DOWNLOAD_ERROR');
  t.equal(missing, 1, "a 404 is the document's own failure: no retry");

  const health = (await call(worker, 'GET', '/v1/system/health')).body.features.knowledge_base;
  t.match(health, { queue: 'redis', worker: { role: 'worker', retried: 1 } }, 'the worker counts one retry');
  let hits: string[] = [];
  await waitFor('the retried document to be searchable', async () => {
    const r = await call(api, 'POST', '/v1/collections/retry/search', { query: 'quokka', top_k: 5 });
    hits = r.status === 200 ? r.body.results.map((h: { source: string }) => new URL(h.source).pathname) : [];
    return hits.length > 0;
  }, 30_000);
  t.same(hits, ['/flaky.txt'], 'the retried document is searchable');
  t.ok(api.alive() && worker.alive(), 'no process crashed');
});
