import { createHash } from 'node:crypto';
import t from 'tap';
import { buildTestApp } from '../helper.ts';
import { uploadEchoTool } from './test-tools.ts';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** A multipart body exactly as a browser or curl -F would send it. */
async function multipart(fields: Record<string, string>, file?: { name: string; type: string; bytes: Buffer; field?: string }) {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  if (file) form.append(file.field ?? 'file', new Blob([new Uint8Array(file.bytes)], { type: file.type }), file.name);
  const req = new Request('http://localhost/', { method: 'POST', body: form });
  return { payload: Buffer.from(await req.arrayBuffer()), headers: { 'content-type': req.headers.get('content-type')! } };
}

const CSV = Buffer.from('name,score\nada,3\ngrace,5\n');

t.test('multipart: field "file" plus form fields coerced per schema', async (t) => {
  const app = await buildTestApp(t, { extraTools: [uploadEchoTool] });
  const res = await app.inject({ method: 'POST', url: '/v1/test/upload', ...(await multipart({ query: 'grace', top_k: '7' }, { name: 'scores.csv', type: 'text/csv', bytes: CSV })) });
  t.equal(res.statusCode, 200, res.body);
  t.same(res.json(), {
    document_url: null,
    query: 'grace',
    top_k: 7,
    upload: { bytes: CSV.byteLength, sha256: sha(CSV), filename: 'scores.csv', content_type: 'text/csv' },
  });
});

t.test('raw body with a non-JSON Content-Type; other fields from the querystring', async (t) => {
  const app = await buildTestApp(t, { extraTools: [uploadEchoTool] });
  const res = await app.inject({
    method: 'POST',
    url: '/v1/test/upload?query=ada&top_k=3',
    headers: { 'content-type': 'text/csv', 'content-disposition': 'attachment; filename="scores.csv"' },
    payload: CSV,
  });
  t.equal(res.statusCode, 200, res.body);
  t.same(res.json(), { document_url: null, query: 'ada', top_k: 3, upload: { bytes: CSV.byteLength, sha256: sha(CSV), filename: 'scores.csv', content_type: 'text/csv' } });

  const plain = await app.inject({ method: 'POST', url: '/v1/test/upload', headers: { 'content-type': 'text/plain' }, payload: 'hello' });
  t.equal(plain.statusCode, 200, 'text/plain is a document too');
  t.equal(plain.json().upload.bytes, 5);
  t.equal(plain.json().top_k, 5, 'defaults apply');
});

t.test('an uploaded file name is reduced to its base name, as for downloads', async (t) => {
  const app = await buildTestApp(t, { extraTools: [uploadEchoTool] });
  const raw = (disposition: string) =>
    app.inject({ method: 'POST', url: '/v1/test/upload', headers: { 'content-type': 'text/csv', 'content-disposition': disposition }, payload: CSV });
  t.equal((await raw('attachment; filename="../../etc/scores.csv"')).json().upload.filename, 'scores.csv', 'a path is dropped');
  t.equal((await raw('attachment; filename="C:\\\\Users\\\\ada\\\\scores.csv"')).json().upload.filename, 'scores.csv', 'a Windows path too');
  t.equal((await raw("attachment; filename*=UTF-8''%2E%2E%2Fr%C3%A9sum%C3%A9.csv")).json().upload.filename, 'résumé.csv', 'RFC 5987, decoded, then cleaned');
  t.equal((await raw('attachment; filename=".."')).json().upload.filename, null, 'no usable name');
  const form = await app.inject({ method: 'POST', url: '/v1/test/upload', ...(await multipart({}, { name: 'dir/sub/scores.csv', type: 'text/csv', bytes: CSV })) });
  t.equal(form.json().upload.filename, 'scores.csv', 'multipart file names are cleaned the same way');
});

t.test('JSON with the URL keeps working on an upload route', async (t) => {
  const app = await buildTestApp(t, { extraTools: [uploadEchoTool] });
  const res = await app.inject({ method: 'POST', url: '/v1/test/upload', payload: { document_url: 'https://example.com/a.csv', top_k: 2 } });
  t.equal(res.statusCode, 200);
  t.same(res.json(), { document_url: 'https://example.com/a.csv', query: null, top_k: 2, upload: null });
  const form = await app.inject({ method: 'POST', url: '/v1/test/upload', ...(await multipart({ document_url: 'https://example.com/b.csv' })) });
  t.equal(form.json().document_url, 'https://example.com/b.csv', 'a form without a file may name the URL');
});

t.test('upload validation errors name the field', async (t) => {
  const app = await buildTestApp(t, { extraTools: [uploadEchoTool] });
  const cases: [Promise<{ payload: Buffer; headers: Record<string, string> }> | { url: string; payload: Buffer; headers: Record<string, string> }, string][] = [
    [multipart({ top_k: '0' }, { name: 'a.csv', type: 'text/csv', bytes: CSV }), 'body/top_k must be >= 1'],
    [multipart({ top_k: 'many' }, { name: 'a.csv', type: 'text/csv', bytes: CSV }), 'body/top_k must be integer'],
    [multipart({ document_url: 'https://e.com/x' }, { name: 'a.csv', type: 'text/csv', bytes: CSV }), 'send either a file or document_url, not both'],
    [multipart({}, { name: 'a.csv', type: 'text/csv', bytes: CSV, field: 'document' }), 'body/document is not a file field: send the document as "file"'],
    [multipart({ query: 'x' }), 'body/document_url is required'],
    [{ url: '/v1/test/upload?top_k=abc', payload: CSV, headers: { 'content-type': 'text/csv' } }, 'querystring/top_k must be integer'],
    [{ url: '/v1/test/upload?document_url=https://e.com/x', payload: CSV, headers: { 'content-type': 'text/csv' } }, 'send either a file or document_url, not both'],
  ];
  for (const [input, message] of cases) {
    const req = await input;
    const res = await app.inject({ method: 'POST', url: 'url' in req ? req.url : '/v1/test/upload', payload: req.payload, headers: req.headers });
    t.equal(res.statusCode, 400, message);
    t.same(res.json(), { error: message, code: 'VALIDATION_ERROR', request_id: res.headers['x-request-id'] });
  }
});

t.test('uploads over MAX_UPLOAD_BYTES: 413 PAYLOAD_TOO_LARGE', async (t) => {
  const app = await buildTestApp(t, { extraTools: [uploadEchoTool], env: { MAX_UPLOAD_BYTES: '1000' } });
  const big = Buffer.alloc(5000, 'a');
  const form = await app.inject({ method: 'POST', url: '/v1/test/upload', ...(await multipart({}, { name: 'big.txt', type: 'text/plain', bytes: big })) });
  t.equal(form.statusCode, 413);
  t.equal(form.json().code, 'PAYLOAD_TOO_LARGE');
  const raw = await app.inject({ method: 'POST', url: '/v1/test/upload', headers: { 'content-type': 'application/pdf' }, payload: big });
  t.equal(raw.statusCode, 413);
  t.equal(raw.json().code, 'PAYLOAD_TOO_LARGE');
  const small = await app.inject({ method: 'POST', url: '/v1/test/upload', headers: { 'content-type': 'application/pdf' }, payload: big.subarray(0, 900) });
  t.equal(small.statusCode, 200, 'under the limit is fine');
});

t.test('OpenAPI documents JSON, multipart and raw bodies for upload tools', async (t) => {
  const app = await buildTestApp(t, { extraTools: [uploadEchoTool] });
  const op = (await app.inject('/openapi.json')).json().paths['/v1/test/upload'].post;
  t.same(Object.keys(op.requestBody.content), ['application/json', 'multipart/form-data', 'application/octet-stream']);
  const form = op.requestBody.content['multipart/form-data'].schema;
  t.same(form.properties.file, { type: 'string', format: 'binary', description: 'The document itself (instead of document_url)' });
  t.same(form.required, ['file']);
  t.notOk('document_url' in form.properties);
  t.same(
    op.parameters.map((p: { name: string; in: string; required: boolean }) => [p.name, p.in, p.required]),
    [
      ['query', 'query', false],
      ['top_k', 'query', false],
    ],
  );
});
