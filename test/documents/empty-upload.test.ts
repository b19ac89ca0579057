/**
 * A 0-byte file gets the same answer whether it is uploaded (multipart or raw body) or named by
 * URL: the tools that need text say 422 PROCESSING_ERROR "The document has no text", the
 * extract_* tools say what the file is (415 UNSUPPORTED_FORMAT, "an empty file"), and a
 * knowledge-base ingest takes it into the job, whose item ends as the URL's does. No upload-only
 * 400 "body/file is empty".
 */
import t from 'tap';
import type { FastifyInstance } from 'fastify';
import { buildTestApp, testConfig } from '../helper.ts';
import { startStaticServer } from '../integration/helpers.ts';

const BOUNDARY = '----empty-upload-test';

/** A multipart form with the fields and an empty file part named `name`. */
function emptyForm(name: string, fields: Record<string, string>): string {
  const parts = Object.entries(fields).map(([k, v]) => `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`);
  parts.push(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: application/octet-stream\r\n\r\n\r\n`);
  return `${parts.join('')}--${BOUNDARY}--\r\n`;
}

interface Answer {
  status: number;
  code: string;
  error: string;
}

const answer = (res: { statusCode: number; json(): { code: string; error: string } }): Answer => ({ status: res.statusCode, code: res.json().code, error: res.json().error });

async function threeWays(app: FastifyInstance, url: string, urlField: string, documentUrl: string, name: string, fields: Record<string, string>) {
  const byUrl = await app.inject({ method: 'POST', url, payload: { [urlField]: documentUrl, ...fields } });
  const byForm = await app.inject({ method: 'POST', url, headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` }, payload: emptyForm(name, fields) });
  const query = new URLSearchParams(fields).toString();
  const byRaw = await app.inject({
    method: 'POST',
    url: query ? `${url}?${query}` : url,
    headers: { 'content-type': 'application/octet-stream', 'content-disposition': `attachment; filename="${name}"` },
    payload: Buffer.alloc(0),
  });
  return { byUrl: answer(byUrl), byForm: answer(byForm), byRaw: answer(byRaw) };
}

t.test('per-document tools: upload and URL answer alike', async (t) => {
  const srv = await startStaticServer(t);
  const port = new URL(srv.origin).port;
  const app = await buildTestApp(t, { config: testConfig(t, { ALLOWED_HOSTS: `127.0.0.1:${port}` }) });
  const cases: Array<{ url: string; urlField: string; name: string; type: string; fields: Record<string, string>; expect: RegExp; status: number }> = [
    { url: '/v1/documents/process', urlField: 'document_url', name: 'empty.txt', type: 'text/plain', fields: {}, status: 422, expect: /^The document has no text/ },
    { url: '/v1/documents/chunk', urlField: 'document_url', name: 'empty.txt', type: 'text/plain', fields: {}, status: 422, expect: /^The document has no text/ },
    { url: '/v1/documents/retrieve', urlField: 'document_url', name: 'empty.txt', type: 'text/plain', fields: { query: 'anything' }, status: 422, expect: /^The document has no text/ },
    { url: '/v1/extract/pdf', urlField: 'document_url', name: 'empty.pdf', type: 'application/pdf', fields: {}, status: 415, expect: /the file is an empty file/ },
    { url: '/v1/extract/image', urlField: 'image_url', name: 'empty.png', type: 'image/png', fields: {}, status: 415, expect: /the file is an empty file/ },
  ];
  for (const c of cases) {
    const { byUrl, byForm, byRaw } = await threeWays(app, c.url, c.urlField, srv.add(c.name, Buffer.alloc(0), c.type), c.name, c.fields);
    t.equal(byUrl.status, c.status, `${c.url} by URL`);
    t.match(byUrl.error, c.expect, `${c.url} by URL: the message`);
    t.same(byForm, byUrl, `${c.url}: a multipart upload of the empty file answers as the URL does`);
    t.same(byRaw, byUrl, `${c.url}: a raw empty body answers as the URL does`);
  }
});

t.test('ingest: an empty upload becomes a job whose item ends as the same file by URL does', async (t) => {
  const srv = await startStaticServer(t);
  const port = new URL(srv.origin).port;
  const app = await buildTestApp(t, { config: testConfig(t, { ALLOWED_HOSTS: `127.0.0.1:${port}` }) });
  const byUrl = await app.inject({ method: 'POST', url: '/v1/collections/empty/documents', payload: { urls: [srv.add('empty.txt', Buffer.alloc(0), 'text/plain')], wait_seconds: 60 } });
  const byForm = await app.inject({
    method: 'POST',
    url: '/v1/collections/empty/documents',
    headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
    payload: emptyForm('empty.txt', { wait_seconds: '60' }),
  });
  t.equal(byUrl.statusCode, 202);
  t.equal(byForm.statusCode, 202, 'accepted, not 400');
  const urlItem = byUrl.json().items[0];
  const formItem = byForm.json().items[0];
  t.ok(['done', 'failed'].includes(urlItem.stage), `by URL: the job ran the item (${urlItem.stage})`);
  t.equal(formItem.stage, urlItem.stage, 'uploaded: the same stage');
  t.same(formItem.error, urlItem.error, 'and the same error');
  t.same(formItem.progress, urlItem.progress, 'and the same progress (pages, chunks)');
});
