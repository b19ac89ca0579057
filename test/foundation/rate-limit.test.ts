import t from 'tap';
import { buildTestApp } from '../helper.ts';

const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const rpc = (id: number, method: string, params: object = {}) => ({ jsonrpc: '2.0', id, method, params });

t.test('REST: RATE_LIMIT_RPM calls per minute, then 429 RATE_LIMITED with Retry-After', async (t) => {
  const app = await buildTestApp(t, { env: { RATE_LIMIT_RPM: '3' } });
  const remaining: string[] = [];
  for (let i = 0; i < 3; i++) {
    const res = await app.inject('/v1/system/health');
    t.equal(res.statusCode, 200);
    t.equal(res.headers['x-ratelimit-limit'], '3');
    remaining.push(res.headers['x-ratelimit-remaining'] as string);
  }
  t.same(remaining, ['2', '1', '0']);
  const over = await app.inject({ url: '/v1/system/health', headers: { 'x-request-id': 'over-1' } });
  t.equal(over.statusCode, 429);
  t.equal(over.json().code, 'RATE_LIMITED');
  t.equal(over.json().request_id, 'over-1');
  t.match(over.json().error, /^Rate limit of 3 calls per minute exceeded; retry in \d+ s$/);
  const retryAfter = Number(over.headers['retry-after']);
  t.ok(retryAfter > 0 && retryAfter <= 60, `retry-after ${retryAfter}`);
  t.equal(over.headers['x-ratelimit-remaining'], '0');
  t.ok(Number(over.headers['x-ratelimit-reset']) > 0);

  t.equal((await app.inject('/health')).statusCode, 200, '/health is never limited');
  t.equal((await app.inject('/openapi.json')).statusCode, 200, 'the API description is never limited');
});

t.test('unknown routes count against the budget', async (t) => {
  const app = await buildTestApp(t, { env: { RATE_LIMIT_RPM: '2' } });
  t.equal((await app.inject('/v1/guess-1')).statusCode, 404);
  t.equal((await app.inject('/v1/guess-2')).statusCode, 404);
  const third = await app.inject('/v1/guess-3');
  t.equal(third.statusCode, 429);
  t.equal((await app.inject('/v1/system/health')).statusCode, 429);
});

t.test('the budget is per API key; the global cap is 5x for all clients together', async (t) => {
  const keys = ['k1', 'k2', 'k3', 'k4', 'k5', 'k6', 'k7'];
  const app = await buildTestApp(t, { env: { RATE_LIMIT_RPM: '1', API_KEYS: keys.join(',') } });
  const call = (key: string) => app.inject({ url: '/v1/system/health', headers: { 'x-api-key': key } });
  t.equal((await call('k1')).statusCode, 200);
  t.equal((await call('k1')).statusCode, 429, 'k1 used its one call');
  for (const k of ['k2', 'k3', 'k4', 'k5']) t.equal((await call(k)).statusCode, 200, `${k} has its own budget`);
  const sixth = await call('k6');
  t.equal(sixth.statusCode, 429, 'the sixth client call of the minute hits the global cap of 5');
  t.match(sixth.json().error, /^Server-wide rate limit of 5 calls per minute exceeded/);
  t.ok(Number(sixth.headers['retry-after']) > 0);
});

t.test('MCP: only tools/call counts, sharing the REST budget', async (t) => {
  const app = await buildTestApp(t, { env: { RATE_LIMIT_RPM: '3' } });
  const mcp = (body: object) => app.inject({ method: 'POST', url: '/mcp', headers: MCP_HEADERS, payload: body });
  for (let i = 0; i < 5; i++) {
    const init = await mcp(rpc(i, 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } }));
    t.equal(init.statusCode, 200);
    t.equal((await mcp(rpc(i, 'tools/list'))).statusCode, 200);
  }
  t.equal((await app.inject('/v1/system/health')).statusCode, 200, 'REST call 1');
  const call = () => mcp(rpc(9, 'tools/call', { name: 'get_system_health', arguments: {} }));
  const first = await call();
  t.equal(first.statusCode, 200);
  t.equal(first.json().result.structuredContent.status, 'ok');
  t.equal(first.headers['x-ratelimit-remaining'], '1');
  t.equal((await call()).statusCode, 200);
  const over = await call();
  t.equal(over.statusCode, 429, 'the fourth call of the minute (1 REST + 3 MCP) is refused');
  t.equal(over.json().code, 'RATE_LIMITED');
  t.ok(Number(over.headers['retry-after']) > 0);
  t.equal((await mcp(rpc(10, 'tools/list'))).statusCode, 200, 'listing stays free');
  t.equal((await app.inject('/v1/system/health')).statusCode, 429, 'REST shares the exhausted budget');
});

t.test('MCP batches count each tools/call', async (t) => {
  const app = await buildTestApp(t, { env: { RATE_LIMIT_RPM: '2' } });
  const batch = [1, 2, 3].map((i) => rpc(i, 'tools/call', { name: 'manage_cache', arguments: {} }));
  const res = await app.inject({ method: 'POST', url: '/mcp', headers: MCP_HEADERS, payload: batch });
  t.equal(res.statusCode, 429);
});
