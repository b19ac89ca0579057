import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { ConfigError, ConfigSchema, loadConfig } from '../../src/config.ts';
import { configFromCli, parseCli } from '../../src/server.ts';
import { tempDir } from '../helper.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const BIN = path.join(ROOT, 'bin/rag-document-server.js');
const run = promisify(execFile);

t.test('defaults', async (t) => {
  const c = loadConfig({});
  t.equal(c.HOST, '127.0.0.1');
  t.equal(c.PORT, 8000);
  t.equal(c.RATE_LIMIT_RPM, 6000, 'unset on the loopback default HOST without keys: LOOPBACK_RATE_LIMIT_RPM (rate-limit-loopback-default.test.ts)');
  t.equal(c.REQUEST_TIMEOUT, 300);
  t.equal(c.dataDir, path.resolve('./data'));
  t.same(c.apiKeys, []);
  t.equal(c.logDir, null);
  t.ok(Object.isFrozen(c));
});

t.test('invalid values name the variable', async (t) => {
  const cases: [Record<string, string>, string][] = [
    [{ PORT: 'abc' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ RATE_LIMIT_RPM: '-1' }, 'RATE_LIMIT_RPM'],
    [{ REQUEST_TIMEOUT: '0' }, 'REQUEST_TIMEOUT'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ TRUST_PROXY: 'maybe' }, 'TRUST_PROXY'],
  ];
  for (const [env, name] of cases) {
    let err: unknown;
    try {
      loadConfig(env);
    } catch (e) {
      err = e;
    }
    t.ok(err instanceof ConfigError, JSON.stringify(env));
    t.equal((err as ConfigError).variable, name);
    t.ok((err as Error).message.startsWith(`Invalid configuration: ${name} `), (err as Error).message);
  }
});

t.test('enumerations and booleans list the allowed values', async (t) => {
  t.throws(() => loadConfig({ LOG_LEVEL: 'verbose' }), {
    message: 'Invalid configuration: LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (got "verbose")',
  });
  t.throws(() => loadConfig({ MODEL_DOWNLOADS: 'sometimes' }), { message: 'Invalid configuration: MODEL_DOWNLOADS must be one of auto, never (got "sometimes")' });
  t.throws(() => loadConfig({ MCP_TRANSPORT: 'sse' }), { message: 'Invalid configuration: MCP_TRANSPORT must be one of http, stdio (got "sse")' });
  t.throws(() => loadConfig({ TRUST_PROXY: 'maybe' }), { message: 'Invalid configuration: TRUST_PROXY must be true or false (got "maybe")' });
  t.throws(() => loadConfig({ PORT: '70000' }), { message: 'Invalid configuration: PORT must be <= 65535 (got "70000")' });
});

t.test('every integer setting takes whole numbers only', async (t) => {
  const integers = Object.entries(ConfigSchema.properties)
    .filter(([, s]) => (s as { type?: string }).type === 'integer')
    .map(([name]) => name);
  t.ok(integers.length >= 10, `integer settings: ${integers.join(', ')}`);
  for (const name of integers) {
    for (const bad of ['1.5', '2.0', '1e3', '0x10', '12abc']) {
      t.throws(() => loadConfig({ [name]: bad }), { name: 'ConfigError', variable: name, message: `Invalid configuration: ${name} must be integer (got ${JSON.stringify(bad)})` }, `${name}=${bad}`);
    }
    t.throws(
      () => loadConfig({}, { [name]: 1.5 } as never),
      { name: 'ConfigError', variable: name, message: `Invalid configuration: ${name} must be integer (got 1.5)` },
      `${name}: 1.5 as an override`,
    );
  }
  t.equal(loadConfig({ CACHE_TTL_SECONDS: '90' }).CACHE_TTL_SECONDS, 90);
  t.equal(loadConfig({ CACHE_TTL_SECONDS: ' 90 ' }).CACHE_TTL_SECONDS, 90, 'surrounding spaces are trimmed');
  // Settings in seconds that are not integers keep taking fractions.
  t.equal(loadConfig({ REQUEST_TIMEOUT: '0.5', SHUTDOWN_TIMEOUT: '1.5' }).SHUTDOWN_TIMEOUT, 1.5);
  t.throws(() => loadConfig({ REQUEST_TIMEOUT: '0x10' }), { message: 'Invalid configuration: REQUEST_TIMEOUT must be number (got "0x10")' });
});

t.test('MCP_TRANSPORT: http by default; the --transport flag wins over it', async (t) => {
  t.equal(loadConfig({}).MCP_TRANSPORT, 'http');
  t.equal(loadConfig({ MCP_TRANSPORT: 'stdio' }).MCP_TRANSPORT, 'stdio');
  t.equal(configFromCli(parseCli([]), { MCP_TRANSPORT: 'stdio' }).MCP_TRANSPORT, 'stdio', 'no flag: the environment decides');
  t.equal(configFromCli(parseCli(['--transport', 'http']), { MCP_TRANSPORT: 'stdio' }).MCP_TRANSPORT, 'http');
  t.equal(configFromCli(parseCli(['--transport', 'stdio']), { MCP_TRANSPORT: 'http' }).MCP_TRANSPORT, 'stdio');
  t.equal(configFromCli(parseCli(['--transport', 'stdio']), {}).MCP_TRANSPORT, 'stdio');
});

t.test('RATE_LIMIT_RPM=0 is accepted (rate limiting off)', async (t) => {
  t.equal(loadConfig({ RATE_LIMIT_RPM: '0' }).RATE_LIMIT_RPM, 0);
});

t.test('aliases from the original server', async (t) => {
  const c = loadConfig({ MCP_RATE_LIMIT_RPM: '7', MCP_REQUEST_TIMEOUT: '45', GPU_CONCURRENCY: '3' });
  t.same([c.RATE_LIMIT_RPM, c.REQUEST_TIMEOUT, c.RERANK_CONCURRENCY], [7, 45, 3]);
  t.equal(loadConfig({ MCP_RATE_LIMIT_RPM: '7', RATE_LIMIT_RPM: '9' }).RATE_LIMIT_RPM, 9, 'the canonical name wins');
  const keys = loadConfig({ API_KEYS: ' a , b,, ' });
  t.same(keys.apiKeys, ['a', 'b']);
});

t.test('.env.example lists every variable with its default', async (t) => {
  const example = readFileSync(path.join(ROOT, '.env.example'), 'utf8');
  for (const [name, schema] of Object.entries(ConfigSchema.properties)) {
    const line = example.split('\n').find((l) => new RegExp(`^#?\\s*${name}=`).test(l));
    t.ok(line, `${name} is listed`);
    const value = line?.replace(/^#?\s*[A-Z_]+=/, '');
    // The schema's default, as documented (RATE_LIMIT_RPM's loopback default is derived from it).
    const def = (schema as { default?: unknown }).default;
    t.equal(value, String(def), `${name} shows its default`);
  }
});

t.test('CLI flags', async (t) => {
  t.same(parseCli([]), { transport: undefined, host: undefined, port: undefined, workers: 1, reload: false, logDir: undefined, help: false, version: false });
  t.equal(parseCli(['--transport', 'stdio']).transport, 'stdio');
  t.equal(parseCli(['--workers', '4']).workers, 4);
  t.throws(() => parseCli(['--transport', 'sse']), { name: 'UsageError' });
  t.throws(() => parseCli(['--workers', '0']), { name: 'UsageError' });
  t.throws(() => parseCli(['--bogus']), { name: 'UsageError' });
  t.throws(() => parseCli(['--reload', '--workers', '2']), /--reload cannot be combined with --workers > 1/);
  t.equal(parseCli(['--reload', '--workers', '1']).reload, true);
  const c = configFromCli(parseCli(['--host', '0.0.0.0', '--port', '9001']), { PORT: '1234', HOST: 'x' });
  t.same([c.HOST, c.PORT], ['0.0.0.0', 9001], 'flags win over the environment');
  t.throws(() => configFromCli(parseCli(['--port', 'eighty']), {}), /PORT/);
});

t.test('the CLI exits non-zero naming the bad variable', async (t) => {
  const cwd = tempDir(t);
  const env = { PATH: process.env.PATH ?? '', DATA_DIR: path.join(cwd, 'data') };
  const bad = await run(process.execPath, [BIN], { cwd, env: { ...env, PORT: 'not-a-port' } }).catch((e) => e);
  t.equal(bad.code, 2);
  t.match(bad.stderr, /Invalid configuration: PORT must be integer \(got "not-a-port"\)/);
  t.equal(bad.stdout, '');
  const flags = await run(process.execPath, [BIN, '--reload', '--workers', '3'], { cwd, env }).catch((e) => e);
  t.equal(flags.code, 2);
  t.match(flags.stderr, /--reload cannot be combined with --workers > 1/);
  const level = await run(process.execPath, [BIN], { cwd, env: { ...env, LOG_LEVEL: 'verbose' } }).catch((e) => e);
  t.equal(level.code, 2);
  t.match(level.stderr, /Invalid configuration: LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent \(got "verbose"\)/);
  const stdioWorkers = await run(process.execPath, [BIN, '--workers', '2'], { cwd, env: { ...env, MCP_TRANSPORT: 'stdio' } }).catch((e) => e);
  t.equal(stdioWorkers.code, 2);
  t.match(stdioWorkers.stderr, /--workers applies to the http transport only/);
});
