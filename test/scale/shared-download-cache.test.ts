/**
 * The shared download cache (REDIS_URL set): two servers on one real redis-server and a loopback
 * origin that counts its requests. A document downloaded by A is served to B from Redis without B
 * asking the origin; the byte bound evicts least recently used entries; a file over the entry cap,
 * a Cache-Control no-store/private response and a deployment with other address rules are not
 * shared; bytes that do not match their hash are not served; manage_cache reports and clears the
 * tier for every process; and with Redis down B downloads from the origin and answers normally.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { Redis } from 'ioredis';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.ts';
import { createServices } from '../../src/services.ts';
import { testConfig, type Teardown } from '../helper.ts';
import { startRedisServer } from './redis-server.ts';
import { waitFor } from './api-process.ts';

interface Origin {
  /** Serves `body` at /<name> with extra response headers; returns its URL. */
  add(name: string, body: string, headers?: Record<string, string>): string;
  hits(name: string): number;
}

async function startOrigin(t: Teardown): Promise<Origin> {
  const files = new Map<string, { body: Buffer; headers: Record<string, string> }>();
  const hits = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const name = (req.url ?? '/').slice(1);
    hits.set(name, (hits.get(name) ?? 0) + 1);
    const f = files.get(name);
    if (!f) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'content-length': f.body.length, ...f.headers }).end(f.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  t.teardown(() => new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  }));
  return {
    add(name, body, headers = {}) {
      files.set(name, { body: Buffer.from(body), headers });
      return `${base}/${name}`;
    },
    hits: (name) => hits.get(name) ?? 0,
  };
}

/** A server on this Redis (in this process; extraction inline, no models): what a replica runs. */
async function startServer(t: Teardown, env: Record<string, string>): Promise<FastifyInstance> {
  const config = testConfig(t, { ALLOW_PRIVATE_NETWORKS: 'true', ...env });
  const services = createServices(config, { inlineExtraction: true, startModels: false });
  const app = await buildApp({ config, services });
  t.teardown(async () => {
    await app.close();
    await services.close();
  });
  await app.ready();
  return app;
}

async function processDocument(app: FastifyInstance, url: string) {
  const res = await app.inject({ method: 'POST', url: '/v1/documents/process', payload: { document_url: url } });
  return { status: res.statusCode, body: res.json() };
}

async function cacheCall(app: FastifyInstance, action: 'stats' | 'clear') {
  const res = await app.inject({ method: 'POST', url: '/v1/cache', payload: { action } });
  return res.json();
}

async function sharedLayer(app: FastifyInstance) {
  return (await cacheCall(app, 'stats')).layers.find((l: { name: string }) => l.name === 'download_shared');
}

async function sharedHealth(app: FastifyInstance) {
  const res = await app.inject({ method: 'GET', url: '/v1/system/health' });
  return res.json().features.shared_download_cache;
}

const text = (label: string, bytes: number) => `${label} `.repeat(Math.ceil(bytes / (label.length + 1))).slice(0, bytes);

t.test('a document downloaded by A is served to B from Redis, without B asking the origin', async (t) => {
  const redis = await startRedisServer(t);
  const origin = await startOrigin(t);
  const env = { REDIS_URL: redis.url, REDIS_KEY_PREFIX: 'dl-a:' };
  const [a, b] = await Promise.all([startServer(t, env), startServer(t, env)]);
  const url = origin.add('report.txt', `Quarterly report. ${text('revenue grew', 20_000)}`, { 'content-disposition': 'attachment; filename="q3.txt"' });

  const first = await processDocument(a, url);
  t.equal(first.status, 200);
  t.equal(origin.hits('report.txt'), 1, 'A downloaded it');
  await waitFor('A to store it in Redis', async () => (await sharedLayer(a)).entries === 1);

  const second = await processDocument(b, url);
  t.equal(second.status, 200, 'B answers');
  t.equal(origin.hits('report.txt'), 1, 'B did not ask the origin: the bytes came from Redis');
  t.equal(second.body.content, first.body.content, 'the same content');
  t.same(second.body.metadata, first.body.metadata, 'the same metadata (file name, type, size, hash) from the cached response metadata');
  t.equal(second.body.metadata.filename, 'q3.txt', 'the Content-Disposition file name travelled with it');

  const layer = await sharedLayer(b);
  t.equal(layer.hits, 1, "B's shared-tier hit is counted");
  t.equal(layer.entries, 1, 'one document in the shared tier');
  t.ok(layer.bytes >= 20_000 && layer.bytes <= layer.max_bytes, `its bytes are charged (${layer.bytes})`);
  t.equal(layer.max_bytes, 256 * 1024 * 1024, 'REDIS_CACHE_MAX_BYTES default');
  t.equal(layer.ttl_seconds, 1800, 'the TTL of the download cache (CACHE_TTL_SECONDS)');
  const health = await sharedHealth(b);
  t.equal(health.available, true);
  t.equal(health.hits, 1);

  // The entries are in Redis under the prefix, with the TTL (what makes them shared and bounded).
  const probe = new Redis(redis.url, { lazyConnect: true });
  t.teardown(() => probe.disconnect());
  await probe.connect();
  const keys = (await probe.keys('dl-a:dl:*')).sort();
  t.equal(keys.filter((k) => k.startsWith('dl-a:dl:u:')).length, 1, 'one URL entry');
  const blobs = keys.filter((k) => k.startsWith('dl-a:dl:b:'));
  t.equal(blobs.length, 1, 'one content entry, named by its hash');
  t.equal(blobs[0], `dl-a:dl:b:${first.body.metadata.content_sha256}`);
  const ttl = await probe.pttl(blobs[0]!);
  t.ok(ttl > 0 && ttl <= 1800_000, `the bytes expire with the cache TTL (${ttl} ms left)`);

  // A second URL with the same content stores one more URL entry, not a second copy of the bytes.
  const mirror = origin.add('mirror.txt', `Quarterly report. ${text('revenue grew', 20_000)}`);
  t.equal((await processDocument(a, mirror)).status, 200);
  await waitFor('the mirror URL to be stored', async () => (await sharedLayer(a)).entries === 2);
  t.equal((await probe.keys('dl-a:dl:b:*')).length, 1, 'the content is kept once');
  t.equal((await processDocument(b, mirror)).status, 200);
  t.equal(origin.hits('mirror.txt'), 1, 'and B serves the mirror URL from Redis too');

  // manage_cache clear on one process empties the shared tier for all.
  const cleared = await cacheCall(b, 'clear');
  t.equal(cleared.evicted.download_shared, 2, 'clear reports the shared entries it removed');
  t.same(await probe.keys('dl-a:dl:[ub]:*'), [], 'nothing left in Redis');
  const c = await startServer(t, env);
  t.equal((await processDocument(c, url)).status, 200);
  t.equal(origin.hits('report.txt'), 2, 'after clear, a third process downloads it again');
});

t.test('the byte bound evicts the least recently used; files over the entry cap are not stored', async (t) => {
  const redis = await startRedisServer(t);
  const origin = await startOrigin(t);
  // 100 KB in all: two 40 KB documents fit, a third evicts the least recently used.
  const env = { REDIS_URL: redis.url, REDIS_KEY_PREFIX: 'dl-b:', REDIS_CACHE_MAX_BYTES: '100000', REDIS_CACHE_MAX_ENTRY_BYTES: '50000' };
  const [a, b] = await Promise.all([startServer(t, env), startServer(t, env)]);
  const one = origin.add('one.txt', text('first document', 40_000));
  const two = origin.add('two.txt', text('second document', 40_000));
  const three = origin.add('three.txt', text('third document', 40_000));
  const big = origin.add('big.txt', text('too big for the shared tier', 60_000));

  await processDocument(a, one);
  await waitFor('one stored', async () => (await sharedLayer(a)).entries === 1);
  await processDocument(a, two);
  await waitFor('two stored', async () => (await sharedLayer(a)).entries === 2);
  // B reads one: now two is the least recently used.
  t.equal((await processDocument(b, one)).status, 200);
  t.equal(origin.hits('one.txt'), 1, 'one came from Redis');
  await processDocument(a, three);
  await waitFor('three stored, two evicted', async () => (await sharedLayer(a)).evictions >= 1);
  const layer = await sharedLayer(a);
  t.equal(layer.entries, 2, 'still two documents');
  t.ok(layer.bytes <= 100_000, `within REDIS_CACHE_MAX_BYTES (${layer.bytes} bytes)`);
  t.ok(layer.evictions >= 1, `evictions counted (${layer.evictions})`);

  t.equal((await processDocument(b, two)).status, 200);
  t.equal(origin.hits('two.txt'), 2, 'two was evicted: B downloads it');
  t.equal((await processDocument(b, three)).status, 200);
  t.equal(origin.hits('three.txt'), 1, 'three is in Redis');
  const bLayer = await sharedLayer(b);
  t.ok(bLayer.bytes <= 100_000, `B's own write kept the bound too (${bLayer.bytes} bytes)`);

  // 60 KB > REDIS_CACHE_MAX_ENTRY_BYTES: served, never stored.
  t.equal((await processDocument(a, big)).status, 200);
  t.equal((await sharedHealth(a)).skipped_too_large, 1, 'the oversize file was skipped');
  t.equal((await processDocument(b, big)).status, 200);
  t.equal(origin.hits('big.txt'), 2, 'so B downloads it from the origin');
  const probe = new Redis(redis.url, { lazyConnect: true });
  t.teardown(() => probe.disconnect());
  await probe.connect();
  const sizes = await Promise.all((await probe.keys('dl-b:dl:b:*')).map((k) => probe.strlen(k)));
  t.ok(sizes.every((n) => n <= 50_000), `no stored file is over the entry cap (${sizes.join(', ')})`);
});

t.test('not shared: Cache-Control no-store / private, other address rules, bytes that fail their hash; REDIS_CACHE_MAX_BYTES=0', async (t) => {
  const redis = await startRedisServer(t);
  const origin = await startOrigin(t);
  const env = { REDIS_URL: redis.url, REDIS_KEY_PREFIX: 'dl-c:' };
  const [a, b] = await Promise.all([startServer(t, env), startServer(t, env)]);

  const noStore = origin.add('no-store.txt', text('secret one', 2_000), { 'cache-control': 'no-store' });
  const priv = origin.add('private.txt', text('secret two', 2_000), { 'cache-control': 'private, max-age=60' });
  const open = origin.add('public.txt', text('public', 2_000), { 'cache-control': 'public, max-age=60' });
  for (const u of [noStore, priv, open]) t.equal((await processDocument(a, u)).status, 200);
  await waitFor('the public one stored', async () => (await sharedLayer(a)).entries === 1);
  t.equal((await sharedHealth(a)).skipped_not_shareable, 2, 'no-store and private were not stored');
  for (const u of [noStore, priv, open]) t.equal((await processDocument(b, u)).status, 200);
  t.equal(origin.hits('no-store.txt'), 2, 'no-store: B downloads it again');
  t.equal(origin.hits('private.txt'), 2, 'private: B downloads it again');
  t.equal(origin.hits('public.txt'), 1, 'public: served from Redis');

  // Another deployment on the same prefix with other address rules never gets the entry.
  const port = new URL(open).port;
  const other = await startServer(t, { ...env, ALLOW_PRIVATE_NETWORKS: 'false', ALLOWED_HOSTS: `127.0.0.1:${port}` });
  t.equal((await processDocument(other, open)).status, 200);
  t.equal(origin.hits('public.txt'), 2, 'other ALLOWED_HOSTS / ALLOW_PRIVATE_NETWORKS: its own key, so it downloads');

  // Bytes replaced in Redis (corrupt, or written by someone else) are not served.
  const probe = new Redis(redis.url, { lazyConnect: true });
  t.teardown(() => probe.disconnect());
  await probe.connect();
  const blobKeys = await probe.keys('dl-c:dl:b:*');
  t.equal(blobKeys.length, 1);
  await probe.set(blobKeys[0]!, text('tampered', 2_000), 'KEEPTTL');
  const fresh = await startServer(t, env);
  const served = await processDocument(fresh, open);
  t.equal(served.status, 200);
  t.match(served.body.content, /public/, 'the origin content, not the tampered bytes');
  t.notMatch(served.body.content, /tampered/);
  t.equal(origin.hits('public.txt'), 3, 'downloaded again from the origin');
  t.equal((await sharedHealth(fresh)).corrupt, 1, 'the mismatch is counted');
  // Its download stored the right bytes again: the next process is served them from Redis.
  await waitFor('the healed entry', async () => (await sharedLayer(fresh)).entries >= 1);
  const healed = await startServer(t, env);
  const again = await processDocument(healed, open);
  t.equal(origin.hits('public.txt'), 3, 'served from Redis after the re-download');
  t.equal(again.body.content, served.body.content, 'with the origin content');

  // REDIS_CACHE_MAX_BYTES=0: no shared tier at all.
  const off = await startServer(t, { ...env, REDIS_CACHE_MAX_BYTES: '0' });
  t.notOk(await sharedLayer(off), 'no download_shared layer');
  t.notOk(await sharedHealth(off), 'and no health section');
  t.equal((await processDocument(off, open)).status, 200);
  t.equal(origin.hits('public.txt'), 4, 'it downloads by itself');
});

t.test('Redis down: B downloads from the origin and answers normally; back, sharing resumes', async (t) => {
  const redis = await startRedisServer(t);
  const origin = await startOrigin(t);
  const env = { REDIS_URL: redis.url, REDIS_KEY_PREFIX: 'dl-d:' };
  const [a, b] = await Promise.all([startServer(t, env), startServer(t, env)]);
  const url = origin.add('doc.txt', text('resilient document', 5_000));
  t.equal((await processDocument(a, url)).status, 200);
  await waitFor('stored', async () => (await sharedLayer(a)).entries === 1);

  await redis.stop();
  const down = await processDocument(b, url);
  t.equal(down.status, 200, 'B answers normally with Redis down');
  t.match(down.body.content, /resilient document/);
  t.equal(origin.hits('doc.txt'), 2, 'it downloaded from the origin (the Redis failure was a miss)');
  const url2 = origin.add('doc2.txt', text('another document', 5_000));
  t.equal((await processDocument(b, url2)).status, 200, 'and a new document too');
  const stats = await cacheCall(b, 'stats');
  t.ok(stats.layers.some((l: { name: string }) => l.name === 'download_shared'), 'manage_cache stats still answers, with the shared layer');
  const cleared = await cacheCall(b, 'clear');
  t.equal(cleared.evicted.download_shared, 0, 'clear answers too (nothing reachable to clear)');
  const health = await sharedHealth(b);
  t.equal(health.available, false, 'get_system_health says the shared tier is unreachable');
  t.match(health.reason, /^download_shared: Redis unreachable/);
  t.ok(health.errors >= 1, `failures counted (${health.errors})`);

  await redis.start();
  // The restarted Redis is empty (no persistence); after the backoff the tier is used again.
  await waitFor('B to store again after the restart', async () => {
    b.services.caches.clear();
    await processDocument(b, url2);
    return (await sharedLayer(b)).entries >= 1;
  }, 30_000);
  a.services.caches.clear();
  const before = origin.hits('doc2.txt');
  t.equal((await processDocument(a, url2)).status, 200);
  t.equal(origin.hits('doc2.txt'), before, 'A is served from Redis again');
});

t.test('Redis frozen (no answers on an open connection): B does not wait on it, downloads and answers', async (t) => {
  const redis = await startRedisServer(t);
  const origin = await startOrigin(t);
  const env = { REDIS_URL: redis.url, REDIS_KEY_PREFIX: 'dl-e:' };
  const [a, b] = await Promise.all([startServer(t, env), startServer(t, env)]);
  const url = origin.add('frozen.txt', text('frozen redis', 5_000));
  // B has used its connection before (a miss), so it is open when Redis freezes.
  t.equal((await processDocument(b, origin.add('warm.txt', text('warm up', 100)))).status, 200);
  t.equal((await processDocument(a, url)).status, 200);
  await waitFor('both stored', async () => (await sharedLayer(a)).entries === 2);
  const probe = new Redis(redis.url, { lazyConnect: true });
  t.teardown(() => probe.disconnect());
  await probe.connect();
  const pid = Number(/process_id:(\d+)/.exec(await probe.info('server'))![1]);
  // SIGSTOP the redis-server this test started: connections stay open, nothing answers.
  process.kill(pid, 'SIGSTOP');
  t.teardown(() => {
    try {
      process.kill(pid, 'SIGCONT');
    } catch {
      // already gone
    }
  });
  const frozen = await processDocument(b, url);
  t.equal(frozen.status, 200, 'B answers while Redis does not');
  t.match(frozen.body.content, /frozen redis/);
  t.equal(origin.hits('frozen.txt'), 2, 'the lookup timed out into a miss: downloaded from the origin');
  const health = await sharedHealth(b);
  t.equal(health.available, false, 'the timeout is reported');
  t.match(health.reason, /no answer within 1000 ms/);
  process.kill(pid, 'SIGCONT');
});

t.test('expired entries leave the byte count (CACHE_TTL_SECONDS)', async (t) => {
  const redis = await startRedisServer(t);
  const origin = await startOrigin(t);
  const env = { REDIS_URL: redis.url, REDIS_KEY_PREFIX: 'dl-f:', CACHE_TTL_SECONDS: '1' };
  const [a, b] = await Promise.all([startServer(t, env), startServer(t, env)]);
  const url = origin.add('short.txt', text('short lived', 3_000));
  t.equal((await processDocument(a, url)).status, 200);
  await waitFor('stored', async () => (await sharedLayer(a)).entries === 1);
  await waitFor('the entry to expire', async () => {
    const layer = await sharedLayer(b);
    return layer.entries === 0 && layer.bytes === 0;
  });
  const layer = await sharedLayer(b);
  t.ok(layer.evictions >= 1, 'the expiry counts as an eviction');
  b.services.caches.clear();
  t.equal((await processDocument(b, url)).status, 200);
  t.equal(origin.hits('short.txt'), 2, 'expired: downloaded again');
});
