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
  t.equal(c.RATE_LIMIT_RPM, 60);
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
    [{ RATE_LIMIT_RPM: '0' }, 'RATE_LIMIT_RPM'],
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

t.test('aliases from the original server', async (t) => {
  const c = loadConfig({ MCP_RATE_LIMIT_RPM: '7', MCP_REQUEST_TIMEOUT: '45', GPU_CONCURRENCY: '3' });
  t.same([c.RATE_LIMIT_RPM, c.REQUEST_TIMEOUT, c.RERANK_CONCURRENCY], [7, 45, 3]);
  t.equal(loadConfig({ MCP_RATE_LIMIT_RPM: '7', RATE_LIMIT_RPM: '9' }).RATE_LIMIT_RPM, 9, 'the canonical name wins');
  const keys = loadConfig({ API_KEYS: ' a , b,, ' });
  t.same(keys.apiKeys, ['a', 'b']);
});

t.test('.env.example lists every variable with its default', async (t) => {
  const example = readFileSync(path.join(ROOT, '.env.example'), 'utf8');
  const defaults = loadConfig({}) as unknown as Record<string, unknown>;
  for (const name of Object.keys(ConfigSchema.properties)) {
    const line = example.split('\n').find((l) => new RegExp(`^#?\\s*${name}=`).test(l));
    t.ok(line, `${name} is listed`);
    const value = line?.replace(/^#?\s*[A-Z_]+=/, '');
    const def = defaults[name];
    t.equal(value, name === 'DATA_DIR' ? './data' : String(def), `${name} shows its default`);
  }
});

t.test('CLI flags', async (t) => {
  t.same(parseCli([]), { transport: 'http', host: undefined, port: undefined, workers: 1, reload: false, logDir: undefined, help: false, version: false });
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
});
