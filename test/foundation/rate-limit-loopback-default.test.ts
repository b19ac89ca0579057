/**
 * Local-first rate limits: with RATE_LIMIT_RPM unset, a server bound only to loopback without API
 * keys allows LOOPBACK_RATE_LIMIT_RPM calls a minute per client (one developer's scripts do not
 * meet a 429), and says so in its log; any other bind, or API keys, or an explicit RATE_LIMIT_RPM
 * keep the limit as set (default 60).
 */
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { LOOPBACK_RATE_LIMIT_RPM, loadConfig } from '../../src/config.ts';
import { buildTestApp, tempDir } from '../helper.ts';
import { captureLogs } from './log-capture.ts';

const CALLS = 70;
const detect = (i: number) => ({ text: `Ceci est le petit texte numéro ${i}, écrit en français pour le test.` });

t.test('which binds get the loopback default', async (t) => {
  t.ok(LOOPBACK_RATE_LIMIT_RPM >= 1_000, 'far above one developer script');
  for (const HOST of ['127.0.0.1', 'localhost', '::1', '127.0.0.2']) {
    const c = loadConfig({ HOST });
    t.same([c.RATE_LIMIT_RPM, c.rateLimitSource], [LOOPBACK_RATE_LIMIT_RPM, 'loopback-default'], `HOST=${HOST}`);
  }
  t.same([loadConfig({}).RATE_LIMIT_RPM, loadConfig({}).rateLimitSource], [LOOPBACK_RATE_LIMIT_RPM, 'loopback-default'], 'the default HOST is loopback');
  for (const HOST of ['0.0.0.0', '::', '192.168.1.20', 'docs.example.test']) {
    const c = loadConfig({ HOST });
    t.same([c.RATE_LIMIT_RPM, c.rateLimitSource], [60, 'default'], `HOST=${HOST} keeps 60`);
  }
  const keyed = loadConfig({ HOST: '127.0.0.1', API_KEYS: 'a-key' });
  t.same([keyed.RATE_LIMIT_RPM, keyed.rateLimitSource], [60, 'default'], 'API keys on loopback keep 60');
  const explicit = loadConfig({ HOST: '127.0.0.1', RATE_LIMIT_RPM: '60' });
  t.same([explicit.RATE_LIMIT_RPM, explicit.rateLimitSource], [60, 'explicit'], 'an explicit value wins, even the old default');
  t.equal(loadConfig({ MCP_RATE_LIMIT_RPM: '25' }).RATE_LIMIT_RPM, 25, 'the alias counts as explicit');
  t.equal(loadConfig({ RATE_LIMIT_RPM: '0' }).RATE_LIMIT_RPM, 0, 'explicit 0 stays off');
  t.equal(loadConfig({}, { RATE_LIMIT_RPM: 9 }).rateLimitSource, 'explicit', 'an override counts as explicit');
});

t.test(`a real loopback server without keys: ${CALLS} quick detect_language calls, no 429`, async (t) => {
  const logs = captureLogs('info');
  const config = loadConfig({ DATA_DIR: tempDir(t), HOST: '127.0.0.1', PORT: '0' });
  const app = await buildTestApp(t, { config, logger: logs.logger });
  await app.listen({ host: config.HOST, port: 0 });
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const statuses: number[] = [];
  // Ten at a time, as a script with a small pool would send them.
  for (let i = 0; i < CALLS; i += 10) {
    const batch = await Promise.all(
      Array.from({ length: 10 }, (_, k) =>
        fetch(`${base}/v1/language/detect`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(detect(i + k)) }).then(async (r) => {
          await r.arrayBuffer();
          return r.status;
        }),
      ),
    );
    statuses.push(...batch);
  }
  t.equal(statuses.length, CALLS);
  t.same([...new Set(statuses)], [200], 'every call answered 200');
  const [line] = logs.events('rate_limit.loopback_default');
  t.match(line, { rpm: LOOPBACK_RATE_LIMIT_RPM, msg: /default of a loopback bind without API keys \(set RATE_LIMIT_RPM/ }, 'the start says which limit applies');
  const health = await (await fetch(`${base}/v1/system/health`)).json();
  t.equal(health.security.rate_limit_rpm, LOOPBACK_RATE_LIMIT_RPM, 'get_system_health reports the limit in force');
});

t.test(`a non-loopback bind keeps the default: ${CALLS} calls, the ones past 60 are 429`, async (t) => {
  // Built with the configuration of a 0.0.0.0 bind, never listening on it: app.inject only.
  const logs = captureLogs('info');
  const config = loadConfig({ DATA_DIR: tempDir(t), HOST: '0.0.0.0' });
  t.equal(config.RATE_LIMIT_RPM, 60);
  const app = await buildTestApp(t, { config, logger: logs.logger });
  const statuses: number[] = [];
  for (let i = 0; i < CALLS; i++) {
    const res = await app.inject({ method: 'POST', url: '/v1/language/detect', headers: { host: '127.0.0.1' }, payload: detect(i) });
    statuses.push(res.statusCode);
    if (res.statusCode === 429) t.equal(res.json().code, 'RATE_LIMITED');
  }
  t.equal(statuses.filter((s) => s === 200).length, 60, '60 calls pass');
  t.equal(statuses.filter((s) => s === 429).length, CALLS - 60, 'the rest are RATE_LIMITED');
  t.equal(logs.events('rate_limit.loopback_default').length, 0, 'no loopback-default line');
});
