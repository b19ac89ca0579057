/**
 * REDIS_URL set: two API processes (as two replicas, or two workers) count one budget per client
 * in Redis. RATE_LIMIT_RPM=5: five calls across both pass, the sixth is 429 RATE_LIMITED on
 * either, and MCP tools/call messages spend the same budget as REST calls.
 */
import t from 'tap';
import { Redis } from 'ioredis';
import { startRedisServer } from './redis-server.ts';
import { health, mcpPost, restCall, startApi } from './api-process.ts';

const toolsCall = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'get_system_health', arguments: {} } });

t.test('two API processes share one budget through Redis: the 6th call across both is 429', async (t) => {
  const redis = await startRedisServer(t);
  const env = { REDIS_URL: redis.url, RATE_LIMIT_RPM: '5', REDIS_KEY_PREFIX: 'scale-a:' };
  const [a, b] = await Promise.all([startApi(t, env), startApi(t, env)]);
  t.not(a.address, b.address, 'two processes on two ports');

  const statuses: number[] = [];
  const remaining: string[] = [];
  for (const api of [a, b, a, b, a]) {
    const r = await restCall(api.address);
    statuses.push(r.status);
    remaining.push(r.headers.get('x-ratelimit-remaining') ?? '');
  }
  t.same(statuses, [200, 200, 200, 200, 200], 'five calls across both processes pass');
  t.same(remaining, ['4', '3', '2', '1', '0'], 'each process sees the count the other one made');
  const sixth = await restCall(b.address);
  t.equal(sixth.status, 429, 'the sixth call, on the other process, is over the shared budget');
  t.equal(sixth.body.code, 'RATE_LIMITED');
  t.match(sixth.body.error, /^Rate limit of 5 calls per minute exceeded; retry in \d+ s$/);
  t.ok(Number(sixth.headers.get('retry-after')) > 0, 'Retry-After is set');
  t.equal((await restCall(a.address)).status, 429, 'and on the first one too');

  // The counters are in Redis under the prefix (what makes them shared), not in either process.
  const probe = new Redis(redis.url, { lazyConnect: true });
  t.teardown(() => probe.disconnect());
  await probe.connect();
  const keys = await probe.keys('scale-a:rl:*');
  const clientKey = keys.find((k) => k.endsWith('ip:127.0.0.1'));
  t.ok(clientKey, `the per-client counter is a Redis key (${keys.join(', ')})`);
  t.equal(Number(await probe.get(clientKey!)), 7, 'seven calls counted: five allowed, two refused');
  const globalKey = keys.find((k) => k.endsWith('global'));
  t.equal(Number(await probe.get(globalKey!)), 5, 'the server-wide cap counted the five allowed calls');
  t.ok((await probe.pttl(clientKey!)) > 0, 'the counter expires with the window');

  const h = await health(a.address);
  t.equal(h.status, 200);
  t.equal(h.body.checks.redis, 'ok');
  t.ok(a.alive() && b.alive());
});

t.test('MCP tools/call counts against the same shared budget as REST', async (t) => {
  const redis = await startRedisServer(t);
  const env = { REDIS_URL: redis.url, RATE_LIMIT_RPM: '5', REDIS_KEY_PREFIX: 'scale-b:' };
  const [a, b] = await Promise.all([startApi(t, env), startApi(t, env)]);

  // initialize and listings are free on either process.
  for (const api of [a, b]) {
    const init = await mcpPost(api.address, { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'scale', version: '1' } } });
    t.equal(init.status, 200);
    t.equal((await mcpPost(api.address, { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} })).status, 200);
  }
  t.equal((await restCall(a.address)).status, 200, 'REST call 1 on A');
  t.equal((await restCall(b.address)).status, 200, 'REST call 2 on B');
  const c3 = await mcpPost(a.address, toolsCall(3));
  t.equal(c3.status, 200, 'tools/call 3 on A');
  t.equal(c3.body.result.isError, undefined, 'the tool ran');
  t.ok(c3.body.result.structuredContent, 'with its result');
  t.equal((await mcpPost(b.address, toolsCall(4))).status, 200, 'tools/call 4 on B');
  t.equal((await restCall(a.address)).status, 200, 'REST call 5 on A');

  const sixth = await mcpPost(b.address, toolsCall(6));
  t.equal(sixth.status, 429, 'the sixth call, an MCP tools/call on B, is refused');
  t.equal(sixth.body.code, 'RATE_LIMITED');
  t.equal((await restCall(a.address)).status, 429, 'REST on A is over the budget too');
  t.equal((await mcpPost(a.address, { jsonrpc: '2.0', id: 7, method: 'tools/list', params: {} })).status, 200, 'listings stay free');
});
