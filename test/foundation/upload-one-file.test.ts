/** A multipart call carries one document: a second file is a 400 VALIDATION_ERROR, not a size error. */
import t from 'tap';
import { buildTestApp } from '../helper.ts';
import { uploadEchoTool } from './test-tools.ts';

/** A multipart body as a browser or curl -F would send it, with any number of files. */
async function multipart(fields: Record<string, string>, files: { field: string; name: string; bytes: string }[]) {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  for (const f of files) form.append(f.field, new Blob([f.bytes], { type: 'text/csv' }), f.name);
  const req = new Request('http://localhost/', { method: 'POST', body: form });
  return { payload: Buffer.from(await req.arrayBuffer()), headers: { 'content-type': req.headers.get('content-type')! } };
}

const A = { field: 'file', name: 'a.csv', bytes: 'name,score\nada,3\n' };
const B = { field: 'file', name: 'b.csv', bytes: 'name,score\ngrace,5\n' };

t.test('two files in one multipart call: 400 VALIDATION_ERROR, one file per call', async (t) => {
  const app = await buildTestApp(t, { extraTools: [uploadEchoTool] });
  for (const [url, fields] of [
    ['/v1/test/upload', { query: 'ada' }],
    ['/v1/documents/process', {}],
    ['/v1/documents/retrieve', { query: 'ada' }],
  ] as const) {
    const res = await app.inject({ method: 'POST', url, ...(await multipart(fields, [A, B])) });
    t.equal(res.statusCode, 400, `${url}: ${res.body}`);
    t.equal(res.json().code, 'VALIDATION_ERROR');
    t.match(res.json().error, /^send one file per call/);
    t.type(res.json().request_id, 'string');
  }
  const other = await app.inject({ method: 'POST', url: '/v1/test/upload', ...(await multipart({}, [A, { ...B, field: 'attachment' }])) });
  t.equal(other.statusCode, 400, 'a second file under another field name is a second file too');
  t.match(other.json(), { code: 'VALIDATION_ERROR', error: /^send one file per call/ });

  const one = await app.inject({ method: 'POST', url: '/v1/test/upload', ...(await multipart({ query: 'ada' }, [A])) });
  t.equal(one.statusCode, 200, 'one file is fine');
  t.equal(one.json().upload.filename, 'a.csv');
});

t.test('a file over MAX_UPLOAD_BYTES is still 413 PAYLOAD_TOO_LARGE', async (t) => {
  const app = await buildTestApp(t, { extraTools: [uploadEchoTool], env: { MAX_UPLOAD_BYTES: '10' } });
  const res = await app.inject({ method: 'POST', url: '/v1/test/upload', ...(await multipart({}, [A])) });
  t.equal(res.statusCode, 413);
  t.equal(res.json().code, 'PAYLOAD_TOO_LARGE');
});
