/**
 * What the rate limit counts: tool calls (/v1/* and MCP tools/call). The API description, Swagger
 * UI with its assets, /info and /health are free, except when a request to them fails
 * authentication. RATE_LIMIT_RPM=0 turns the limit off, with a warning on a non-loopback bind.
 */
import t from 'tap';
import { buildTestApp } from '../helper.ts';
import { captureLogs } from './log-capture.ts';

const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const toolsCall = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'get_system_health', arguments: {} } });

t.test('/info, /openapi.json and /docs with its assets do not use up the tool-call budget', async (t) => {
  const app = await buildTestApp(t, { env: { RATE_LIMIT_RPM: '2' } });
  const html = (await app.inject('/docs')).body;
  const assets = [...html.matchAll(/(?:href|src)=["'](\/docs\/[^"']+)["']/g)].map((m) => m[1]);
  t.ok(assets.some((a) => a.endsWith('.js')) && assets.some((a) => a.endsWith('.css')), `Swagger UI assets: ${assets.join(', ')}`);
  const free = ['/info', '/openapi.json', '/docs', '/docs/', '/docs/json', '/docs/static/index.html', '/health', ...assets];
  for (let round = 0; round < 3; round++) {
    for (const url of free) {
      const res = await app.inject(url);
      t.ok(res.statusCode < 400, `${url}: ${res.statusCode}`);
      t.equal(res.headers['x-ratelimit-remaining'], undefined, `${url} is not counted`);
    }
  }
  const rest = await app.inject('/v1/system/health');
  t.equal(rest.statusCode, 200, 'the first tool call of the minute still succeeds');
  t.equal(rest.headers['x-ratelimit-remaining'], '1');
  const mcp = await app.inject({ method: 'POST', url: '/mcp', headers: MCP_HEADERS, payload: toolsCall(1) });
  t.equal(mcp.statusCode, 200, 'and the second (over MCP)');
  t.equal(mcp.json().result.structuredContent.status, 'ok');
  t.equal((await app.inject('/v1/system/health')).statusCode, 429, 'the third is over the budget of 2');
  t.equal((await app.inject('/info')).statusCode, 200, '/info stays reachable when the budget is spent');
});

t.test('with API keys, a request to a free route that fails authentication counts', async (t) => {
  const app = await buildTestApp(t, { env: { RATE_LIMIT_RPM: '2', API_KEYS: 'good-key' } });
  for (let i = 0; i < 5; i++) t.equal((await app.inject({ url: '/info', headers: { 'x-api-key': 'good-key' } })).statusCode, 200, 'with its key, /info is free');
  t.equal((await app.inject({ url: '/info', headers: { 'x-api-key': 'guess-1' } })).statusCode, 401);
  t.equal((await app.inject({ url: '/info', headers: { 'x-api-key': 'guess-2' } })).statusCode, 401);
  const third = await app.inject({ url: '/info', headers: { 'x-api-key': 'guess-3' } });
  t.equal(third.statusCode, 429, 'the third failed key of the minute from this address is refused');
  t.equal(third.json().code, 'RATE_LIMITED');
  const mcp = await app.inject({ method: 'POST', url: '/mcp', headers: { ...MCP_HEADERS, 'x-api-key': 'guess-4' }, payload: toolsCall(1) });
  t.equal(mcp.statusCode, 429, 'MCP with a wrong key counts too');
  t.equal((await app.inject('/openapi.json')).statusCode, 200, 'open routes need no key and are never counted');
});

t.test('RATE_LIMIT_RPM=0: no limit, no rate-limit headers', async (t) => {
  const logs = captureLogs('info');
  const app = await buildTestApp(t, { env: { RATE_LIMIT_RPM: '0' }, logger: logs.logger });
  for (let i = 0; i < 30; i++) {
    const res = await app.inject('/v1/system/health');
    t.equal(res.statusCode, 200);
    t.equal(res.headers['x-ratelimit-limit'], undefined);
  }
  const batch = Array.from({ length: 20 }, (_, i) => toolsCall(i));
  const mcp = await app.inject({ method: 'POST', url: '/mcp', headers: MCP_HEADERS, payload: batch });
  t.equal(mcp.statusCode, 200);
  t.equal(mcp.json().length, 20);
  t.equal(logs.events('rate_limit.off').length, 0, 'no warning on a loopback bind');
});

t.test('RATE_LIMIT_RPM=0 on a non-loopback address logs a warning at start', async (t) => {
  const logs = captureLogs('info');
  const app = await buildTestApp(t, { env: { RATE_LIMIT_RPM: '0', HOST: '0.0.0.0' }, logger: logs.logger });
  const [warning] = logs.events('rate_limit.off');
  t.match(warning, { level: 40, host: '0.0.0.0', msg: /rate limiting is off while bound to 0\.0\.0\.0/ });
  t.equal((await app.inject({ url: '/v1/system/health', headers: { host: 'docs.example:8000' } })).statusCode, 200);
});
