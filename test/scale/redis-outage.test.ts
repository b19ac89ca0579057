/**
 * Redis taken away from running servers (the redis-server process killed) and given back, in both
 * REDIS_FAILURE_MODEs: open keeps serving without limits and /health says Redis is down (still
 * 200); closed answers limited routes 503 RATE_LIMIT_UNAVAILABLE and /health 503. Open routes
 * answer in both. Once Redis is back the limits apply again, and no process crashes.
 */
import t from 'tap';
import { startRedisServer } from './redis-server.ts';
import { health, mcpPost, restCall, startApi, waitFor } from './api-process.ts';

const toolsCall = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'get_system_health', arguments: {} } });

t.test('fail open: Redis down, calls are served unlimited and /health says so; back, the limit applies again', async (t) => {
  const redis = await startRedisServer(t);
  const api = await startApi(t, { REDIS_URL: redis.url, RATE_LIMIT_RPM: '5', REDIS_FAILURE_MODE: 'open' });
  for (let i = 0; i < 5; i++) t.equal((await restCall(api.address)).status, 200);
  t.equal((await restCall(api.address)).status, 429, 'the limit holds while Redis is up');

  await redis.stop();
  await waitFor('/health to see Redis down', async () => (await health(api.address)).body.checks.redis === 'down');
  const down = await health(api.address);
  t.equal(down.status, 200, 'fail open: still ready, the server serves');
  t.equal(down.body.ready, true);
  t.match(down.body.reason, /^redis: unreachable \(.+\); rate limits are not enforced \(REDIS_FAILURE_MODE=open\)$/);
  const served: number[] = [];
  for (let i = 0; i < 8; i++) served.push((await restCall(api.address)).status);
  t.same(served, Array(8).fill(200), 'over the budget, yet served: the limit is not enforced while Redis is down');
  const call = await mcpPost(api.address, toolsCall(1));
  t.equal(call.status, 200, 'MCP tools/call is served too');
  const features = call.body.result.structuredContent.features;
  t.equal(features.redis.available, false, 'get_system_health reports Redis unavailable');
  t.equal(features.redis.failure_mode, 'open');
  t.ok(features.redis.limiter_errors >= 9, `the limiter calls that could not reach Redis are counted (${features.redis.limiter_errors})`);
  t.ok(features.redis.disconnects >= 1);

  await redis.start();
  await waitFor('/health to see Redis back', async () => (await health(api.address)).body.checks.redis === 'ok');
  const back = await health(api.address);
  t.equal(back.status, 200);
  t.equal(back.body.reason, undefined, 'no reason once Redis is back');
  const after: number[] = [];
  for (let i = 0; i < 6; i++) after.push((await restCall(api.address)).status);
  t.same(after, [200, 200, 200, 200, 200, 429], 'limits apply again (a fresh window: the restarted Redis kept nothing)');
  t.ok(api.alive(), 'no crash');
  t.match(api.stderr(), /"event":"redis.down"/, 'the loss is logged');
  t.match(api.stderr(), /"event":"redis.reconnected"/, 'and the return');
});

t.test('fail closed: Redis down, limited routes answer 503 RATE_LIMIT_UNAVAILABLE and /health 503; back, served and limited', async (t) => {
  const redis = await startRedisServer(t);
  const api = await startApi(t, { REDIS_URL: redis.url, RATE_LIMIT_RPM: '5', REDIS_FAILURE_MODE: 'closed' });
  t.equal((await restCall(api.address)).status, 200);

  await redis.stop();
  await waitFor('/health to see Redis down', async () => (await health(api.address)).status === 503);
  const down = await health(api.address);
  t.equal(down.body.ready, false, 'fail closed: not ready, so a load balancer sends traffic elsewhere');
  t.equal(down.body.checks.redis, 'down');
  t.match(down.body.reason, /^redis: unreachable \(.+\); rate-limited routes answer 503 RATE_LIMIT_UNAVAILABLE \(REDIS_FAILURE_MODE=closed\)$/);
  for (let i = 0; i < 3; i++) {
    const r = await restCall(api.address);
    t.equal(r.status, 503, 'a REST tool call is refused');
    t.equal(r.body.code, 'RATE_LIMIT_UNAVAILABLE');
    t.match(r.body.error, /Redis \(REDIS_URL\) is unreachable and REDIS_FAILURE_MODE=closed/);
    t.equal(r.headers.get('retry-after'), '5');
    t.ok(r.body.request_id, 'the usual error body');
  }
  const mcp = await mcpPost(api.address, toolsCall(1));
  t.equal(mcp.status, 503, 'an MCP tools/call is refused the same way');
  t.equal(mcp.body.code, 'RATE_LIMIT_UNAVAILABLE');
  t.equal((await mcpPost(api.address, { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} })).status, 200, 'listings, which are not counted, still answer');
  t.equal((await fetch(`${api.address}/info`)).status, 200, '/info still answers');

  await redis.start();
  await waitFor('/health to be ready again', async () => (await health(api.address)).status === 200);
  t.equal((await health(api.address)).body.checks.redis, 'ok');
  const after: number[] = [];
  for (let i = 0; i < 6; i++) after.push((await restCall(api.address)).status);
  t.same(after, [200, 200, 200, 200, 200, 429], 'served again, and limited again');
  t.ok(api.alive(), 'no crash');
});

t.test('--workers 2 with Redis: the workers of one server share the budget, and survive a Redis restart', async (t) => {
  const redis = await startRedisServer(t);
  const api = await startApi(t, { REDIS_URL: redis.url, RATE_LIMIT_RPM: '5' }, ['--workers', '2']);
  await waitFor('both workers to listen', async () => (api.stderr().match(/Server listening at/g) ?? []).length >= 2, 60_000);
  // Fresh connections each time, so the cluster's round robin spreads them over both workers.
  const call = () => fetch(`${api.address}/v1/system/health`, { headers: { connection: 'close' } });
  const statuses: number[] = [];
  for (let i = 0; i < 6; i++) {
    const res = await call();
    statuses.push(res.status);
    await res.arrayBuffer();
  }
  t.same(statuses, [200, 200, 200, 200, 200, 429], 'five calls in all across the workers, then 429');
  // Which worker answered: the pid of each "request completed" log line.
  const pids = new Set(
    api.stderr().split('\n').filter((l) => l.includes('"request completed"')).map((l) => (JSON.parse(l) as { pid: number }).pid),
  );
  t.equal(pids.size, 2, `both workers answered some of the six calls (pids ${[...pids].join(', ')})`);
  await redis.stop();
  await redis.start();
  await waitFor('the workers to reconnect', async () => (await health(api.address)).body.checks.redis === 'ok');
  t.equal((await call()).status, 200, 'served after the restart (a fresh window)');
  t.ok(api.alive(), 'the primary is still running');
  t.notMatch(api.stderr(), /"msg":"worker exited"/, 'no worker crashed');
});
