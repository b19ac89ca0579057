/**
 * A loopback or private URL refused by the address policy says how to allow it: the refusal names
 * the exact ALLOWED_HOSTS entry (host:port, IPv6 in brackets), and setting that entry lets the
 * same URL through. Traffic only to loopback; hostnames resolve through a fake DNS.
 */
import type { LookupAddress } from 'node:dns';
import t from 'tap';
import { createAddressPolicy } from '../../src/documents/address-policy.ts';
import { Downloader } from '../../src/documents/download.ts';
import type { ResolveAll } from '../../src/documents/guarded-lookup.ts';
import { buildTestApp, testConfig } from '../helper.ts';
import { startLocalServer } from './fixtures/local-server.ts';

const fakeDns = (table: Record<string, string[]>): ResolveAll => async (hostname) => {
  const list = table[hostname];
  if (!list) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
  return list.map((address): LookupAddress => ({ address, family: address.includes(':') ? 6 : 4 }));
};

/** The ALLOWED_HOSTS value a refusal message proposes. */
const proposed = (message: string) => /ALLOWED_HOSTS=(\S+)/.exec(message)?.[1];

t.test('a loopback URL over REST: 403 naming ALLOWED_HOSTS=host:port, and that setting lets it through', async (t) => {
  const server = await startLocalServer();
  t.teardown(() => server.close());
  server.route('/notes.txt', (_q, res) => res.end('Loopback notes about the harbour crane.'));
  const url = `${server.origin}/notes.txt`;

  const strict = await buildTestApp(t, { config: testConfig(t) });
  const refused = await strict.inject({ method: 'POST', url: '/v1/documents/process', payload: { document_url: url } });
  t.equal(refused.statusCode, 403);
  const body = refused.json();
  t.equal(body.code, 'URL_NOT_ALLOWED');
  t.match(body.error, /127\.0\.0\.1 is a loopback address/, 'the reason stays');
  t.match(body.error, `ALLOWED_HOSTS=127.0.0.1:${server.port}`, 'names the setting and the exact entry');
  t.match(body.error, /ALLOW_PRIVATE_NETWORKS=true/);
  t.equal(server.hits.get('/notes.txt'), undefined, 'nothing was fetched');

  const entry = proposed(body.error)!;
  const open = await buildTestApp(t, { config: testConfig(t, { ALLOWED_HOSTS: entry }) });
  const ok = await open.inject({ method: 'POST', url: '/v1/documents/process', payload: { document_url: url } });
  t.equal(ok.statusCode, 200, `ALLOWED_HOSTS=${entry} as proposed`);
  t.match(ok.json().content, /harbour crane/);
});

t.test('a hostname resolving to loopback, an IPv6 literal and a redirect get the hint for their own host', async (t) => {
  const server = await startLocalServer();
  t.teardown(() => server.close());
  server.route('/doc.txt', (_q, res) => res.end('local content'));
  server.route('/hop', (_q, res) => {
    res.writeHead(302, { location: 'http://10.1.2.3:9000/admin' });
    res.end();
  });
  const resolveAll = fakeDns({ 'files.test': ['127.0.0.1'] });
  const strict = new Downloader({ policy: createAddressPolicy({ allowPrivateNetworks: false, allowedHosts: [] }), maxBytes: 1 << 20, resolveAll, retryDelaysMs: [1] });
  t.teardown(() => strict.close());
  const fail = (u: string) => strict.download(u, { signal: AbortSignal.timeout(5000) }).then(() => null, (e: Error & { code?: string }) => e);

  const byName = await fail(`http://files.test:${server.port}/doc.txt`);
  t.equal(byName?.code, 'URL_NOT_ALLOWED');
  t.equal(proposed(byName!.message), `files.test:${server.port}`, 'the hostname as written in the URL, with its port');

  const v6 = await fail('http://[::1]:8081/x');
  t.equal(v6?.code, 'URL_NOT_ALLOWED');
  t.equal(proposed(v6!.message), '[::1]:8081', 'IPv6 in brackets');

  const defaultPort = await fail('https://10.0.0.7/report.pdf');
  t.equal(proposed(defaultPort!.message), '10.0.0.7:443', 'the scheme default port spelled out');

  // The first hop is allowed; the redirect target is refused with its own entry.
  const hopPolicy = createAddressPolicy({ allowPrivateNetworks: false, allowedHosts: [`127.0.0.1:${server.port}`] });
  const hopping = new Downloader({ policy: hopPolicy, maxBytes: 1 << 20, resolveAll, retryDelaysMs: [1] });
  t.teardown(() => hopping.close());
  const redirected = await hopping.download(`${server.origin}/hop`, { signal: AbortSignal.timeout(5000) }).then(() => null, (e: Error & { code?: string }) => e);
  t.equal(redirected?.code, 'URL_NOT_ALLOWED');
  t.match(redirected!.message, /^Redirect refused/);
  t.equal(proposed(redirected!.message), '10.1.2.3:9000');

  // Following the hint for the hostname works.
  const open = new Downloader({ policy: createAddressPolicy({ allowPrivateNetworks: false, allowedHosts: [proposed(byName!.message)!] }), maxBytes: 1 << 20, resolveAll, retryDelaysMs: [1] });
  t.teardown(() => open.close());
  const file = await open.download(`http://files.test:${server.port}/doc.txt`, { signal: AbortSignal.timeout(5000) });
  t.equal(Buffer.from(file.bytes).toString(), 'local content');
});
