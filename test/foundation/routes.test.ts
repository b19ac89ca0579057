import path from 'node:path';
import t from 'tap';
import { buildTestApp } from '../helper.ts';
import { tools as registry } from '../../src/tools/index.ts';
import { crashTool, uploadEchoTool } from './test-tools.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

t.test('GET /health: liveness and readiness, no rate-limit accounting', async (t) => {
  const app = await buildTestApp(t);
  const res = await app.inject('/health');
  t.equal(res.statusCode, 200);
  const body = res.json();
  t.same(Object.keys(body).sort(), ['checks', 'ready', 'status', 'uptime_seconds', 'version']);
  t.equal(body.status, 'ok');
  t.equal(body.ready, true);
  t.equal(body.checks.data_dir_writable, true);
  t.ok(['loading', 'unavailable'].includes(body.checks.models), 'no model files here: loading, then unavailable');
  await app.services.models.ready();
  t.equal((await app.inject('/health')).json().checks.models, 'unavailable');
  t.match(body.version, /^\d+\.\d+\.\d+/);
  t.equal(res.headers['x-ratelimit-remaining'], undefined);
});

t.test('GET /info lists every registered tool with its REST route and the transports', async (t) => {
  const app = await buildTestApp(t);
  const res = await app.inject('/info');
  t.equal(res.statusCode, 200);
  const body = res.json();
  t.equal(body.name, 'rag-document-server');
  t.same(
    body.tools.map((x: { name: string }) => x.name),
    registry.map((x) => x.name),
  );
  const health = body.tools.find((x: { name: string }) => x.name === 'get_system_health');
  t.same(health, { name: 'get_system_health', title: 'System health', group: 'utility', method: 'GET', path: '/v1/system/health', accepts_upload: false });
  t.same(
    body.transports.map((x: { name: string }) => x.name),
    ['rest', 'mcp-streamable-http', 'mcp-stdio'],
  );
});

t.test('unknown routes: 404 NOT_FOUND with the error body', async (t) => {
  const app = await buildTestApp(t);
  const res = await app.inject({ method: 'POST', url: '/v1/nope?x=1', headers: { 'x-request-id': 'req-404' } });
  t.equal(res.statusCode, 404);
  t.same(res.json(), { error: 'Route POST /v1/nope not found', code: 'NOT_FOUND', request_id: 'req-404' });
});

t.test('x-request-id: a well-formed id is kept and echoed, a malformed one replaced', async (t) => {
  const app = await buildTestApp(t);
  const kept = await app.inject({ url: '/v1/system/health', headers: { 'x-request-id': 'client-Trace.42:a_b' } });
  t.equal(kept.headers['x-request-id'], 'client-Trace.42:a_b');
  for (const bad of ['has spaces', 'x'.repeat(200), '<script>', '-leading-dash']) {
    const res = await app.inject({ method: 'POST', url: '/v1/cache', payload: { action: 'nope' }, headers: { 'x-request-id': bad } });
    const id = res.headers['x-request-id'] as string;
    t.match(id, UUID, `replaced ${JSON.stringify(bad.slice(0, 20))}`);
    t.equal(res.json().request_id, id, 'the error body carries the same id');
  }
  const generated = await app.inject('/health');
  t.match(generated.headers['x-request-id'], UUID);
});

t.test('get_system_health reports status, version, features, security, formats, device, caches', async (t) => {
  const app = await buildTestApp(t, { extraTools: [uploadEchoTool], env: { RATE_LIMIT_RPM: '40', REQUEST_TIMEOUT: '100' } });
  // Models load in the background; once settled their state is deterministic (no weights in the temp MODELS_DIR).
  await app.services.models.ready();
  const res = await app.inject('/v1/system/health');
  t.equal(res.statusCode, 200);
  const body = res.json();
  t.equal(body.status, 'ok');
  t.equal(body.name, 'rag-document-server');
  t.match(body.version, /^\d+\.\d+\.\d+/);
  t.ok(body.uptime_seconds >= 0);
  t.same(body.features.auth, { available: false, reason: 'API_KEYS and API_KEYS_FILE are not set: every client is accepted' });
  t.equal(body.features.log_files.available, false);
  t.same(body.security.timeouts_seconds, { document: 100, extraction: 100, utility: 30 });
  t.equal(body.security.rate_limit_rpm, 40);
  t.equal(body.security.global_rate_limit_rpm, 200);
  t.equal(body.security.auth_enabled, false);
  t.equal(body.security.dns_rebinding_protection, true);
  const modelsDir = app.services.config.modelsDir;
  t.same(
    body.models.map((m: Record<string, unknown>) => [m.name, m.id, m.role, m.kind, m.state, m.path]),
    [
      ['onnx:Xenova/all-MiniLM-L6-v2:q8', 'onnx:Xenova/all-MiniLM-L6-v2:q8', 'fast', 'embedder', 'unavailable', path.join(modelsDir, 'Xenova/all-MiniLM-L6-v2')],
      ['onnx:Xenova/bge-small-en-v1.5:q8', 'onnx:Xenova/bge-small-en-v1.5:q8', 'accurate', 'embedder', 'unavailable', path.join(modelsDir, 'Xenova/bge-small-en-v1.5')],
      ['onnx:Xenova/ms-marco-MiniLM-L-6-v2:q8', 'onnx:Xenova/ms-marco-MiniLM-L-6-v2:q8', 'reranker', 'reranker', 'unavailable', path.join(modelsDir, 'Xenova/ms-marco-MiniLM-L-6-v2')],
    ],
  );
  for (const m of body.models) {
    t.equal(
      m.reason,
      `model files missing in ${m.path}: config.json, tokenizer.json, tokenizer_config.json, onnx/model_quantized.onnx (or onnx/model.onnx) (MODEL_DOWNLOADS=never); run \`npm run models:fetch\` or copy the files there`,
      `${m.role}: says which files are missing and how to get them`,
    );
  }
  t.same(body.features.lexical_retrieval, { available: true, method: 'BM25 (Porter stemming, title/heading field)' });
  t.equal(body.features.dense_retrieval.available, false);
  t.match(body.features.dense_retrieval.reason, /^no embedding model is available \(onnx:Xenova\/all-MiniLM-L6-v2:q8: model files missing/);
  t.match(body.features.dense_retrieval.reason, `To enable dense retrieval, put the model files in ${modelsDir}/<org>/<name>/`);
  t.match(body.features.dense_retrieval.reason, /npm run models:fetch.*MODEL_DOWNLOADS=auto.*EMBEDDINGS_URL/);
  t.equal(body.features.reranking.available, false);
  t.match(body.features.reranking.reason, /^reranker onnx:Xenova\/ms-marco-MiniLM-L-6-v2:q8 is unavailable: model files missing/);
  t.same(body.features.ocr, {
    available: true, engine: 'tesseract.js', default_languages: ['eng'], installed_languages: ['eng'], orientation_detection: true, tessdata_dir: false,
    max_pages_per_call: 30, size: 2, busy: 0, queued: 0, started: 0,
  });
  t.same(body.features.retrieval_stats, {
    available: true, built: 0, from_disk: 0, from_memory: 0, embedded_chunks: 0, builds_in_flight: 0,
    rerank_queue: { running: 0, queued: 0, concurrency: 2, maxQueue: 32, waitMs: 10000, used: 0, skipped: 0, failed: 0, unavailable: 0 },
  });
  t.same(body.features.documents, { available: true, downloads: 0, extractions: 0, downloads_in_flight: 0, extractions_in_flight: 0 });
  t.same(
    body.formats.map((f: { format: string }) => f.format),
    ['pdf', 'docx', 'pptx', 'xlsx', 'xls', 'csv', 'image', 'html', 'text'],
  );
  t.same(body.formats.find((f: { format: string }) => f.format === 'csv').tools, ['process_document', 'chunk_document', 'retrieve_chunks', 'query_spreadsheet', 'extract_csv_tables', 'test_upload']);
  t.ok(body.device.cpu_cores >= 1);
  t.ok(body.device.total_memory_bytes > 0);
  t.type(body.device.cpu_model, 'string');
  t.same(
    body.cache.layers.map((l: { name: string }) => l.name),
    ['download', 'document', 'retriever', 'indexes'],
  );
  t.same(body.cache.layers[3], {
    name: 'indexes', entries: 0, bytes: 0, max_entries: 1000, max_bytes: null, ttl_seconds: 0, hits: 0, misses: 0, hit_rate: 0, evictions: 0,
  });
  t.ok(!Number.isNaN(Date.parse(body.timestamp)));
});

t.test('get_system_health includes sections added by health reporters', async (t) => {
  const app = await buildTestApp(t);
  app.services.healthReporters.push({
    features: () => ({ ocr: { available: false, reason: 'no language data' } }),
    models: async () => [{ name: 'tiny', role: 'embedder', state: 'loaded' }],
  });
  app.services.healthReporters.push({
    features: () => {
      throw new Error('probe failed');
    },
  });
  const body = (await app.inject('/v1/system/health')).json();
  t.same(body.features.ocr, { available: false, reason: 'no language data' }, 'a later reporter overrides a section');
  t.same(
    body.models.map((m: { name: string; role: string }) => [m.name, m.role]),
    [
      ['onnx:Xenova/all-MiniLM-L6-v2:q8', 'fast'],
      ['onnx:Xenova/bge-small-en-v1.5:q8', 'accurate'],
      ['onnx:Xenova/ms-marco-MiniLM-L-6-v2:q8', 'reranker'],
      ['tiny', 'embedder'],
    ],
    'the services\' models first, then the added reporter\'s',
  );
  t.same(body.models[3], { name: 'tiny', role: 'embedder', state: 'loaded' });
  t.equal(body.features.lexical_retrieval.available, true, 'the failing reporter does not drop the others');
  t.equal(body.status, 'degraded', 'a failing reporter marks the server degraded');
});

t.test('manage_cache: stats per layer, clear returns evictions per layer (memory and disk)', async (t) => {
  const app = await buildTestApp(t);
  const { caches } = app.services;
  caches.download.set('u1', { bytes: Buffer.alloc(100), sha256: 'x' });
  caches.download.set('u2', { bytes: Buffer.alloc(50), sha256: 'y' });
  caches.download.get('u1');
  caches.download.get('missing');
  let diskEntries = 4;
  app.services.diskCaches.push({
    name: 'test_disk',
    clear: async () => {
      const n = diskEntries;
      diskEntries = 0;
      return n;
    },
  });

  const stats = await app.inject({ method: 'POST', url: '/v1/cache', payload: { action: 'stats' } });
  t.equal(stats.statusCode, 200);
  const s = stats.json();
  t.equal(s.action, 'stats');
  const download = s.layers.find((l: { name: string }) => l.name === 'download');
  t.same(
    { entries: download.entries, bytes: download.bytes, hits: download.hits, misses: download.misses, hit_rate: download.hit_rate },
    { entries: 2, bytes: 150, hits: 1, misses: 1, hit_rate: 0.5 },
  );
  t.same(s.totals, { entries: 2, bytes: 150 });
  t.notOk('evicted' in s);

  const noBody = await app.inject({ method: 'POST', url: '/v1/cache' });
  t.equal(noBody.json().action, 'stats', 'action defaults to stats');

  const clear = await app.inject({ method: 'POST', url: '/v1/cache', payload: { action: 'clear' } });
  t.equal(clear.statusCode, 200);
  const c = clear.json();
  t.same(c.evicted, { download: 2, document: 0, retriever: 0, indexes: 0, test_disk: 4 });
  t.equal(c.total_evicted, 6);
  t.same(c.totals, { entries: 0, bytes: 0 });
});

t.test('validation errors name the field', async (t) => {
  const app = await buildTestApp(t, { extraTools: [uploadEchoTool] });
  const cases: [unknown, string][] = [
    [{ action: 'bogus' }, 'body/action must be one of: "stats", "clear"'],
    [{ action: 3 }, 'body/action must be one of: "stats", "clear"'],
  ];
  for (const [payload, message] of cases) {
    const res = await app.inject({ method: 'POST', url: '/v1/cache', payload: payload as object });
    t.equal(res.statusCode, 400);
    t.same(res.json(), { error: message, code: 'VALIDATION_ERROR', request_id: res.headers['x-request-id'] });
  }
  const url = await app.inject({ method: 'POST', url: '/v1/test/upload', payload: { document_url: `https://e.com/${'a'.repeat(2100)}` } });
  t.equal(url.json().error, 'body/document_url must not have more than 2048 characters');
  const scheme = await app.inject({ method: 'POST', url: '/v1/test/upload', payload: { document_url: 'file:///etc/passwd' } });
  t.equal(scheme.json().error, 'body/document_url must be an http(s) URL');
  const topK = await app.inject({ method: 'POST', url: '/v1/test/upload', payload: { document_url: 'https://e.com/a.pdf', top_k: 0 } });
  t.equal(topK.json().error, 'body/top_k must be >= 1');
  const missing = await app.inject({ method: 'POST', url: '/v1/test/upload', payload: {} });
  t.equal(missing.json().error, 'body/document_url is required');
});

t.test('malformed and foreign bodies are coded errors', async (t) => {
  const app = await buildTestApp(t);
  const bad = await app.inject({ method: 'POST', url: '/v1/cache', headers: { 'content-type': 'application/json' }, payload: '{"action":' });
  t.equal(bad.statusCode, 400);
  t.equal(bad.json().code, 'VALIDATION_ERROR');
  const text = await app.inject({ method: 'POST', url: '/v1/cache', headers: { 'content-type': 'application/xml' }, payload: '<a/>' });
  t.equal(text.statusCode, 415);
  t.equal(text.json().code, 'UNSUPPORTED_FORMAT');
  const huge = await app.inject({ method: 'POST', url: '/v1/cache', headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ action: 'stats', pad: 'x'.repeat(3 * 1024 * 1024) }) });
  t.equal(huge.statusCode, 413);
  t.equal(huge.json().code, 'PAYLOAD_TOO_LARGE');
});

t.test('5xx never leak internals; coded errors keep their status and message', async (t) => {
  const app = await buildTestApp(t, { extraTools: [crashTool] });
  const res = await app.inject({ method: 'POST', url: '/v1/test/crash', payload: {} });
  t.equal(res.statusCode, 500);
  t.same(res.json(), { error: 'Internal server error', code: 'INTERNAL_ERROR', request_id: res.headers['x-request-id'] });
  t.notMatch(res.body, /secret|\/srv|stack/);
  const coded = await app.inject({ method: 'POST', url: '/v1/test/crash', payload: { coded: true } });
  t.equal(coded.statusCode, 415);
  t.same(coded.json(), { error: 'This is not a format we read', code: 'UNSUPPORTED_FORMAT', request_id: coded.headers['x-request-id'] });
});

t.test('Swagger UI at /docs and the OpenAPI document at /openapi.json', async (t) => {
  const app = await buildTestApp(t);
  const docs = await app.inject('/docs/');
  t.equal(docs.statusCode, 200);
  t.match(docs.headers['content-type'], /text\/html/);
  const spec = await app.inject('/openapi.json');
  t.equal(spec.statusCode, 200);
  const doc = spec.json();
  t.equal(doc.openapi, '3.1.0');
  const ops = Object.values(doc.paths as Record<string, Record<string, { operationId: string; tags: string[] }>>).flatMap((p) => Object.values(p));
  for (const tool of registry) {
    const op = ops.find((o) => o.operationId === tool.name);
    t.ok(op, `${tool.name} has an operation`);
    t.same(op?.tags, [tool.group]);
  }
  t.same(doc.paths['/v1/cache'].post.requestBody.content['application/json'].schema, JSON.parse(JSON.stringify(registry.find((x) => x.name === 'manage_cache')!.input)));
});

t.test('DNS-rebinding guard on a loopback bind: foreign Host or Origin is refused', async (t) => {
  const app = await buildTestApp(t, { env: { ALLOWED_ORIGINS: 'https://app.example.com,proxy.internal:8080' } });
  const evilHost = await app.inject({ url: '/info', headers: { host: 'attacker.example:8000' } });
  t.equal(evilHost.statusCode, 403);
  t.equal(evilHost.json().code, 'URL_NOT_ALLOWED');
  const evilOrigin = await app.inject({ url: '/info', headers: { host: 'localhost:8000', origin: 'http://attacker.example' } });
  t.equal(evilOrigin.statusCode, 403);
  for (const headers of [
    { host: 'localhost:8000' },
    { host: '127.0.0.1:8000', origin: 'http://127.0.0.1:8000' },
    { host: '[::1]:8000' },
    { host: 'proxy.internal:8080' },
    { host: 'localhost', origin: 'https://app.example.com' },
  ]) {
    const ok = await app.inject({ url: '/info', headers });
    t.equal(ok.statusCode, 200, JSON.stringify(headers));
  }
  const health = await app.inject({ url: '/health', headers: { host: 'anything.example' } });
  t.equal(health.statusCode, 200, '/health answers probes with any Host');

  const open = await buildTestApp(t, { env: { HOST: '0.0.0.0' } });
  const any = await open.inject({ url: '/info', headers: { host: 'server.example.com' } });
  t.equal(any.statusCode, 200, 'no guard when bound to all interfaces');
});
