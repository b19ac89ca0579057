/**
 * A document with no text (an empty file, whitespace only, an HTML page with nothing in it) is
 * 422 PROCESSING_ERROR from every tool that reads it, uploaded or by URL, over REST and MCP. Among
 * several documents searched at once, an empty one just contributes no chunks. An image without
 * text is still described by process_document, but has nothing to chunk or search.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createCanvas } from '@napi-rs/canvas';
import t from 'tap';
import { buildTestApp } from '../helper.ts';
import { NO_TEXT_MESSAGE } from '../../src/tools/no-text.ts';

const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

const FILES: Record<string, { type: string; body: string }> = {
  '/blank.txt': { type: 'text/plain', body: '  \n\t \r\n   \n' },
  '/empty.txt': { type: 'text/plain', body: '' },
  '/blank.md': { type: 'text/markdown', body: '\n\n    \n' },
  '/blank.html': { type: 'text/html', body: '<!doctype html><html><head></head><body>  \n  </body></html>' },
  '/words.txt': { type: 'text/plain', body: 'Grace Hopper wrote the first compiler.\n' },
};

t.test('no text: 422 PROCESSING_ERROR from process, chunk and retrieve, by URL and by upload', async (t) => {
  const origin = http.createServer((req, res) => {
    const f = FILES[req.url ?? ''];
    if (!f) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': f.type, 'content-length': Buffer.byteLength(f.body) }).end(f.body);
  });
  await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => origin.close(() => resolve())));
  const host = `127.0.0.1:${(origin.address() as AddressInfo).port}`;
  const url = (p: string) => `http://${host}${p}`;
  const app = await buildTestApp(t, { env: { ALLOWED_HOSTS: host } });

  const noText = (res: { statusCode: number; json(): { code: string; error: string; request_id: string } }, what: string) => {
    t.equal(res.statusCode, 422, what);
    t.same({ code: res.json().code, error: res.json().error }, { code: 'PROCESSING_ERROR', error: NO_TEXT_MESSAGE }, what);
    t.type(res.json().request_id, 'string');
  };
  for (const p of ['/blank.txt', '/empty.txt', '/blank.md', '/blank.html']) {
    const document_url = url(p);
    noText(await app.inject({ method: 'POST', url: '/v1/documents/process', payload: { document_url } }), `process ${p}`);
    noText(await app.inject({ method: 'POST', url: '/v1/documents/chunk', payload: { document_url } }), `chunk ${p}`);
    noText(await app.inject({ method: 'POST', url: '/v1/documents/retrieve', payload: { document_url, query: 'compiler' } }), `retrieve ${p}`);
  }
  const upload = { 'content-type': 'text/plain', 'content-disposition': 'attachment; filename="blank.txt"' };
  const blank = FILES['/blank.txt'].body;
  noText(await app.inject({ method: 'POST', url: '/v1/documents/process', headers: upload, payload: blank }), 'process upload');
  noText(await app.inject({ method: 'POST', url: '/v1/documents/chunk', headers: upload, payload: blank }), 'chunk upload');
  noText(await app.inject({ method: 'POST', url: '/v1/documents/retrieve?query=compiler', headers: upload, payload: blank }), 'retrieve upload');

  // The table tools say it in their own words, with the same code.
  for (const [route, extra] of [['/v1/extract/csv', {}], ['/v1/spreadsheets/query', { search_value: 'x' }]] as const) {
    const res = await app.inject({ method: 'POST', url: route, payload: { document_url: url('/blank.txt'), ...extra } });
    t.equal(res.statusCode, 422, route);
    t.equal(res.json().code, 'PROCESSING_ERROR', route);
  }

  const mcp = await app.inject({
    method: 'POST',
    url: '/mcp',
    headers: MCP_HEADERS,
    payload: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'chunk_document', arguments: { document_url: url('/blank.txt') } } },
  });
  t.equal(mcp.json().result.isError, true);
  t.match(JSON.parse(mcp.json().result.content[0].text), { code: 'PROCESSING_ERROR', error: NO_TEXT_MESSAGE });

  // Several documents: an empty one adds no chunks; only when none has text is it an error.
  const mixed = await app.inject({
    method: 'POST',
    url: '/v1/documents/retrieve',
    payload: { document_urls: [url('/blank.txt'), url('/words.txt')], query: 'compiler' },
  });
  t.equal(mixed.statusCode, 200, mixed.body);
  t.same(
    mixed.json().retrieval.documents.map((d: { source: string; chunks: number }) => [d.source, d.chunks]),
    [[url('/blank.txt'), 0], [url('/words.txt'), 1]],
  );
  t.equal(mixed.json().results[0].source, url('/words.txt'));
  noText(
    await app.inject({ method: 'POST', url: '/v1/documents/retrieve', payload: { document_urls: [url('/blank.txt'), url('/blank.md')], query: 'compiler' } }),
    'retrieve over documents none of which has text',
  );

  const words = await app.inject({ method: 'POST', url: '/v1/documents/process', payload: { document_url: url('/words.txt') } });
  t.equal(words.statusCode, 200, 'a document with text is processed as before');
  t.equal(words.json().content, 'Grace Hopper wrote the first compiler.');
});

t.test('an image without text: described by process_document, nothing to chunk or search', async (t) => {
  const app = await buildTestApp(t);
  const canvas = createCanvas(200, 100);
  const g = canvas.getContext('2d');
  g.fillStyle = '#ffffff';
  g.fillRect(0, 0, 200, 100);
  const png = canvas.toBuffer('image/png');
  const headers = { 'content-type': 'image/png' };
  const processed = await app.inject({ method: 'POST', url: '/v1/documents/process', headers, payload: png });
  t.equal(processed.statusCode, 200, processed.body);
  t.match(processed.json(), { content: '', document_type: 'image', metadata: { width: 200, height: 100, word_count: 0 } });
  for (const url of ['/v1/documents/chunk', '/v1/documents/retrieve?query=anything']) {
    const res = await app.inject({ method: 'POST', url, headers, payload: png });
    t.equal(res.statusCode, 422, url);
    t.match(res.json(), { code: 'PROCESSING_ERROR', error: NO_TEXT_MESSAGE }, url);
  }
  const ocr = await app.inject({ method: 'POST', url: '/v1/extract/image', headers, payload: png });
  t.equal(ocr.statusCode, 200, 'extract_image_text reports what it found: no text');
});
