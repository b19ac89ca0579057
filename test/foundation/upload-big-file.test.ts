/**
 * A 50 MB upload over a real socket, as a multipart form and as a raw body: the call succeeds,
 * the digest computed while the bytes arrived is the file's SHA-256, and /health, polled the
 * whole time, answers every probe.
 */
import { createHash } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { buildTestApp } from '../helper.ts';

function bigText(mb: number): Buffer {
  const lines: string[] = [];
  let size = 0;
  for (let i = 0; size < mb * 1024 * 1024; i++) {
    const line = `Line ${i} about the harbour cranes and the ships that come in the morning.\n`;
    lines.push(line);
    size += line.length;
  }
  return Buffer.from(lines.join(''));
}

/** Polls /health one request at a time until stopped; counts answers that are not 200. */
function pollHealth(base: string) {
  let stop = false;
  let probes = 0;
  const bad: string[] = [];
  const done = (async () => {
    while (!stop) {
      try {
        const r = await fetch(`${base}/health`, { signal: AbortSignal.timeout(60_000) });
        await r.text();
        if (r.status !== 200) bad.push(`status ${r.status}`);
      } catch (err) {
        bad.push(String(err));
      }
      probes++;
      await new Promise((r) => setImmediate(r));
    }
  })();
  return {
    stop: async () => {
      stop = true;
      await done;
      return { probes, bad };
    },
  };
}

t.test('50 MB uploads succeed while /health keeps answering', async (t) => {
  const app = await buildTestApp(t);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const bytes = bigText(50);
  const digest = createHash('sha256').update(bytes).digest('hex');

  for (const kind of ['multipart', 'raw'] as const) {
    const health = pollHealth(base);
    let res: Response;
    if (kind === 'multipart') {
      const form = new FormData();
      form.append('file', new Blob([new Uint8Array(bytes)], { type: 'text/plain' }), 'big.txt');
      res = await fetch(`${base}/v1/documents/process`, { method: 'POST', body: form, signal: AbortSignal.timeout(300_000) });
    } else {
      res = await fetch(`${base}/v1/documents/process`, { method: 'POST', body: new Uint8Array(bytes), headers: { 'content-type': 'text/plain' }, signal: AbortSignal.timeout(300_000) });
    }
    const body = (await res.json()) as { metadata?: { content_sha256?: string; file_size?: number } };
    const { probes, bad } = await health.stop();
    t.equal(res.status, 200, `${kind}: the upload is processed`);
    t.equal(body.metadata?.file_size, bytes.byteLength, `${kind}: every byte arrived`);
    t.equal(body.metadata?.content_sha256, digest, `${kind}: the digest taken while reading is the file's SHA-256`);
    t.ok(probes > 0, `${kind}: /health was polled during the upload (${probes} probes)`);
    t.same(bad, [], `${kind}: every /health probe answered 200`);
  }
});

t.test('a raw body over MAX_UPLOAD_BYTES is 413 PAYLOAD_TOO_LARGE', async (t) => {
  const app = await buildTestApp(t, { env: { MAX_UPLOAD_BYTES: String(1024 * 1024) } });
  const r = await app.inject({ method: 'POST', url: '/v1/documents/process', headers: { 'content-type': 'text/plain' }, payload: Buffer.alloc(1024 * 1024 + 1, 97) });
  t.equal(r.statusCode, 413);
  t.match(r.json(), { code: 'PAYLOAD_TOO_LARGE', error: /MAX_UPLOAD_BYTES/ });
});
