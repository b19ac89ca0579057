/**
 * ALLOWED_HOSTS is checked at start-up like every other setting: each comma-separated entry must
 * be a form the address policy reads (host, host:port, IPv4[:port], [IPv6][:port], a bare IPv6
 * address); anything else stops the server with a message naming the entry, instead of being
 * dropped quietly while the host it meant stays refused.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import t from 'tap';
import { type ConfigError, loadConfig } from '../../src/config.ts';
import { createAddressPolicy } from '../../src/documents/address-policy.ts';
import { tempDir } from '../helper.ts';
import { SERVER_ENTRY_ARGS } from '../setup/server-entry.ts';

t.test('accepted forms load, and the address policy opens exactly them', async (t) => {
  const c = loadConfig({ ALLOWED_HOSTS: '127.0.0.1:8080, files.internal, Docs.Example.test:9000, [::1]:8081, fd00::5, intranet_host' });
  t.same(c.allowedHosts, ['127.0.0.1:8080', 'files.internal', 'docs.example.test:9000', '[::1]:8081', 'fd00::5', 'intranet_host']);
  const policy = createAddressPolicy({ allowPrivateNetworks: false, allowedHosts: c.allowedHosts });
  t.equal(policy.allowedHosts.length, 6, 'none of them is dropped by the policy');
  t.ok(policy.hostAllowed('127.0.0.1', 8080));
  t.notOk(policy.hostAllowed('127.0.0.1', 8081), 'the port is part of the entry');
  t.ok(policy.hostAllowed('files.internal', 443), 'no port: any port');
  t.ok(policy.hostAllowed('::1', 8081));
  t.same(loadConfig({}).allowedHosts, [], 'default: none');
});

t.test('anything else stops the configuration with the entry and what is accepted', async (t) => {
  const cases: Array<[string, RegExp]> = [
    ['not a host', /entry "not a host" is not a host name, IP address, host:port or \[IPv6\]:port/],
    ['127.0.0.1:8080, bad host', /entry "bad host" is not a host name/],
    ['http://127.0.0.1:8080', /entry "http:\/\/127\.0\.0\.1:8080" is a URL; write only host or host:port/],
    ['10.0.0.0/8', /is a range; CIDR ranges are not supported.*ALLOW_PRIVATE_NETWORKS=true/],
    ['*.corp.test', /has a wildcard; wildcards are not supported/],
    ['127.0.0.1:0', /has a port outside 1-65535/],
    ['files.test:70000', /has a port outside 1-65535/],
    ['999.1.1.1', /entry "999\.1\.1\.1" is not a host name/],
    ['a..b', /entry "a\.\.b" is not a host name/],
    ['-dash.test', /is not a host name/],
    ['[not-v6]:80', /is not a host name/],
    ['host:port', /is not a host name/],
  ];
  for (const [value, message] of cases) {
    t.throws(() => loadConfig({ ALLOWED_HOSTS: value }), { name: 'ConfigError', variable: 'ALLOWED_HOSTS', message }, value);
  }
  const err = (() => {
    try {
      loadConfig({ ALLOWED_HOSTS: 'not a host' });
    } catch (e) {
      return e as ConfigError;
    }
  })();
  t.match(err?.message, /^Invalid configuration: ALLOWED_HOSTS .*\(accepted: host, host:port, IPv4\[:port\], \[IPv6\]\[:port\], comma-separated\)$/);
});

t.test("ALLOWED_HOSTS='not a host' stops the real server at start with that message", async (t) => {
  // As a user starts it (the build when current, else the sources: test/setup/server-entry.ts), in a folder without a .env.
  const cwd = tempDir(t);
  const child = spawn(process.execPath, [...SERVER_ENTRY_ARGS, '--port', '0', '--host', '127.0.0.1'], {
    cwd,
    env: { PATH: process.env.PATH ?? '', DATA_DIR: path.join(cwd, 'data'), ALLOWED_HOSTS: 'not a host' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  t.not(code, 0, 'exits with an error');
  t.match(stderr, /Invalid configuration: ALLOWED_HOSTS entry "not a host" is not a host name/);
  t.notMatch(stderr, /Server listening/, 'never listened');
});
