/**
 * Fair sharing between API keys on the Redis queue (BullMQ priorities, src/kb/redis-job-queue.ts):
 * one key's five jobs of eight documents and another key's three documents, run one at a time by
 * a single worker slot: the keys take turns, so each of the second key's documents waits behind
 * at most one of the first key's.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { tempDir } from '../helper.ts';
import { startRedisServer } from './redis-server.ts';
import { startApi, waitFor, type ApiProcess } from './api-process.ts';

async function post(api: ApiProcess, key: string, path: string, body: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${api.address}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

t.test('keys take turns on the Redis queue', async (t) => {
  const redis = await startRedisServer(t);
  const started: string[] = [];
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  const origin = http.createServer((req, res) => {
    const name = new URL(req.url ?? '/', 'http://x').pathname.slice(1).replace(/\.txt$/, '');
    started.push(name);
    void (name === 'a0' ? held : Promise.resolve()).then(() => {
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
      res.end(`Notes on ${name.replace(/\d/g, 'x')}.\n\nA plain text document about queues, keys and fair turns.\n`);
    });
  });
  await new Promise<void>((r) => origin.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => {
    release();
    origin.closeAllConnections();
    origin.close(() => r());
  }));
  const base = `http://127.0.0.1:${(origin.address() as AddressInfo).port}`;
  const api = await startApi(t, {
    REDIS_URL: redis.url,
    DATA_DIR: tempDir(t, 'rag-fair-'),
    ALLOW_PRIVATE_NETWORKS: 'true',
    RATE_LIMIT_RPM: '100000',
    API_KEYS: 'k-alpha,k-beta',
    INGEST_CONCURRENCY: '1',
  });
  t.equal((await post(api, 'k-alpha', '/v1/collections', { name: 'alpha' })).status, 201);
  t.equal((await post(api, 'k-beta', '/v1/collections', { name: 'beta' })).status, 201);
  const jobs: string[] = [];
  for (let j = 0; j < 5; j++) {
    const r = await post(api, 'k-alpha', '/v1/collections/alpha/documents', { urls: Array.from({ length: 8 }, (_, i) => `${base}/a${j * 8 + i}.txt`) });
    t.equal(r.status, 202, `A's job ${j} taken`);
    jobs.push(r.body.id);
  }
  await waitFor("A's first document to be downloading", async () => started.includes('a0'));
  const b = await post(api, 'k-beta', '/v1/collections/beta/documents', { urls: [0, 1, 2].map((i) => `${base}/b${i}.txt`) });
  t.equal(b.status, 202);
  jobs.push(b.body.id);
  release();
  for (const id of jobs) {
    await waitFor(`job ${id} to end`, async () => {
      const res = await fetch(`${api.address}/v1/jobs/${id}`, { headers: { authorization: 'Bearer k-alpha' } });
      const res2 = res.status === 404 ? await fetch(`${api.address}/v1/jobs/${id}`, { headers: { authorization: 'Bearer k-beta' } }) : res;
      const job = (await res2.json()) as { status: string };
      return ['succeeded', 'partial', 'failed', 'cancelled'].includes(job.status);
    }, 120_000);
  }
  const at = [0, 1, 2].map((i) => started.indexOf(`b${i}`));
  t.ok(at.every((p, i) => p >= 0 && p <= 2 * i + 2), `each of B's documents behind at most one of A's per turn (B at ${at.join(', ')}; order ${started.slice(0, 8).join(', ')}…)`);
});
