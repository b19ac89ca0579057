import t from 'tap';
import { buildTestApp } from '../helper.ts';
import { isValidApiKey } from '../../plugins/auth.ts';

const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const toolsList = { jsonrpc: '2.0', id: 1, method: 'tools/list' };

t.test('with API_KEYS set, REST and /mcp need a key; /health, /docs and /openapi.json stay open', async (t) => {
  const app = await buildTestApp(t, { env: { API_KEYS: 'alpha-key, beta-key' } });

  const none = await app.inject({ url: '/v1/system/health', headers: { 'x-request-id': 'no-key' } });
  t.equal(none.statusCode, 401);
  t.same(none.json(), {
    error: 'A valid API key is required: send "Authorization: Bearer <key>" or "x-api-key: <key>"',
    code: 'UNAUTHORIZED',
    request_id: 'no-key',
  });
  t.equal(none.headers['www-authenticate'], 'Bearer');

  t.equal((await app.inject({ url: '/v1/system/health', headers: { authorization: 'Bearer alpha-key' } })).statusCode, 200);
  t.equal((await app.inject({ url: '/v1/system/health', headers: { authorization: 'bearer beta-key' } })).statusCode, 200);
  t.equal((await app.inject({ url: '/v1/system/health', headers: { 'x-api-key': 'beta-key' } })).statusCode, 200);
  for (const headers of [{ authorization: 'Bearer alpha-ke' }, { authorization: 'Basic alpha-key' }, { 'x-api-key': 'alpha-key ' }, { 'x-api-key': '' }]) {
    t.equal((await app.inject({ url: '/v1/system/health', headers })).statusCode, 401, JSON.stringify(headers));
  }
  t.equal((await app.inject({ url: '/info' })).statusCode, 401, '/info needs a key');
  t.equal((await app.inject({ method: 'POST', url: '/v1/cache', payload: { action: 'clear' } })).statusCode, 401);
  t.equal((await app.inject({ url: '/v1/unknown' })).statusCode, 401, 'unknown routes do not reveal themselves');
  t.equal((await app.inject({ method: 'POST', url: '/mcp', headers: MCP_HEADERS, payload: toolsList })).statusCode, 401);
  const mcp = await app.inject({ method: 'POST', url: '/mcp', headers: { ...MCP_HEADERS, 'x-api-key': 'alpha-key' }, payload: toolsList });
  t.equal(mcp.statusCode, 200);
  t.ok(mcp.json().result.tools.length > 0);

  t.equal((await app.inject('/health')).statusCode, 200);
  t.equal((await app.inject('/openapi.json')).statusCode, 200);
  t.equal((await app.inject('/docs/')).statusCode, 200);
  t.equal((await app.inject('/docs/json')).statusCode, 200);

  const health = (await app.inject({ url: '/v1/system/health', headers: { 'x-api-key': 'alpha-key' } })).json();
  t.same(health.features.auth, { available: true });
  t.equal(health.security.api_keys, 2);
});

t.test('without API_KEYS every client is accepted', async (t) => {
  const app = await buildTestApp(t);
  t.equal((await app.inject('/info')).statusCode, 200);
});

t.test('key comparison', async (t) => {
  t.equal(isValidApiKey(['a', 'bb'], 'bb'), true);
  t.equal(isValidApiKey(['a', 'bb'], 'b'), false);
  t.equal(isValidApiKey(['a'], undefined), false);
  t.equal(isValidApiKey([], 'a'), false);
});
