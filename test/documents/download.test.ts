/**
 * Downloader behaviour against a loopback server (private-network opt-in on): retries, backoff,
 * Retry-After, the byte cap, redirects, compression, pooling and cancellation.
 */
import { createHash } from 'node:crypto';
import zlib from 'node:zlib';
import t, { type Test } from 'tap';
import { createAddressPolicy } from '../../src/documents/address-policy.ts';
import { Downloader, type DownloaderOptions } from '../../src/documents/download.ts';
import { parseRetryAfter } from '../../src/util/retry.ts';
import { startLocalServer, type LocalServer } from './fixtures/local-server.ts';
import { makeMinimalPdf } from '../fixtures-gen/minimal-pdf.ts';
import { AN_HOUR_MS, pollUntil, within } from '../poll.ts';

const pdf = makeMinimalPdf();
let server: LocalServer;
t.before(async () => {
  server = await startLocalServer();
});
t.teardown(() => server.close());

const make = (t: Test, opts: Partial<DownloaderOptions> = {}) => {
  const dl = new Downloader({
    policy: createAddressPolicy({ allowPrivateNetworks: true, allowedHosts: [] }),
    maxBytes: 1024 * 1024,
    retryDelaysMs: [20, 40, 60],
    ...opts,
  });
  t.teardown(() => dl.close());
  return dl;
};
const signal = () => AbortSignal.timeout(10_000);

t.test('a plain download keeps bytes, type, disposition and hash', async (t) => {
  server.route('/files/report', (_q, res) => {
    res.writeHead(200, { 'content-type': 'application/pdf', 'content-disposition': 'attachment; filename="AutoGen paper.pdf"' });
    res.end(pdf);
  });
  const f = await make(t).download(`${server.origin}/files/report`, { signal: signal() });
  t.ok(f.bytes.equals(pdf));
  t.equal(f.contentType, 'application/pdf');
  t.equal(f.contentDisposition, 'attachment; filename="AutoGen paper.pdf"');
  t.equal(f.filename, 'AutoGen paper.pdf');
  t.equal(f.sha256, createHash('sha256').update(pdf).digest('hex'), 'the SHA-256 of the bytes served');
  t.match(f.sha256, /^[0-9a-f]{64}$/);
  t.equal(f.finalUrl, `${server.origin}/files/report`);
});

t.test('503 is retried, then succeeds', async (t) => {
  server.route('/flaky', (_q, res, n) => {
    if (n < 3) {
      res.statusCode = 503;
      res.end('busy');
    } else res.end('finally');
  });
  const started = Date.now();
  const f = await make(t).download(`${server.origin}/flaky`, { signal: signal() });
  t.equal(f.bytes.toString(), 'finally');
  t.equal(server.hits.get('/flaky'), 3, 'three attempts');
  t.ok(Date.now() - started >= 60, 'waited the injected 20 ms + 40 ms backoff');
});

t.test('persistent 500 fails after 3 attempts with the status named', async (t) => {
  server.route('/broken', (_q, res) => {
    res.statusCode = 500;
    res.end();
  });
  const err = await make(t).download(`${server.origin}/broken`, { signal: signal() }).catch((e) => e);
  t.equal(err.code, 'DOWNLOAD_ERROR');
  t.match(err.message, /HTTP 500 Internal Server Error .*after 3 attempts/);
  t.equal(server.hits.get('/broken'), 3);
});

t.test('404 is not retried', async (t) => {
  const err = await make(t).download(`${server.origin}/nowhere`, { signal: signal() }).catch((e) => e);
  t.equal(err.code, 'DOWNLOAD_ERROR');
  t.match(err.message, /HTTP 404 Not Found/);
  t.equal(server.hits.get('/nowhere'), 1);
});

t.test('429 honours Retry-After', async (t) => {
  server.route('/limited', (_q, res, n) => {
    if (n === 1) {
      res.writeHead(429, { 'retry-after': '1' });
      res.end();
    } else res.end('served');
  });
  const started = Date.now();
  const f = await make(t).download(`${server.origin}/limited`, { signal: signal() });
  t.equal(f.bytes.toString(), 'served');
  t.ok(Date.now() - started >= 950, `waited the server's second (${Date.now() - started} ms), not the 20 ms backoff`);
});

t.test('a Retry-After beyond the cap fails at once', async (t) => {
  server.route('/later', (_q, res) => {
    res.writeHead(503, { 'retry-after': '3600' });
    res.end();
  });
  // Capping the wait at 5 s and retrying (inside the call's 10 s) would show as a second hit.
  const err = await make(t, { maxRetryAfterMs: 5000 }).download(`${server.origin}/later`, { signal: signal() }).catch((e) => e);
  t.equal(err.code, 'DOWNLOAD_ERROR');
  t.match(err.message, /retry after 3600 s/);
  t.equal(server.hits.get('/later'), 1, 'one attempt: no retry was waited for');
  t.equal(parseRetryAfter('Wed, 21 Oct 2015 07:28:00 GMT', Date.parse('Wed, 21 Oct 2015 07:27:00 GMT')), 60_000);
  t.equal(parseRetryAfter('soon'), undefined);
});

t.test('network errors are retried and named', async (t) => {
  server.route('/reset', (req) => req.socket.destroy());
  const err = await make(t).download(`${server.origin}/reset`, { signal: signal() }).catch((e) => e);
  t.equal(err.code, 'DOWNLOAD_ERROR');
  t.match(err.message, /Network error contacting 127\.0\.0\.1:\d+: (UND_ERR_SOCKET|ECONNRESET)/);
  t.equal(server.hits.get('/reset'), 3);
  // A closed port: connection refused, retried, then reported.
  const closed = await make(t).download('http://127.0.0.1:1/x', { signal: signal() }).catch((e) => e);
  t.equal(closed.code, 'DOWNLOAD_ERROR');
  t.match(closed.message, /ECONNREFUSED \(connection refused\)/);
});

t.test('the byte cap stops reading at the cap', async (t) => {
  let sent = 0;
  let closedEarly = false;
  server.route('/endless', (_q, res) => {
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    const chunk = Buffer.alloc(64 * 1024, 7);
    const pump = () => {
      while (!res.destroyed && sent < 50 * 1024 * 1024) {
        sent += chunk.length;
        if (!res.write(chunk)) return void res.once('drain', pump);
      }
      res.end();
    };
    res.on('close', () => {
      closedEarly = sent < 50 * 1024 * 1024;
    });
    pump();
  });
  const err = await make(t).download(`${server.origin}/endless`, { signal: signal() }).catch((e) => e);
  t.equal(err.code, 'PAYLOAD_TOO_LARGE');
  t.match(err.message, /1048576 bytes/);
  await new Promise((r) => setTimeout(r, 100));
  t.ok(closedEarly, 'the connection was dropped');
  t.ok(sent < 10 * 1024 * 1024, `the server sent ${sent} bytes, not 50 MB`);
  t.equal(server.hits.get('/endless'), 1, 'not retried');

  server.route('/declared', (_q, res) => {
    res.writeHead(200, { 'content-length': String(5 * 1024 * 1024) });
    res.write(Buffer.alloc(1024));
  });
  const declared = await make(t).download(`${server.origin}/declared`, { signal: signal() }).catch((e) => e);
  t.equal(declared.code, 'PAYLOAD_TOO_LARGE', 'a declared length over the cap fails before reading');

  server.route('/exact', (_q, res) => res.end(Buffer.alloc(1024 * 1024, 1)));
  t.equal((await make(t).download(`${server.origin}/exact`, { signal: signal() })).bytes.length, 1024 * 1024, 'exactly the cap is fine');
});

t.test('compressed responses are decoded, and the cap applies to decoded bytes', async (t) => {
  server.route('/gz', (_q, res) => {
    res.writeHead(200, { 'content-encoding': 'gzip', 'content-type': 'text/plain' });
    res.end(zlib.gzipSync('hello compressed world'));
  });
  server.route('/br', (_q, res) => {
    res.writeHead(200, { 'content-encoding': 'br' });
    res.end(zlib.brotliCompressSync('brotli text'));
  });
  server.route('/bomb', (_q, res) => {
    res.writeHead(200, { 'content-encoding': 'gzip' });
    res.end(zlib.gzipSync(Buffer.alloc(20 * 1024 * 1024)));
  });
  const dl = make(t);
  t.equal((await dl.download(`${server.origin}/gz`, { signal: signal() })).bytes.toString(), 'hello compressed world');
  t.equal((await dl.download(`${server.origin}/br`, { signal: signal() })).bytes.toString(), 'brotli text');
  t.equal(await dl.download(`${server.origin}/bomb`, { signal: signal() }).catch((e) => e.code), 'PAYLOAD_TOO_LARGE');
});

t.test('redirects are followed, at most 5', async (t) => {
  for (let i = 1; i <= 7; i++) {
    server.route(`/hop${i}`, (_q, res) => {
      res.writeHead(i % 2 ? 302 : 301, { location: `/hop${i + 1}` });
      res.end();
    });
  }
  server.route('/hop8', (_q, res) => res.end('arrived'));
  const dl = make(t);
  const f = await dl.download(`${server.origin}/hop3`, { signal: signal() });
  t.equal(f.bytes.toString(), 'arrived', '5 redirects are fine');
  t.equal(f.finalUrl, `${server.origin}/hop8`);
  t.equal(f.filename, 'hop8', 'the name comes from the final URL');
  const err = await dl.download(`${server.origin}/hop2`, { signal: signal() }).catch((e) => e);
  t.equal(err.code, 'DOWNLOAD_ERROR');
  t.match(err.message, /Too many redirects/);
  server.route('/no-location', (_q, res) => {
    res.statusCode = 302;
    res.end();
  });
  t.match(await dl.download(`${server.origin}/no-location`, { signal: signal() }).catch((e) => e.message), /without a Location/);
});

t.test('connections are pooled (keep-alive)', async (t) => {
  server.route('/small', (_q, res) => res.end('x'));
  const dl = make(t);
  const before = server.connections();
  for (let i = 0; i < 10; i++) await dl.download(`${server.origin}/small`, { signal: signal() });
  const opened = server.connections() - before;
  // undici may open a second socket while the first is being released; never one per request.
  t.ok(opened >= 1 && opened <= 2, `ten sequential downloads over ${opened} connection(s)`);
});

t.test('the call signal cancels a stalled download and a backoff wait', async (t) => {
  server.route('/stall', (_q, res) => {
    res.writeHead(200);
    res.write('partial');
  });
  // The stalled response never ends by itself: only the signal can end the call.
  const err = await within(make(t).download(`${server.origin}/stall`, { signal: AbortSignal.timeout(300) }).catch((e) => e), 'the stalled download to end');
  t.equal(err.code, 'TIMEOUT');

  server.route('/always-503', (_q, res) => {
    res.statusCode = 503;
    res.end();
  });
  const slow = make(t, { retryDelaysMs: [AN_HOUR_MS] });
  const ac = new AbortController();
  const pending = slow.download(`${server.origin}/always-503`, { signal: ac.signal }).catch((e) => e);
  // Aborted during the hour's backoff (the first attempt has been answered).
  await pollUntil(() => (server.hits.get('/always-503') ?? 0) >= 1, 'the first attempt');
  ac.abort();
  const err2 = await within(pending, 'the abort to end the backoff');
  t.equal(err2.code, 'TIMEOUT', 'did not sit out the hour of backoff');
});

t.test('close() does not wait forever on a stalled download', async (t) => {
  server.route('/stall-close', (_q, res) => {
    res.writeHead(200);
    res.write('partial');
  });
  const dl = new Downloader({ policy: createAddressPolicy({ allowPrivateNetworks: true, allowedHosts: [] }), maxBytes: 1 << 20 });
  const pending = dl.download(`${server.origin}/stall-close`, { signal: signal() }).catch((e) => e);
  await pollUntil(() => (server.hits.get('/stall-close') ?? 0) >= 1, 'the download to reach the server');
  // The download never ends by itself: close() returns only because its grace period ran out.
  await within(dl.close(200), 'close() after its 200 ms grace period');
  t.pass('closed after the grace period');
  const err = await pending;
  t.equal(err.code, 'DOWNLOAD_ERROR', 'the dropped download fails with a coded error');
});
