/**
 * Folders of any size with REDIS_URL (issue 22): an API process (`--role api`) takes a job naming a
 * folder of more files than INGEST_QUEUE_MAX, a worker process (`--role worker`) runs it and walks
 * the rest of the folder as the queue in Redis drains. The documents waiting in Redis (read from
 * the queue's own keys) never pass the bound; the job ends with every file, once; cancelling a
 * second such job stops its walk.
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { Redis } from 'ioredis';
import { tempDir } from '../helper.ts';
import { startRedisServer } from './redis-server.ts';
import { startApi, waitFor, type ApiProcess } from './api-process.ts';
import { makeFolder, wordOf } from '../kb/folder-any-size-fixtures.ts';

const QUEUE_MAX = 20;
const FILES = 200;

async function call(api: ApiProcess, method: string, p: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${api.address}${p}`, {
    method,
    ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

t.test('a folder larger than INGEST_QUEUE_MAX through the Redis queue', async (t) => {
  const redis = await startRedisServer(t);
  const base = fs.realpathSync(tempDir(t, 'kb-redis-folder-'));
  const root = path.join(base, 'big');
  const files = makeFolder(root, FILES);
  const env = {
    REDIS_URL: redis.url,
    DATA_DIR: tempDir(t, 'rag-shared-'),
    ALLOWED_DIRS: base,
    RATE_LIMIT_RPM: '100000',
    INGEST_STALLED_SECONDS: '2',
    INGEST_QUEUE_MAX: String(QUEUE_MAX),
  };
  const [api, worker] = await Promise.all([startApi(t, env, ['--role', 'api']), startApi(t, env, ['--role', 'worker'])]);

  // The documents waiting, as BullMQ keeps them (its priority queue and its plain lists).
  const client = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await client.connect();
  t.teardown(() => client.quit().catch(() => undefined));
  const q = 'rag:bull:ingest';
  const waiting = async () => {
    const [[, a], [, b], [, c], [, d]] = (await client.multi().zcard(`${q}:prioritized`).llen(`${q}:wait`).zcard(`${q}:delayed`).llen(`${q}:paused`).exec())! as Array<[unknown, number]>;
    return a + b + c + d;
  };

  const added = await call(api, 'POST', '/v1/collections/big/documents', { paths: [root] });
  t.equal(added.status, 202, JSON.stringify(added.body).slice(0, 300));
  t.equal(added.body.enumeration?.state, 'walking', 'the API took the first part');
  t.ok(added.body.counts.total <= QUEUE_MAX, `the first part fits the queue (${added.body.counts.total})`);
  const id = added.body.id;

  let maxWaiting = 0;
  let job: any;
  await waitFor(`job ${id} to end`, async () => {
    maxWaiting = Math.max(maxWaiting, await waiting());
    job = (await call(api, 'GET', `/v1/jobs/${id}`)).body;
    return !['queued', 'running'].includes(job.status);
  }, 240_000);
  t.comment(`most documents waiting in Redis: ${maxWaiting}`);
  t.ok(maxWaiting <= QUEUE_MAX, `never more than INGEST_QUEUE_MAX waiting in Redis (${maxWaiting})`);
  t.equal(job.status, 'succeeded', JSON.stringify(job.items?.filter((i: any) => i.error).slice(0, 3)));
  t.same(job.enumeration, { state: 'complete', files_found: FILES });
  t.match(job.counts, { total: FILES, done: FILES });
  t.equal(new Set(job.items.map((i: any) => i.source)).size, FILES, 'each file once');
  t.notOk('feed' in job, "the walk's server-side state is not in the answer");
  t.equal((await call(api, 'GET', '/v1/collections/big')).body.stats.documents, FILES);
  const hit = await call(api, 'POST', '/v1/collections/big/search', { query: wordOf(187), top_k: 1 });
  t.equal(hit.body.results[0]?.source, files[187], 'a file of a late part is searchable');

  // Cancelled mid-walk: the walk stops, no items come after.
  const other = path.join(base, 'other');
  makeFolder(other, FILES);
  const second = await call(api, 'POST', '/v1/collections/big/documents', { paths: [other] });
  t.equal(second.status, 202);
  let mid: any;
  await waitFor('the second walk to take a few parts', async () => {
    mid = (await call(api, 'GET', `/v1/jobs/${second.body.id}`)).body;
    // Queued until the worker takes its first document (under load that can be the first poll).
    return mid.enumeration.files_found >= 2 * QUEUE_MAX || (mid.status !== 'running' && mid.status !== 'queued');
  }, 120_000);
  t.equal(mid.status, 'running', 'still running when cancelled');
  const cancelled = await call(api, 'POST', `/v1/jobs/${second.body.id}/cancel`);
  t.equal(cancelled.status, 200, JSON.stringify(cancelled.body).slice(0, 300));
  let ended: any;
  await waitFor('the cancelled job to end', async () => {
    ended = (await call(api, 'GET', `/v1/jobs/${second.body.id}`)).body;
    return ended.status !== 'running' && ended.status !== 'queued';
  }, 60_000);
  t.equal(ended.status, 'cancelled');
  t.equal(ended.enumeration.state, 'stopped');
  t.ok(ended.counts.total < FILES, `the walk went no further (${ended.counts.total} of ${FILES})`);
  await waitFor('the queue in Redis to drain', async () => (await waiting()) === 0, 60_000);
  const later = (await call(api, 'GET', `/v1/jobs/${second.body.id}`)).body;
  t.equal(later.counts.total, ended.counts.total, 'no items were added after the cancel');
  for (const p of [api, worker]) t.ok(p.alive(), 'no process crashed');
});
