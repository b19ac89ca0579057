import t, { type Test } from 'tap';
import fs from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { loadConfig, type RawConfig } from '../../src/config.ts';
import { ModelManager } from '../../src/retrieval/models/model-manager.ts';
import { EXPECTED, MODELS_FIXTURE_DIR, fixtureDir } from './model-fixtures.ts';

const log = pino({ level: 'silent' });

async function tmpDir(t: Test, prefix: string) {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), prefix));
  t.teardown(() => fs.rm(dir, { recursive: true, force: true }));
  return dir;
}

function manager(t: Test, overrides: Partial<RawConfig>, extra: Partial<ConstructorParameters<typeof ModelManager>[0]> = {}) {
  const config = loadConfig({}, { DATA_DIR: os.tmpdir(), ONNX_THREADS: 1, ...overrides });
  const m = new ModelManager({ config, log, ...extra });
  t.teardown(() => m.close());
  return m;
}

/** Serves files from a folder the way the hub does: /<org>/<name>/resolve/main/<file>. */
async function fakeHub(t: Test, root: string) {
  const hits: string[] = [];
  const serve = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    hits.push(req.url!);
    const m = /^\/([^/]+\/[^/]+)\/resolve\/main\/(.+)$/.exec(req.url!);
    const file = m ? path.join(root, m[1], m[2]) : '';
    const body = file ? await fs.readFile(file).catch(() => null) : null;
    if (!body) return void res.writeHead(404).end('Entry not found');
    res.writeHead(200, { 'content-length': body.length }).end(body);
  };
  const server = http.createServer((req, res) => void serve(req, res));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits };
}

t.test('all three models from MODELS_DIR: loaded in the background, chosen by chunk count', async (t) => {
  const m = manager(t, { MODELS_DIR: MODELS_FIXTURE_DIR });
  t.match(m.state(), [{ state: 'unavailable', reason: 'model loading has not started' }, {}, {}]);
  m.start();
  // start() returns before any model is loaded (all three are still loading when it returns), so
  // nothing is measured in milliseconds.
  t.same(m.state().map((s) => s.state), ['loading', 'loading', 'loading'], 'start() returns at once: all three still loading');
  t.match(m.denseUnavailableReason(), /still loading/);
  t.equal(m.embedderFor(10), null, 'nothing served before a model is ready');
  await m.ready();
  t.same(
    m.state().map(({ id, role, kind, state, path: p, dimension }) => ({ id, role, kind, state, path: p, dimension })),
    [
      { id: 'onnx:Xenova/all-MiniLM-L6-v2:q8', role: 'fast', kind: 'embedder', state: 'ready', path: fixtureDir('Xenova/all-MiniLM-L6-v2'), dimension: 16 },
      { id: 'onnx:Xenova/bge-small-en-v1.5:fp32', role: 'accurate', kind: 'embedder', state: 'ready', path: fixtureDir('Xenova/bge-small-en-v1.5'), dimension: 24 },
      { id: 'onnx:Xenova/ms-marco-MiniLM-L-6-v2:q8', role: 'reranker', kind: 'reranker', state: 'ready', path: fixtureDir('Xenova/ms-marco-MiniLM-L-6-v2'), dimension: undefined },
    ],
  );
  t.equal(m.embedderFor(50)?.id, 'onnx:Xenova/all-MiniLM-L6-v2:q8', '<= 50 chunks: fast');
  t.equal(m.embedderFor(51)?.id, 'onnx:Xenova/bge-small-en-v1.5:fp32', '> 50 chunks: accurate');
  t.equal(m.embedderById('onnx:Xenova/bge-small-en-v1.5:fp32'), m.embedderFor(51));
  t.equal(m.embedderById('onnx:Xenova/bge-small-en-v1.5:q8'), null, 'another id (other weights) is never substituted');
  t.equal(m.denseUnavailableReason(), null);
  t.equal(m.rerankerId(), 'onnx:Xenova/ms-marco-MiniLM-L-6-v2:q8');
  const outcome = await m.rerank(EXPECTED.query, EXPECTED.passages);
  t.equal(outcome.status, 'used');
  outcome.scores!.forEach((s, i) => t.ok(Math.abs(s - EXPECTED.models.reranker.outputs.q8.logits[i]) < 1e-4, `rerank score ${i}`));
  await m.close();
  t.same(m.state().map((s) => s.state), ['unavailable', 'unavailable', 'unavailable']);
  t.equal(m.embedderFor(10), null);
  t.match(await m.rerank('q', ['p']), { status: 'unavailable' });
});

t.test('no weights: unavailable with reasons that say how to enable dense retrieval', async (t) => {
  const dir = await tmpDir(t, 'models-empty-');
  const m = manager(t, { MODELS_DIR: dir });
  m.start();
  await m.ready();
  for (const s of m.state()) {
    t.equal(s.state, 'unavailable');
    t.match(s.reason, /model files missing in .*: config\.json, tokenizer\.json, tokenizer_config\.json, onnx\/model_quantized\.onnx \(or onnx\/model\.onnx\) \(MODEL_DOWNLOADS=never\); run `npm run models:fetch`/);
  }
  t.equal(m.embedderFor(10), null);
  const reason = m.denseUnavailableReason()!;
  t.match(reason, /^no embedding model is available/);
  t.match(reason, `${dir}/<org>/<name>/{config.json, tokenizer.json, tokenizer_config.json, onnx/model_quantized.onnx}`);
  t.match(reason, /npm run models:fetch/);
  t.match(reason, /MODEL_DOWNLOADS=auto/);
  t.match(reason, /EMBEDDINGS_URL/);
  t.match(await m.rerank('q', ['p']), { status: 'unavailable', reason: /reranker onnx:Xenova\/ms-marco-MiniLM-L-6-v2:q8 is unavailable: model files missing/ });
});

t.test('a broken model fails with its reason; the other embedder serves every size', async (t) => {
  const dir = await tmpDir(t, 'models-mixed-');
  await fs.cp(fixtureDir('Xenova/bge-small-en-v1.5'), path.join(dir, 'Xenova/bge-small-en-v1.5'), { recursive: true });
  await fs.cp(fixtureDir('Xenova/all-MiniLM-L6-v2'), path.join(dir, 'Xenova/all-MiniLM-L6-v2'), { recursive: true });
  await fs.writeFile(path.join(dir, 'Xenova/all-MiniLM-L6-v2/onnx/model_quantized.onnx'), 'not an onnx file');
  const m = manager(t, { MODELS_DIR: dir });
  m.start();
  await m.ready();
  const [fast, accurate, reranker] = m.state();
  t.match(fast, { state: 'failed', reason: /^loading .*all-MiniLM-L6-v2 failed: / });
  t.match(accurate, { state: 'ready' });
  t.match(reranker, { state: 'unavailable' });
  t.equal(m.embedderFor(5)?.id, 'onnx:Xenova/bge-small-en-v1.5:fp32', 'falls back to whichever is ready');
  t.equal(m.embedderFor(500)?.id, 'onnx:Xenova/bge-small-en-v1.5:fp32');
});

t.test('MODEL_DOWNLOADS=auto fetches missing files once into the layout; a failed download is remembered', async (t) => {
  const dir = await tmpDir(t, 'models-auto-');
  const hub = await fakeHub(t, MODELS_FIXTURE_DIR);
  const m = manager(t, { MODELS_DIR: dir, MODEL_DOWNLOADS: 'auto' }, { hubUrl: hub.url });
  m.start();
  await m.ready();
  const [fast, accurate, reranker] = m.state();
  t.match(fast, { state: 'ready', id: 'onnx:Xenova/all-MiniLM-L6-v2:q8' });
  t.match(reranker, { state: 'ready' });
  // The accurate fixture has fp32 weights only, so the quantized file is a 404 on this hub.
  t.match(accurate, { state: 'failed', reason: /download from http:\/\/127\.0\.0\.1:\d+ failed: GET .*bge-small-en-v1\.5\/resolve\/main\/onnx\/model_quantized\.onnx answered HTTP 404/ });
  t.same(
    (await fs.readdir(path.join(dir, 'Xenova/all-MiniLM-L6-v2'), { recursive: true })).sort(),
    ['config.json', 'onnx', 'onnx/model_quantized.onnx', 'tokenizer.json', 'tokenizer_config.json'],
  );
  const hitsAfterStart = hub.hits.length;
  t.equal(m.embedderFor(500)?.id, 'onnx:Xenova/all-MiniLM-L6-v2:q8', 'falls back to the fast model');
  m.embedderById('onnx:Xenova/bge-small-en-v1.5:q8');
  // A retry would show at once as a loading model, and ready() would wait for its download.
  t.match(m.state()[1], { state: 'failed' }, 'the failed model is not reloaded by a call');
  await m.ready();
  t.equal(hub.hits.length, hitsAfterStart, 'no download retried per call');
  t.notOk((await fs.readdir(path.join(dir, 'Xenova/bge-small-en-v1.5'), { recursive: true })).some((f) => f.includes('.part-')), 'no partial files left');
});

t.test('EMBEDDINGS_URL: the HTTP embedder is probed at start and preferred', async (t) => {
  const seen: string[] = [];
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      seen.push(req.headers.authorization ?? '');
      const { input } = JSON.parse(raw) as { input: string[] };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data: input.map((s, index) => ({ index, embedding: [s.length, 1, 1, 1] })) }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  const dir = await tmpDir(t, 'models-http-');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const m = manager(t, { MODELS_DIR: dir, EMBEDDINGS_URL: url, EMBEDDINGS_MODEL: 'bge-m3', EMBEDDINGS_API_KEY: 'k1' });
  m.start();
  await m.ready();
  t.match(m.state().find((s) => s.role === 'http'), { id: 'http:bge-m3', state: 'ready', dimension: 4, path: `${url}/v1/embeddings` });
  const e = m.embedderFor(10)!;
  t.equal(e.id, 'http:bge-m3');
  t.equal(m.embedderFor(1000), e);
  t.equal(m.embedderById('http:bge-m3'), e);
  const [v] = await e.embed(['abc'], 'query');
  t.same(Array.from(v).map((x) => +x.toFixed(4)), [0.866, 0.2887, 0.2887, 0.2887]);
  t.equal(m.denseUnavailableReason(), null);
  t.ok(seen.every((a) => a === 'Bearer k1'));
});

t.test('an unreachable embedding service fails its probe and is reported', async (t) => {
  const dir = await tmpDir(t, 'models-http-down-');
  const m = manager(t, { MODELS_DIR: dir, EMBEDDINGS_URL: 'http://127.0.0.1:9', EMBEDDINGS_MODEL: 'x' }, { http: { retries: 0 } });
  m.start();
  await m.ready();
  t.match(m.state().find((s) => s.role === 'http'), { state: 'failed', reason: /embedding service probe failed: embedding service unreachable/ });
  t.equal(m.embedderFor(10), null);
  t.match(m.denseUnavailableReason(), /http:x: embedding service probe failed/);
});
