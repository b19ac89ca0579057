import t, { type Test } from 'tap';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { EmbeddingServiceError, HttpEmbedder, embeddingsEndpoint } from '../../src/retrieval/embedders/http-embedder.ts';

interface Seen {
  url: string;
  auth: string | undefined;
  body: { model: string; input: string[] };
}

type Handler = (body: Seen['body'], n: number, res: http.ServerResponse) => void;

/** A local OpenAI-compatible embeddings service whose behaviour each test scripts. */
async function fakeService(t: Test, handler: Handler) {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const body = JSON.parse(raw || '{}');
      seen.push({ url: req.url!, auth: req.headers.authorization, body });
      handler(body, seen.length, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  server.on('connection', (s) => t.teardown(() => s.destroy()));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { base, seen };
}

/** Deterministic non-normalised vectors: [len, index+1, 2] per text. */
const vec = (s: string, i: number) => [s.length, i + 1, 2];
const ok = (res: http.ServerResponse, body: Seen['body'], shuffle = false) => {
  const data = body.input.map((s, i) => ({ object: 'embedding', index: i, embedding: vec(s, i) }));
  if (shuffle) data.reverse();
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data, model: body.model }));
};
const noSleep = (delays: number[]) => async (ms: number) => void delays.push(ms);

t.test('endpoint from the base URL, with or without /v1', async (t) => {
  t.equal(embeddingsEndpoint('http://127.0.0.1:11434'), 'http://127.0.0.1:11434/v1/embeddings');
  t.equal(embeddingsEndpoint('http://127.0.0.1:11434/'), 'http://127.0.0.1:11434/v1/embeddings');
  t.equal(embeddingsEndpoint('http://127.0.0.1:8080/v1'), 'http://127.0.0.1:8080/v1/embeddings');
  t.equal(embeddingsEndpoint('http://127.0.0.1:8080/v1/'), 'http://127.0.0.1:8080/v1/embeddings');
  t.equal(embeddingsEndpoint('http://127.0.0.1/api/v1/embeddings'), 'http://127.0.0.1/api/v1/embeddings');
  t.throws(() => embeddingsEndpoint('ftp://127.0.0.1'), /http\(s\)/);
});

t.test('connect probes the dimension; embed batches, keeps order, normalises, sends model and key', async (t) => {
  const svc = await fakeService(t, (body, _n, res) => ok(res, body, true));
  const e = await HttpEmbedder.connect({ url: `${svc.base}/v1`, model: 'nomic-embed-text', apiKey: 'sekret', batchSize: 4 });
  t.equal(e.id, 'http:nomic-embed-text');
  t.equal(e.dimension, 3);
  const texts = Array.from({ length: 10 }, (_, i) => 'x'.repeat(i + 1));
  const vectors = await e.embed(texts, 'passage');
  t.equal(vectors.length, 10);
  vectors.forEach((v, i) => {
    const raw = vec(texts[i], i % 4);
    const n = Math.hypot(...raw);
    t.same(Array.from(v).map((x) => +x.toFixed(5)), raw.map((x) => +(x / n).toFixed(5)), `text ${i} in order, unit length`);
  });
  t.same(svc.seen.map((s) => s.body.input.length), [1, 4, 4, 2], 'probe, then batches of 4');
  t.ok(svc.seen.every((s) => s.url === '/v1/embeddings' && s.auth === 'Bearer sekret' && s.body.model === 'nomic-embed-text'));
  t.same(await e.embed([], 'query'), []);
});

t.test('retries network errors, 5xx and 429 with backoff (Retry-After honoured), then succeeds', async (t) => {
  const svc = await fakeService(t, (body, n, res) => {
    if (n === 1) return void res.socket?.destroy();
    if (n === 2) return void res.writeHead(503).end('warming up');
    if (n === 3) return void res.writeHead(429, { 'retry-after': '1' }).end('slow down');
    ok(res, body);
  });
  const delays: number[] = [];
  const e = new HttpEmbedder({ url: svc.base, model: 'm', dimension: 3, retries: 3, backoffMs: 100, sleep: noSleep(delays) });
  const [v] = await e.embed(['abc'], 'query');
  t.equal(v.length, 3);
  t.same(delays, [100, 200, 1000], 'exponential backoff, then the Retry-After of the 429');
  t.equal(svc.seen.length, 4);
});

t.test('gives up after the retries with the last error; 4xx is not retried', async (t) => {
  const svc = await fakeService(t, (body, _n, res) => {
    if (body.input[0] === 'bad') return void res.writeHead(400).end('{"error":"input too long"}');
    res.writeHead(500).end('boom');
  });
  const delays: number[] = [];
  const e = new HttpEmbedder({ url: svc.base, model: 'm', dimension: 3, retries: 2, backoffMs: 10, sleep: noSleep(delays) });
  const err = await e.embed(['x'], 'passage').catch((x: unknown) => x);
  t.ok(err instanceof EmbeddingServiceError);
  t.match(err, { status: 500, message: /HTTP 500: boom \(after 3 attempts\)/ });
  t.same(delays, [10, 20]);
  const before = svc.seen.length;
  await t.rejects(e.embed(['bad'], 'passage'), { status: 400, message: /HTTP 400: \{"error":"input too long"\}/ });
  t.equal(svc.seen.length, before + 1, 'one attempt only');
});

t.test('invalid responses are refused, never turned into vectors', async (t) => {
  const replies: Array<[string, unknown]> = [
    ['not JSON', 'nope'],
    ['no data array', { object: 'list' }],
    ['1 embeddings for 2 inputs', { data: [{ index: 0, embedding: [1, 2, 3] }] }],
    ['dimension 2, expected 3', { data: [{ index: 0, embedding: [1, 2] }, { index: 1, embedding: [1, 2] }] }],
    ['non-numeric', { data: [{ index: 0, embedding: [1, 'a', 3] }, { index: 1, embedding: [1, 2, 3] }] }],
    ['repeated index', { data: [{ index: 0, embedding: [1, 2, 3] }, { index: 0, embedding: [1, 2, 3] }] }],
    ['zero vector', { data: [{ index: 0, embedding: [0, 0, 0] }, { index: 1, embedding: [1, 2, 3] }] }],
  ];
  let current: unknown;
  const svc = await fakeService(t, (_b, _n, res) => res.writeHead(200).end(typeof current === 'string' ? current : JSON.stringify(current)));
  const e = new HttpEmbedder({ url: svc.base, model: 'm', dimension: 3, retries: 0 });
  for (const [why, body] of replies) {
    current = body;
    await t.rejects(e.embed(['a', 'b'], 'passage'), new RegExp(`invalid response: .*${why.replace(/[()]/g, '.')}`), why);
  }
});

t.test('each request is time-bounded; the caller signal aborts at once', async (t) => {
  let arrived: () => void = () => {};
  const svc = await fakeService(t, () => {
    arrived(); // never answers
  });
  const delays: number[] = [];
  // Long enough for each attempt to reach the service even on a loaded machine (the service runs
  // in this process: a shorter bound can fire before its request handler is scheduled).
  const e = new HttpEmbedder({ url: svc.base, model: 'm', dimension: 3, timeoutMs: 1000, retries: 1, sleep: noSleep(delays) });
  await t.rejects(e.embed(['a'], 'passage'), /did not answer within 1000 ms \(after 2 attempts\)/);
  t.equal(svc.seen.length, 2, 'both attempts reached the service');
  t.same(delays, [250], 'one backoff between the two attempts');

  // The abort comes once the request is at the service; a 10 s per-request bound and 3 retries
  // would end in a timeout after several attempts if the abort did not cut it.
  const slowDelays: number[] = [];
  const slow = new HttpEmbedder({ url: svc.base, model: 'm', dimension: 3, timeoutMs: 10_000, retries: 3, sleep: noSleep(slowDelays) });
  const ac = new AbortController();
  const before = svc.seen.length;
  arrived = () => ac.abort(new Error('client went away'));
  const err = await slow.embed(['a'], 'passage', ac.signal).catch((x: unknown) => x as Error);
  t.match(err, { message: /^client went away$/ }, 'the abort reason, not a timeout or an "after N attempts" error');
  t.equal(svc.seen.length, before + 1, 'one attempt');
  t.same(slowDelays, [], 'no retries after the abort');
});

t.test('an unreachable service is a retried network error', async (t) => {
  const srv = http.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as AddressInfo).port;
  await new Promise<void>((r) => srv.close(() => r()));
  const delays: number[] = [];
  const e = new HttpEmbedder({ url: `http://127.0.0.1:${port}`, model: 'm', dimension: 3, retries: 1, sleep: noSleep(delays) });
  await t.rejects(e.embed(['a'], 'passage'), /embedding service unreachable: .*ECONNREFUSED.*after 2 attempts/);
  t.same(delays, [250]);
});
