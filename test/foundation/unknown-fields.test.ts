/**
 * REST and MCP agree on unknown input fields, as the published schemas say (additionalProperties:
 * false): a field the tool does not know is refused with VALIDATION_ERROR naming it, never
 * dropped silently. REST: JSON bodies, querystrings, multipart forms and raw-body querystrings;
 * MCP: tools/call answers isError with the same message.
 */
import type { InjectOptions } from 'fastify';
import t from 'tap';
import { buildTestApp } from '../helper.ts';
import { uploadEchoTool } from './test-tools.ts';
import { tools } from '../../src/tools/index.ts';

const CSV = Buffer.from('name,score\nada,3\n');

async function multipart(fields: Record<string, string>, file?: { name: string; type: string; bytes: Buffer }) {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  if (file) form.append('file', new Blob([new Uint8Array(file.bytes)], { type: file.type }), file.name);
  const req = new Request('http://localhost/', { method: 'POST', body: form });
  return { payload: Buffer.from(await req.arrayBuffer()), headers: { 'content-type': req.headers.get('content-type')! } };
}

t.test('every tool input schema refuses unknown fields, as REST and MCP publish it', async (t) => {
  for (const tool of tools) t.equal((tool.input as { additionalProperties?: unknown }).additionalProperties, false, tool.name);
});

t.test('REST: 400 VALIDATION_ERROR naming the unknown field, for every way input arrives', async (t) => {
  const app = await buildTestApp(t, { extraTools: [uploadEchoTool] });
  const file = { name: 'a.csv', type: 'text/csv', bytes: CSV };
  const cases: [string, InjectOptions, string][] = [
    ['JSON body', { method: 'POST', url: '/v1/language/detect', payload: { text: 'hello there', lang: 'en' } }, 'body/lang is not a known field (known fields: text)'],
    ['JSON body, several', { method: 'POST', url: '/v1/cache', payload: { action: 'stats', force: true, all: 1 } }, 'body/force is not a known field (known fields: action, confirm; also unknown: all)'],
    ['querystring', { method: 'GET', url: '/v1/system/health?verbose=1' }, 'querystring/verbose is not a known field (this object takes no fields)'],
    [
      'JSON body on an upload route',
      { method: 'POST', url: '/v1/test/upload', payload: { document_url: 'https://example.com/a.csv', topk: 3 } },
      'body/topk is not a known field (known fields: document_url, query, top_k)',
    ],
    ['multipart form', { method: 'POST', url: '/v1/test/upload', ...(await multipart({ query: 'ada', topk: '3' }, file)) }, 'body/topk is not a known field (known fields: query, top_k)'],
    [
      'multipart form without a file',
      { method: 'POST', url: '/v1/test/upload', ...(await multipart({ document_url: 'https://example.com/a.csv', topk: '3' })) },
      'body/topk is not a known field (known fields: document_url, query, top_k)',
    ],
    [
      'raw body querystring',
      { method: 'POST', url: '/v1/test/upload?query=ada&topk=3', headers: { 'content-type': 'text/csv' }, payload: CSV },
      'querystring/topk is not a known field (known fields: query, top_k)',
    ],
  ];
  for (const [label, request, message] of cases) {
    const res = await app.inject(request);
    t.equal(res.statusCode, 400, `${label}: ${res.body}`);
    t.same(res.json(), { error: message, code: 'VALIDATION_ERROR', request_id: res.headers['x-request-id'] }, label);
  }

  const ok = await app.inject({ method: 'POST', url: '/v1/test/upload', ...(await multipart({ document_url: '', query: 'ada' }, file)) });
  t.equal(ok.statusCode, 200, `an empty URL field next to the file means no URL: ${ok.body}`);
  t.equal(ok.json().document_url, null);
});

t.test('MCP: tools/call with an unknown field is isError VALIDATION_ERROR with the same message', async (t) => {
  const app = await buildTestApp(t);
  const call = async (id: number, name: string, args: Record<string, unknown>) => {
    const res = await app.inject({
      method: 'POST',
      url: '/mcp',
      headers: { accept: 'application/json, text/event-stream', 'content-type': 'application/json', 'x-request-id': `unknown-${id}` },
      payload: { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } },
    });
    t.equal(res.statusCode, 200, res.body);
    return res.json().result as { isError?: boolean; content: { text: string }[] };
  };
  const refused = await call(1, 'detect_language', { text: 'hello there', lang: 'en' });
  t.equal(refused.isError, true);
  t.same(JSON.parse(refused.content[0]!.text), { error: 'lang is not a known field (known fields: text)', code: 'VALIDATION_ERROR', request_id: 'unknown-1' });

  const accepted = await call(2, 'detect_language', { text: 'Ceci est un petit texte en français.' });
  t.notOk(accepted.isError, 'known fields only: served');
});
