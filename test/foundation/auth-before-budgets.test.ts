/**
 * Authentication comes before budgets: with API_KEYS set, keyless and wrong-key requests count
 * only against the budgets of failed requests (RATE_LIMIT_RPM per address, 5x in all), never
 * against a valid key's own budget or the server-wide one. A flood of them, from any number of
 * addresses, with or without TRUST_PROXY, leaves every valid key its full minute.
 */
import t, { type Test } from 'tap';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { buildTestApp } from '../helper.ts';

const RPM = 10;
const KEYS = ['key-one', 'key-two', 'key-three', 'key-four', 'key-five'];
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const toolsCall = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'get_system_health', arguments: {} } });

/** What a flood of unauthenticated requests got: status -> count, and the 429 messages. */
async function flood(app: FastifyInstance, n: number, request: (i: number) => InjectOptions) {
  const statuses = new Map<number, number>();
  const messages = new Set<string>();
  for (let i = 0; i < n; i++) {
    const res = await app.inject(request(i));
    statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
    // The wait counts down while the flood runs: one message, whatever its number of seconds.
    if (res.statusCode === 429) messages.add(res.json().error.replace(/retry in \d+ s$/, 'retry in N s'));
  }
  return { statuses, messages };
}

/** Every key gets its whole minute: RPM calls each (5 keys x RPM = the server-wide cap), then 429. */
async function assertKeysHaveFullBudget(t: Test, app: FastifyInstance, remoteAddress?: string) {
  for (const key of KEYS) {
    for (let i = 0; i < RPM; i++) {
      const res = await app.inject({ url: '/v1/system/health', headers: { 'x-api-key': key }, remoteAddress });
      if (res.statusCode !== 200) {
        t.fail(`${key} call ${i + 1}: ${res.statusCode} ${res.body}`);
        return;
      }
      t.equal(res.headers['x-ratelimit-remaining'], String(RPM - i - 1), `${key} call ${i + 1}: its own budget, untouched by the flood`);
    }
  }
  const over = await app.inject({ url: '/v1/system/health', headers: { 'x-api-key': KEYS[0] }, remoteAddress });
  t.equal(over.statusCode, 429, 'the key is then over its own budget');
  t.match(over.json().error, /^(Rate limit of 10|Server-wide rate limit of 50) calls per minute exceeded/);
}

t.test('TRUST_PROXY: keyless calls from 60 forwarded addresses get 401, then 429, and spend no valid key budget', async (t) => {
  const app = await buildTestApp(t, { env: { API_KEYS: KEYS.join(','), RATE_LIMIT_RPM: String(RPM), TRUST_PROXY: 'true' } });
  const { statuses, messages } = await flood(app, 60, (i) => ({ url: '/v1/system/health', headers: { 'x-forwarded-for': `203.0.113.${i + 1}` } }));
  t.equal(statuses.get(401), RPM * 5, 'the server-wide budget of failed requests: 5x RATE_LIMIT_RPM');
  t.equal(statuses.get(429), 60 - RPM * 5, 'the rest are refused without checking a key');
  t.equal(messages.size, 1);
  t.match([...messages][0], /^Too many requests without a valid API key \(server-wide limit 50 per minute\); retry in N s$/);
  await assertKeysHaveFullBudget(t, app);
});

t.test('TRUST_PROXY: wrong keys on /info and /mcp count as failed requests, not against the keys', async (t) => {
  const app = await buildTestApp(t, { env: { API_KEYS: KEYS.join(','), RATE_LIMIT_RPM: String(RPM), TRUST_PROXY: 'true' } });
  const { statuses } = await flood(app, 70, (i) =>
    i % 2 === 0
      ? { url: '/info', headers: { 'x-api-key': `guess-${i}`, 'x-forwarded-for': `198.51.100.${i}` } }
      : { method: 'POST', url: '/mcp', headers: { ...MCP_HEADERS, authorization: `Bearer guess-${i}`, 'x-forwarded-for': `198.51.100.${i}` }, payload: toolsCall(i) },
  );
  t.equal(statuses.get(401), RPM * 5);
  t.equal(statuses.get(429), 20);
  // MCP tools/call counting for a valid key is unchanged: each tools/call is one call.
  const mcp = await app.inject({ method: 'POST', url: '/mcp', headers: { ...MCP_HEADERS, 'x-api-key': KEYS[0] }, payload: [toolsCall(1), toolsCall(2), toolsCall(3)] });
  t.equal(mcp.statusCode, 200, mcp.body);
  t.equal(mcp.json().length, 3);
  t.equal(mcp.headers['x-ratelimit-remaining'], String(RPM - 3), 'three tools/call messages, three calls');
  const rest = await app.inject({ url: '/v1/system/health', headers: { 'x-api-key': KEYS[0] } });
  t.equal(rest.headers['x-ratelimit-remaining'], String(RPM - 4), 'REST shares the same budget');
  const list = await app.inject({ method: 'POST', url: '/mcp', headers: { ...MCP_HEADERS, 'x-api-key': KEYS[0] }, payload: { jsonrpc: '2.0', id: 9, method: 'tools/list' } });
  t.equal(list.statusCode, 200);
  t.equal(list.headers['x-ratelimit-remaining'], undefined, 'listing is free');
});

t.test('without TRUST_PROXY, X-Forwarded-For is ignored: one address gets RATE_LIMIT_RPM failed requests', async (t) => {
  const app = await buildTestApp(t, { env: { API_KEYS: KEYS.join(','), RATE_LIMIT_RPM: String(RPM) } });
  const { statuses, messages } = await flood(app, 30, (i) => ({
    url: '/v1/system/health',
    headers: { 'x-forwarded-for': `203.0.113.${i + 1}`, ...(i % 3 === 0 ? { 'x-api-key': 'wrong' } : {}) },
  }));
  t.equal(statuses.get(401), RPM, 'RATE_LIMIT_RPM failed requests per address');
  t.equal(statuses.get(429), 30 - RPM);
  t.equal(messages.size, 1);
  t.match([...messages][0], /^Too many requests without a valid API key from this address \(limit 10 per minute\); retry in N s$/);
  // The same address, with a valid key, is served: its key budget is its own.
  await assertKeysHaveFullBudget(t, app);
});

t.test('without TRUST_PROXY, many real client addresses cannot use up the server-wide budget either', async (t) => {
  const app = await buildTestApp(t, { env: { API_KEYS: KEYS.join(','), RATE_LIMIT_RPM: String(RPM) } });
  const { statuses } = await flood(app, 80, (i) => ({ url: '/v1/unknown-route', remoteAddress: `192.0.2.${(i % 8) + 1}` }));
  t.equal(statuses.get(401), RPM * 5, 'the failed-request cap holds across addresses');
  t.equal(statuses.get(429), 30);
  await assertKeysHaveFullBudget(t, app, '192.0.2.1');
});

t.test('open routes need no key and are never counted, even during a flood', async (t) => {
  const app = await buildTestApp(t, { env: { API_KEYS: KEYS.join(','), RATE_LIMIT_RPM: String(RPM) } });
  await flood(app, 30, () => ({ url: '/v1/system/health' }));
  for (const url of ['/health', '/openapi.json']) {
    const res = await app.inject(url);
    t.equal(res.statusCode, 200, url);
    t.equal(res.headers['x-ratelimit-remaining'], undefined, `${url} is not counted`);
  }
});
