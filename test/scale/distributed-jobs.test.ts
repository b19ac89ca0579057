/**
 * Ingestion across processes on one Redis and one DATA_DIR, as docker/compose.yaml runs them: API
 * processes (`--role api`) take jobs, worker processes (`--role worker`) run them. Documents come
 * from a loopback origin whose /stall-*.txt answers only when the test says so (or at once on a
 * second request), which holds a document in a worker for as long as a check needs.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { tempDir, type Teardown } from '../helper.ts';
import { startRedisServer } from './redis-server.ts';
import { startApi, waitFor, type ApiProcess } from './api-process.ts';

interface Origin {
  base: string;
  hits(path: string): number;
  /** Answers the stalled requests of that path now (later ones are answered at once). */
  release(path: string): void;
}

const WORDS = ['aardvark', 'bassoon', 'cobalt', 'dirigible', 'ember', 'fjord', 'gazebo', 'halcyon'];

async function startOrigin(t: Teardown): Promise<Origin> {
  const hits = new Map<string, number>();
  const held = new Map<string, Array<() => void>>();
  const released = new Set<string>();
  const server = http.createServer((req, res) => {
    const p = new URL(req.url ?? '/', 'http://x').pathname;
    hits.set(p, (hits.get(p) ?? 0) + 1);
    const body = `Document ${p}: ${WORDS.map((w) => `${w}${p.replace(/\W/g, '')}`).join(' ')}. ${'Filler sentence about queues and workers. '.repeat(20)}`;
    const send = () => {
      if (res.destroyed) return;
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
      res.end(body);
    };
    // A stalled path holds its first request; a retry (another worker taking it again) is answered.
    if (p.startsWith('/stall') && !released.has(p) && hits.get(p) === 1) {
      held.set(p, [...(held.get(p) ?? []), send]);
      return;
    }
    send();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  }));
  const { port } = server.address() as AddressInfo;
  return {
    base: `http://127.0.0.1:${port}`,
    hits: (p) => hits.get(p) ?? 0,
    release: (p) => {
      released.add(p);
      for (const f of held.get(p) ?? []) f();
      held.delete(p);
    },
  };
}

async function call(api: ApiProcess, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${api.address}${path}`, {
    method,
    ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

async function search(api: ApiProcess, collection: string, query: string): Promise<string[]> {
  const r = await call(api, 'POST', `/v1/collections/${collection}/search`, { query, top_k: 10 });
  if (r.status !== 200) throw new Error(`search answered ${r.status}: ${JSON.stringify(r.body)}`);
  return r.body.results.map((h: { source: string }) => new URL(h.source).pathname);
}

async function jobEnded(api: ApiProcess, id: string, ms = 60_000): Promise<any> {
  let job: any;
  await waitFor(`job ${id} to end`, async () => {
    job = (await call(api, 'GET', `/v1/jobs/${id}`)).body;
    return ['succeeded', 'partial', 'failed', 'cancelled'].includes(job.status);
  }, ms);
  return job;
}

/** The SSE stream of a job, read to its end (the `job` event) or until `ms`. */
async function readEvents(api: ApiProcess, id: string, ms = 60_000): Promise<Array<{ event: string; data: any }>> {
  const ctrl = new AbortController();
  const timer = setTimeout(() => ctrl.abort(), ms);
  const out: Array<{ event: string; data: any }> = [];
  try {
    const res = await fetch(`${api.address}/v1/jobs/${id}/events`, { signal: ctrl.signal });
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

async function cluster(t: Teardown, extra: Record<string, string> = {}) {
  const redis = await startRedisServer(t);
  const origin = await startOrigin(t);
  const env = {
    REDIS_URL: redis.url,
    DATA_DIR: tempDir(t, 'rag-shared-'),
    ALLOW_PRIVATE_NETWORKS: 'true',
    RATE_LIMIT_RPM: '100000',
    INGEST_STALLED_SECONDS: '2',
    ...extra,
  };
  return { redis, origin, env };
}

t.test('a job taken by one API, run by the workers, streams its progress to the other API and is searchable there', async (t) => {
  const { origin, env } = await cluster(t);
  const [a, b, w1, w2] = await Promise.all([
    startApi(t, env, ['--role', 'api']),
    startApi(t, env, ['--role', 'api']),
    startApi(t, env, ['--role', 'worker']),
    startApi(t, env, ['--role', 'worker']),
  ]);
  t.equal((await call(a, 'POST', '/v1/collections', { name: 'shared' })).status, 201);
  t.same(await search(b, 'shared', 'bassoon'), [], 'B opens the empty collection first');

  const urls = ['/one.txt', '/two.txt', '/three.txt', '/stall-a.txt'].map((p) => origin.base + p);
  const added = await call(a, 'POST', '/v1/collections/shared/documents', { urls });
  t.equal(added.status, 202, 'API A takes the job');
  const id = added.body.id;
  const events = readEvents(b, id);
  await waitFor('a worker to download the stalled document', async () => origin.hits('/stall-a.txt') === 1);
  origin.release('/stall-a.txt');
  const seen = await events;
  const kinds = new Set(seen.map((e) => e.event));
  t.ok(kinds.has('state') && kinds.has('progress') && kinds.has('item'), `B streams progress of a job A took (${[...kinds].join(', ')})`);
  t.ok(seen.some((e) => e.event === 'progress' && e.data.item?.stage === 'extracting'), 'with stages from the worker');
  const last = seen.at(-1)!;
  t.equal(last.event, 'job', 'the stream ends with the job event');
  t.equal(last.data.job.status, 'succeeded');
  t.equal(last.data.job.counts.done, 4);

  const job = (await call(b, 'GET', `/v1/jobs/${id}`)).body;
  t.equal(job.status, 'succeeded', 'B answers the job from the shared store');
  t.same(await search(b, 'shared', 'bassoontwotxt'), ['/two.txt'], 'a document the workers committed is found on B, which had the collection open before');
  t.same(await search(a, 'shared', 'emberstallatxt'), ['/stall-a.txt'], 'and on A');

  const list = (await call(b, 'GET', '/v1/collections/shared/documents')).body;
  const two = list.items.find((d: { source: string }) => d.source.endsWith('/two.txt'));
  t.equal((await call(b, 'DELETE', `/v1/collections/shared/documents/${two.id}`)).status, 200, 'B deletes a document');
  let after: string[] = [];
  await waitFor('A to stop finding the deleted document', async () => {
    after = await search(a, 'shared', 'bassoontwotxt');
    return after.length === 0;
  }, 10_000);
  t.same(after, [], 'A no longer finds it');

  // Over MCP on B: progress notifications for documents that workers run, and the job's end.
  const client = new Client({ name: 'scale-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${b.address}/mcp`)));
  t.teardown(() => client.close());
  const progress: Array<{ progress: number; message?: string }> = [];
  const viaMcp = await client.callTool(
    { name: 'ingest_documents', arguments: { name: 'shared', urls: [origin.base + '/mcp-one.txt', origin.base + '/mcp-two.txt'], wait_seconds: 60 } },
    undefined,
    { onprogress: (p) => progress.push(p), timeout: 90_000 },
  );
  t.notOk(viaMcp.isError, 'ingest_documents over MCP on B answers');
  t.equal((viaMcp.structuredContent as { status: string }).status, 'succeeded', 'ingest_documents on B waited for the workers to finish');
  t.ok(progress.length >= 2, `${progress.length} MCP progress notifications relayed from the workers`);
  t.ok(progress.every((p, i) => i === 0 || p.progress > progress[i - 1]!.progress), 'strictly increasing');
  t.same(await search(a, 'shared', 'gazebomcptwotxt'), ['/mcp-two.txt'], 'and A finds what MCP on B ingested');

  const kbHealth = (await call(w1, 'GET', '/v1/system/health')).body.features.knowledge_base;
  t.match(kbHealth, { available: true, role: 'worker', queue: 'redis', worker: { role: 'worker' } }, 'a worker says what it is');
  t.ok(kbHealth.worker.processed >= 1 || (await call(w2, 'GET', '/v1/system/health')).body.features.knowledge_base.worker.processed >= 1, 'the workers ran the documents');
  t.match((await call(a, 'GET', '/v1/system/health')).body.features.knowledge_base, { role: 'api', queue: 'redis' });
  for (const p of [a, b, w1, w2]) t.ok(p.alive(), 'no process crashed');
});

t.test('a worker killed mid-document: another worker takes the document again and the job finishes, the collection consistent', async (t) => {
  const { origin, env } = await cluster(t);
  const [a, w1] = await Promise.all([startApi(t, env, ['--role', 'api']), startApi(t, env, ['--role', 'worker'])]);
  t.equal((await call(a, 'POST', '/v1/collections', { name: 'kill' })).status, 201);
  const added = await call(a, 'POST', '/v1/collections/kill/documents', { urls: [origin.base + '/stall-k.txt', origin.base + '/other.txt'] });
  t.equal(added.status, 202);
  await waitFor('worker 1 to hold the stalled document', async () => origin.hits('/stall-k.txt') === 1);
  const w2 = await startApi(t, env, ['--role', 'worker']);
  w1.child.kill('SIGKILL');
  await new Promise((r) => w1.child.once('exit', r));

  const job = await jobEnded(a, added.body.id, 90_000);
  t.equal(job.status, 'succeeded', 'the job finishes on the surviving worker');
  t.equal(origin.hits('/stall-k.txt'), 2, 'the document was downloaded again');
  const item = job.items.find((i: { source: string }) => i.source.endsWith('/stall-k.txt'));
  t.match(item.note, /taken again after its worker stopped/, 'the item says it was taken again');
  t.ok(job.resumed >= 1, 'the job counts the resumption');

  const docs = (await call(a, 'GET', '/v1/collections/kill/documents')).body;
  t.equal(docs.total, 2, 'one row per document: nothing duplicated');
  t.same(docs.items.map((d: { status: string }) => d.status), ['ready', 'ready']);
  const stats = (await call(a, 'GET', '/v1/collections/kill')).body.stats;
  t.equal(stats.chunks, docs.items.reduce((s: number, d: { chunk_count: number }) => s + d.chunk_count, 0), 'chunk counts agree with the documents');
  t.same(await search(a, 'kill', 'cobaltstallktxt'), ['/stall-k.txt'], 'and it is searchable');
  t.ok(w2.alive() && a.alive());
});

t.test('cancelling on one API stops the document a worker is running', async (t) => {
  const { origin, env } = await cluster(t);
  const [a, b] = await Promise.all([startApi(t, env, ['--role', 'api']), startApi(t, env, ['--role', 'api']), startApi(t, env, ['--role', 'worker'])]);
  t.equal((await call(a, 'POST', '/v1/collections', { name: 'cancel' })).status, 201);
  const added = await call(a, 'POST', '/v1/collections/cancel/documents', { urls: [origin.base + '/stall-c.txt'] });
  await waitFor('the worker to hold the document', async () => origin.hits('/stall-c.txt') === 1);
  const cancelled = await call(b, 'POST', `/v1/jobs/${added.body.id}/cancel`);
  t.equal(cancelled.status, 200, 'B cancels a job A took');
  const job = await jobEnded(a, added.body.id, 30_000);
  t.equal(job.status, 'cancelled');
  t.equal(job.items[0].stage, 'cancelled', 'the running document was stopped');
  t.equal((await call(b, 'POST', `/v1/jobs/${added.body.id}/cancel`)).body.code, 'CONFLICT', 'an ended job cannot be cancelled again');
  t.equal((await call(a, 'GET', '/v1/collections/cancel/documents')).body.total, 0, 'nothing half-ingested is left');
});

t.test('Redis restarted mid-run: new jobs answer QUEUE_UNAVAILABLE meanwhile, searches go on, and jobs run again once it is back', async (t) => {
  const { redis, origin, env } = await cluster(t);
  const [a, w] = await Promise.all([startApi(t, env, ['--role', 'api']), startApi(t, env, ['--role', 'worker'])]);
  t.equal((await call(a, 'POST', '/v1/collections', { name: 'outage' })).status, 201);
  const first = await call(a, 'POST', '/v1/collections/outage/documents', { urls: [origin.base + '/before.txt'] });
  t.equal((await jobEnded(a, first.body.id)).status, 'succeeded');

  await redis.stop();
  const refused = await call(a, 'POST', '/v1/collections/outage/documents', { urls: [origin.base + '/during.txt'] });
  t.equal(refused.status, 503, 'no job is taken while the queue is unreachable');
  t.equal(refused.body.code, 'QUEUE_UNAVAILABLE');
  t.same(await search(a, 'outage', 'dirigiblebeforetxt'), ['/before.txt'], 'searches are served meanwhile');

  await redis.start();
  let again: { status: number; body: any } = { status: 0, body: null };
  await waitFor('jobs to be taken again', async () => {
    again = await call(a, 'POST', '/v1/collections/outage/documents', { urls: [origin.base + '/after.txt'] });
    return again.status === 202;
  }, 30_000);
  t.equal((await jobEnded(a, again.body.id, 60_000)).status, 'succeeded', 'the worker runs jobs again');
  t.same(await search(a, 'outage', 'dirigibleaftertxt'), ['/after.txt']);
  t.ok(a.alive() && w.alive(), 'no process crashed');
});

t.test('Redis restarted empty with documents waiting: the workers queue again what the store still records, nothing is lost', async (t) => {
  const { redis, origin, env } = await cluster(t, { INGEST_CONCURRENCY: '1' });
  const [a, w] = await Promise.all([startApi(t, env, ['--role', 'api']), startApi(t, env, ['--role', 'worker'])]);
  t.equal((await call(a, 'POST', '/v1/collections', { name: 'lost' })).status, 201);
  const added = await call(a, 'POST', '/v1/collections/lost/documents', { urls: [origin.base + '/stall-l.txt', origin.base + '/waiting.txt'] });
  t.equal(added.status, 202);
  await waitFor('the worker to hold the first document', async () => origin.hits('/stall-l.txt') === 1);
  // No persistence: the restarted Redis has no queue; the second document lived only there and in SQLite.
  await redis.stop();
  await redis.start();
  origin.release('/stall-l.txt');
  const job = await jobEnded(a, added.body.id, 90_000);
  t.equal(job.status, 'succeeded', 'both documents end up ingested');
  t.same(job.items.map((i: { stage: string }) => i.stage), ['done', 'done']);
  t.equal(origin.hits('/waiting.txt'), 1, 'the waiting document ran once');
  t.same(await search(a, 'lost', 'fjordwaitingtxt'), ['/waiting.txt']);
  t.ok(a.alive() && w.alive(), 'no process crashed');
  t.match(w.stderr(), /"event":"kb.job.requeued"/, 'the worker logged that it queued it again');
});
