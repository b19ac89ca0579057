/**
 * The compiled build (dist/, what `npm start`, the bin and MCP clients run) does everything the
 * sources do: every other test imports the TypeScript, so this one spawns the bin and drives it over
 * HTTP and MCP — every format by upload (OCR included), a URL download from a loopback origin,
 * hybrid retrieval with the ONNX model workers, MCP tools/call, and Swagger UI's assets. It catches
 * what bundling can break: packages kept external, worker entry points, files read at run time.
 * `npm test` builds dist/ first (pretest).
 */
import fs from 'node:fs';
import http from 'node:http';
import type net from 'node:net';
import path from 'node:path';
import t from 'tap';
import { spawnCliServer } from '../helper.ts';
import { FIXTURE_NAMES, HTML_FACTS, OCR_LINES, fixtureFiles, type FixtureFiles } from '../fixtures-gen/documents.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const MODELS = path.join(ROOT, 'test/fixtures/models');

t.ok(fs.existsSync(path.join(ROOT, 'dist/src/server.js')), 'dist/ is built (npm run build)');

const files: FixtureFiles = await fixtureFiles();

// A loopback origin for the URL path.
const origin = http.createServer((req, res) => {
  if (req.url === '/birds.html') res.writeHead(200, { 'content-type': 'text/html' }).end(files.html);
  else res.writeHead(404).end();
});
await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
const originPort = (origin.address() as net.AddressInfo).port;
t.teardown(() => origin.close());

const { address: base } = await spawnCliServer(t, {
  MODELS_DIR: MODELS,
  ALLOWED_HOSTS: `127.0.0.1:${originPort}`,
  RATE_LIMIT_RPM: '0',
});

async function upload(route: string, kind: keyof FixtureFiles, fields: Record<string, string> = {}) {
  const form = new FormData();
  form.set('file', new Blob([new Uint8Array(files[kind])]), FIXTURE_NAMES[kind]);
  for (const [k, v] of Object.entries(fields)) form.set(k, v);
  const res = await fetch(base + route, { method: 'POST', body: form });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

t.test('every format is extracted by upload', async (t) => {
  for (const kind of ['pdf', 'docx', 'pptx', 'xlsx', 'xls', 'csv', 'html', 'txt'] as const) {
    const r = await upload('/v1/documents/process', kind);
    t.equal(r.status, 200, `${kind}: 200`);
    t.ok(typeof r.body.content === 'string' && (r.body.content as string).trim().length > 20, `${kind}: has content`);
  }
  const encrypted = await upload('/v1/documents/process', 'encrypted');
  t.equal(encrypted.body.code, 'PROCESSING_ERROR', 'an encrypted file is a coded error');
});

t.test('extraction runs in child processes started from the build', async (t) => {
  const r = await upload('/v1/documents/process', 'docx');
  t.equal(r.status, 200);
  const health = (await (await fetch(`${base}/v1/system/health`)).json()) as { features: Record<string, Record<string, any>> };
  const pool = health.features.extraction_isolation!;
  t.ok(pool.children_started >= 1, `children started: ${pool.children_started}`);
  t.ok(pool.jobs >= 8, `jobs done in children: ${pool.jobs}`);
  t.same(pool.restarts, { memory: 0, crash: 0, cancelled: 0, recycled: 0, idle: 0, start_failed: 0 }, 'no child failed');
});

t.test('OCR runs in the compiled build (tesseract worker and language data resolve)', async (t) => {
  const r = await upload('/v1/extract/image', 'png');
  t.equal(r.status, 200);
  const text = (r.body.ocr_results as Array<{ text: string }>).map((x) => x.text).join('\n');
  for (const line of OCR_LINES) for (const word of line.split(' ')) t.match(text, word, `OCR read ${word}`);
});

t.test('a URL is downloaded through the SSRF-guarded pools', async (t) => {
  const res = await fetch(`${base}/v1/documents/process`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ document_url: `http://127.0.0.1:${originPort}/birds.html` }),
  });
  t.equal(res.status, 200);
  const body = (await res.json()) as { content: string };
  t.match(body.content, HTML_FACTS.title);
});

t.test('hybrid retrieval uses the ONNX model workers of the build', async (t) => {
  let health: { models?: Array<{ state: string }> } = {};
  for (let i = 0; i < 200; i++) {
    health = (await (await fetch(`${base}/v1/system/health`)).json()) as typeof health;
    if (health.models?.every((m) => m.state !== 'loading')) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  t.ok(health.models?.length && health.models.every((m) => m.state === 'ready'), 'every model is ready');
  const r = await upload('/v1/documents/retrieve', 'pdf', { query: 'page two', top_k: '2', mode: 'hybrid', rerank: 'true' });
  t.equal(r.status, 200);
  t.ok((r.body.results as unknown[]).length >= 1, 'results');
  const retrieval = r.body.retrieval as { mode: string; embedder: string | null; reranker_model: string | null };
  t.equal(retrieval.mode, 'hybrid', 'served in hybrid mode');
  t.match(retrieval.embedder, /all-MiniLM-L6-v2|bge-small/, 'by an ONNX embedder');
  t.match(retrieval.reranker_model, /ms-marco-MiniLM-L-6-v2/, 'reranked by the cross-encoder worker');
});

t.test('MCP over HTTP answers tools/call', async (t) => {
  const res = await fetch(`${base}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'detect_language', arguments: { text: 'Ceci est un petit texte en français.' } } }),
  });
  t.equal(res.status, 200);
  const body = (await res.json()) as { result: { structuredContent: { language_code: string } } };
  t.equal(body.result.structuredContent.language_code, 'fr');
});

t.test('Swagger UI and its assets are served', async (t) => {
  for (const p of ['/docs/', '/docs/static/swagger-ui-bundle.js', '/openapi.json']) {
    const res = await fetch(base + p);
    await res.arrayBuffer();
    t.equal(res.status, 200, p);
  }
});
