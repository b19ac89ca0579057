/**
 * The SSRF guard end to end, with traffic only to loopback: IP literals refused before a request,
 * hostnames refused at connection time through a fake DNS, redirects re-checked on every hop.
 */
import type { LookupAddress } from 'node:dns';
import t from 'tap';
import { createAddressPolicy } from '../../src/documents/address-policy.ts';
import { Downloader } from '../../src/documents/download.ts';
import { AddressDeniedError, createGuardedLookup, type ResolveAll } from '../../src/documents/guarded-lookup.ts';
import { checkRequestUrl, parseDocumentUrl } from '../../src/documents/url-policy.ts';
import { startLocalServer } from './fixtures/local-server.ts';

const strict = createAddressPolicy({ allowPrivateNetworks: false, allowedHosts: [] });

const fakeDns = (table: Record<string, string[]>) => {
  const asked: string[] = [];
  const resolve: ResolveAll = async (hostname) => {
    asked.push(hostname);
    const list = table[hostname];
    if (!list) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return list.map((address): LookupAddress => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return { resolve, asked };
};

const codeOf = async (p: Promise<unknown>) => {
  try {
    await p;
    return 'resolved';
  } catch (err) {
    return (err as { code?: string }).code;
  }
};

t.test('URL form rules', async (t) => {
  const code = (u: string) => {
    try {
      parseDocumentUrl(u);
      return 'ok';
    } catch (err) {
      return (err as { code?: string }).code;
    }
  };
  t.equal(code('https://example.com/a.pdf'), 'ok');
  t.equal(code('file:///etc/passwd'), 'URL_NOT_ALLOWED');
  t.equal(code('ftp://example.com/a'), 'URL_NOT_ALLOWED');
  t.equal(code('gopher://example.com/'), 'URL_NOT_ALLOWED');
  t.equal(code('http://user:pw@example.com/'), 'URL_NOT_ALLOWED');
  t.equal(code('http://user@example.com/'), 'URL_NOT_ALLOWED');
  t.equal(code(`https://example.com/${'a'.repeat(2100)}`), 'URL_NOT_ALLOWED');
  t.equal(code('not a url'), 'VALIDATION_ERROR');
  t.equal(code(''), 'VALIDATION_ERROR');
});

t.test('IP-literal hosts are judged before any request, in every spelling', async (t) => {
  for (const u of [
    'http://127.0.0.1/',
    'http://2130706433/',
    'http://0x7f.0.0.1/',
    'http://0/',
    'http://10.1.2.3/',
    'http://169.254.169.254/latest/meta-data/',
    'http://100.64.1.1/',
    'http://[::1]/',
    'http://[::ffff:127.0.0.1]/',
    'http://[::ffff:a9fe:a9fe]/',
    'http://[fd00::1]/',
    'http://[fe80::1]/',
    'http://[64:ff9b::a00:1]/',
    'http://255.255.255.255/',
    'http://224.0.0.1/',
  ]) {
    let code = 'ok';
    try {
      checkRequestUrl(u, strict);
    } catch (err) {
      code = (err as { code: string }).code;
    }
    t.equal(code, 'URL_NOT_ALLOWED', u);
  }
  t.equal(checkRequestUrl('http://93.184.216.34/x', strict).hostname, '93.184.216.34', 'a public literal passes');
});

t.test('the guarded lookup checks EVERY resolved address (pure, no traffic)', async (t) => {
  const { resolve } = fakeDns({ 'mixed.test': ['93.184.216.34', '10.1.2.3'], 'public.test': ['93.184.216.34', '2606:4700::1'] });
  const lookup = createGuardedLookup(strict, resolve);
  const call = (host: string, all: boolean) =>
    new Promise<{ err: NodeJS.ErrnoException | null; address: unknown }>((res) => lookup(host, { all }, (err, address) => res({ err, address })));
  const mixed = await call('mixed.test', true);
  t.ok(mixed.err instanceof AddressDeniedError, 'one private address among public ones is enough to refuse');
  t.match(mixed.err?.message, /10\.1\.2\.3/);
  const ok = await call('public.test', true);
  t.equal(ok.err, null);
  t.same((ok.address as LookupAddress[]).map((a) => a.address), ['93.184.216.34', '2606:4700::1']);
  const single = await call('public.test', false);
  t.equal(single.address, '93.184.216.34');
});

t.test('hostnames resolving to private addresses are refused before any socket opens', async (t) => {
  const server = await startLocalServer();
  t.teardown(() => server.close());
  server.route('/secret', (_q, res) => res.end('secret'));
  const dns = fakeDns({
    'intranet.test': ['10.1.2.3'],
    'metadata.test': ['169.254.169.254'],
    'v6.test': ['::1'],
    // Points at the live loopback server: a bug would show up as a connection there.
    'loop.test': ['127.0.0.1'],
    'mapped.test': ['::ffff:127.0.0.1'],
  });
  const dl = new Downloader({ policy: strict, maxBytes: 1 << 20, resolveAll: dns.resolve, retryDelaysMs: [1] });
  t.teardown(() => dl.close());
  for (const host of ['intranet.test', 'metadata.test', 'v6.test', 'loop.test', 'mapped.test']) {
    const err = await dl.download(`http://${host}:${server.port}/secret`, { signal: AbortSignal.timeout(5000) }).catch((e) => e);
    t.equal(err.code, 'URL_NOT_ALLOWED', host);
    t.match(err.message, new RegExp(`${host.replace('.', '\\.')} resolves to`), 'the reason names host and range');
  }
  t.same(dns.asked, ['intranet.test', 'metadata.test', 'v6.test', 'loop.test', 'mapped.test'], 'resolved once each: no retries');
  t.equal(server.connections(), 0, 'nothing reached the loopback server');
  t.equal(server.hits.get('/secret'), undefined);
});

t.test('redirects to private targets are refused on the hop', async (t) => {
  const server = await startLocalServer();
  t.teardown(() => server.close());
  // Only this exact host:port is opted in; every other target stays under the address rule.
  const policy = createAddressPolicy({ allowPrivateNetworks: false, allowedHosts: [`127.0.0.1:${server.port}`] });
  const dns = fakeDns({ 'metadata.test': ['169.254.169.254'] });
  const dl = new Downloader({ policy, maxBytes: 1 << 20, resolveAll: dns.resolve, retryDelaysMs: [1] });
  t.teardown(() => dl.close());
  server.route('/to-literal', (_q, res) => {
    res.writeHead(302, { location: 'http://10.1.2.3/admin' });
    res.end();
  });
  server.route('/to-name', (_q, res) => {
    res.writeHead(301, { location: 'http://metadata.test/latest/meta-data/' });
    res.end();
  });
  server.route('/to-other-port', (_q, res) => {
    res.writeHead(307, { location: `http://127.0.0.1:${server.port + 1}/x` });
    res.end();
  });
  server.route('/to-file', (_q, res) => {
    res.writeHead(302, { location: 'file:///etc/passwd' });
    res.end();
  });
  for (const path of ['/to-literal', '/to-name', '/to-other-port', '/to-file']) {
    const err = await dl.download(`${server.origin}${path}`, { signal: AbortSignal.timeout(5000) }).catch((e) => e);
    t.equal(err.code, 'URL_NOT_ALLOWED', path);
    t.match(err.message, /Redirect refused|URL not allowed/);
  }
  t.same(dns.asked, ['metadata.test']);
});

t.test('ALLOWED_HOSTS and ALLOW_PRIVATE_NETWORKS opt in to local servers', async (t) => {
  const server = await startLocalServer();
  t.teardown(() => server.close());
  server.route('/doc.txt', (_q, res) => res.end('local content'));
  const dns = fakeDns({ 'files.test': ['127.0.0.1'] });
  const byName = new Downloader({
    policy: createAddressPolicy({ allowPrivateNetworks: false, allowedHosts: [`files.test:${server.port}`] }),
    maxBytes: 1 << 20,
    resolveAll: dns.resolve,
  });
  const open = new Downloader({ policy: createAddressPolicy({ allowPrivateNetworks: true, allowedHosts: [] }), maxBytes: 1 << 20 });
  const closed = new Downloader({ policy: strict, maxBytes: 1 << 20 });
  t.teardown(() => Promise.all([byName.close(), open.close(), closed.close()]));
  const signal = AbortSignal.timeout(5000);
  t.equal((await byName.download(`http://files.test:${server.port}/doc.txt`, { signal })).bytes.toString(), 'local content');
  t.equal((await open.download(`${server.origin}/doc.txt`, { signal })).bytes.toString(), 'local content');
  t.equal(await codeOf(closed.download(`${server.origin}/doc.txt`, { signal })), 'URL_NOT_ALLOWED');
  t.equal(await codeOf(closed.download(`http://localhost:${server.port}/doc.txt`, { signal })), 'URL_NOT_ALLOWED', 'localhost by name');
});
