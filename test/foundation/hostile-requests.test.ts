/**
 * Hostile request bodies over REST and /mcp: each gets a coded 4xx (never a 500, never a raw
 * message), and the server answers a normal call right after. Nesting is bounded before
 * validation (src/json-limits.ts), multipart failures are worded by src/tools/upload-input.ts.
 */
import t, { type Test } from 'tap';
import type { FastifyInstance } from 'fastify';
import { buildTestApp } from '../helper.ts';
import { checkInput } from '../../src/tools/validate-input.ts';
import { detectLanguageTool } from '../../src/tools/detect-language.ts';
import { retrieveChunksTool } from '../../src/tools/retrieve-chunks.ts';
import { MAX_JSON_DEPTH } from '../../src/json-limits.ts';

const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const JSON_HEADERS = { 'content-type': 'application/json' };
const BOUNDARY = 'hostile-boundary-1b2c';
const FORM_HEADERS = { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` };
const ENGLISH = 'The quick brown fox jumps over the lazy dog while the children watch from the garden.';

const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
const filePart = (name: string, type: string, body: string) =>
  `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: ${type}\r\n\r\n${body}\r\n`;
const fieldPart = (name: string, value: string) => `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
const CSV = 'name,score\nada,3\ngrace,5\n';

interface Expect {
  status: number;
  code: string;
  message?: RegExp;
}

function assertCoded(t: Test, res: { statusCode: number; body: string }, want: Expect, what: string) {
  t.equal(res.statusCode, want.status, `${what}: status (${res.body.slice(0, 200)})`);
  const body = JSON.parse(res.body) as { error: string; code: string; request_id: string };
  t.equal(body.code, want.code, `${what}: code`);
  t.type(body.request_id, 'string', `${what}: request_id`);
  if (want.message) t.match(body.error, want.message, `${what}: message`);
  t.notMatch(body.error, /Maximum call stack|at .*\.(js|ts):\d+|\/work\/|node_modules/, `${what}: no internals in the message`);
}

/** A normal REST call and a normal MCP tools/call, both answered. */
async function assertStillServing(t: Test, app: FastifyInstance, what: string) {
  const rest = await app.inject({ method: 'POST', url: '/v1/language/detect', headers: JSON_HEADERS, payload: { text: ENGLISH } });
  t.equal(rest.statusCode, 200, `${what}: REST still answers`);
  t.equal(rest.json().language_code, 'en');
  const mcp = await app.inject({
    method: 'POST',
    url: '/mcp',
    headers: MCP_HEADERS,
    payload: { jsonrpc: '2.0', id: 99, method: 'tools/call', params: { name: 'detect_language', arguments: { text: ENGLISH } } },
  });
  t.equal(mcp.statusCode, 200, `${what}: MCP still answers`);
  t.equal(mcp.json().result.structuredContent.language_code, 'en');
}

t.test('JSON nested 100,000 deep: 400 VALIDATION_ERROR on a tool route, an upload route and /mcp', async (t) => {
  const app = await buildTestApp(t);
  const tooDeep = { status: 400, code: 'VALIDATION_ERROR', message: new RegExp(`nested too deeply.*${MAX_JSON_DEPTH} levels`) };
  const cases: [string, string, Record<string, string>][] = [
    ['/v1/language/detect', `{"text":${nested(100_000)}}`, JSON_HEADERS],
    ['/v1/documents/process', `{"document_url":${nested(100_000)}}`, JSON_HEADERS],
    ['/mcp', nested(100_000), MCP_HEADERS],
    [
      '/mcp',
      `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"detect_language","arguments":${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}}}`,
      MCP_HEADERS,
    ],
  ];
  for (const [url, payload, headers] of cases) {
    t.ok(payload.length < 2 * 1024 * 1024, 'under the body limit');
    assertCoded(t, await app.inject({ method: 'POST', url, payload, headers }), tooDeep, `deep JSON on ${url}`);
  }
  // Just past the limit is refused, at the limit the schema decides (text must be a string).
  assertCoded(t, await app.inject({ method: 'POST', url: '/v1/language/detect', headers: JSON_HEADERS, payload: `{"text":${nested(MAX_JSON_DEPTH)}}` }), tooDeep, 'one level over');
  assertCoded(
    t,
    await app.inject({ method: 'POST', url: '/v1/language/detect', headers: JSON_HEADERS, payload: `{"text":${nested(MAX_JSON_DEPTH - 1)}}` }),
    { status: 400, code: 'VALIDATION_ERROR', message: /^body\/text must be string$/ },
    'at the limit',
  );
  // Brackets inside strings are text, not nesting, escaped quotes and backslashes included.
  const text = `${ENGLISH} "quoted [[" \\ ${'[{'.repeat(200)} \\"[[ \\\\`;
  const brackets = await app.inject({ method: 'POST', url: '/v1/language/detect', headers: JSON_HEADERS, payload: { text } });
  t.equal(brackets.statusCode, 200, `brackets inside a string do not count (${brackets.body.slice(0, 200)})`);
  await assertStillServing(t, app, 'after deep JSON');
});

t.test('checkInput turns a stack overflow into an input issue for callers that do not bound depth', async (t) => {
  let deep: unknown = 'x';
  for (let i = 0; i < 200_000; i++) deep = [deep];
  // A schema with defaults copies the input before filling them in: the copy is what overflows.
  const withDefaults = checkInput(retrieveChunksTool.input, { document_url: 'https://example.com/a.pdf', query: 'q', top_k: deep });
  t.equal(withDefaults.ok, false);
  if (!withDefaults.ok) t.match(withDefaults.issue.message, /nested too deeply/);
  // Without defaults nothing is copied; the value is refused for its type without recursing.
  const plain = checkInput(detectLanguageTool.input, { text: deep });
  t.equal(plain.ok, false);
  if (!plain.ok) t.match(plain.issue, { instancePath: '/text', message: 'must be string' });
});

t.test('oversized, malformed, empty and wrongly typed JSON bodies', async (t) => {
  const app = await buildTestApp(t, { env: { MAX_UPLOAD_BYTES: '4096' } });
  const big = `{"text":"${'a'.repeat(3 * 1024 * 1024)}"}`;
  const tooLarge = { status: 413, code: 'PAYLOAD_TOO_LARGE', message: /JSON bodies up to 2 MiB/ };
  assertCoded(t, await app.inject({ method: 'POST', url: '/v1/language/detect', headers: JSON_HEADERS, payload: big }), tooLarge, 'oversized JSON on a tool route');
  assertCoded(t, await app.inject({ method: 'POST', url: '/mcp', headers: MCP_HEADERS, payload: big }), tooLarge, 'oversized JSON on /mcp');
  assertCoded(
    t,
    await app.inject({ method: 'POST', url: '/v1/extract/csv', headers: { 'content-type': 'text/csv' }, payload: 'a,b\n'.repeat(2000) }),
    { status: 413, code: 'PAYLOAD_TOO_LARGE', message: /MAX_UPLOAD_BYTES \(4096 bytes\)/ },
    'oversized raw upload',
  );
  assertCoded(
    t,
    await app.inject({ method: 'POST', url: '/v1/language/detect', headers: JSON_HEADERS, payload: '{"text": "unterminated' }),
    { status: 400, code: 'VALIDATION_ERROR', message: /^body is not valid JSON$/ },
    'malformed JSON',
  );
  assertCoded(
    t,
    await app.inject({ method: 'POST', url: '/v1/language/detect', headers: JSON_HEADERS, payload: '' }),
    { status: 400, code: 'VALIDATION_ERROR', message: /must not be empty/ },
    'empty JSON body',
  );
  assertCoded(
    t,
    await app.inject({ method: 'POST', url: '/v1/language/detect', headers: JSON_HEADERS, payload: '{"__proto__":{"x":1},"text":"hi"}' }),
    { status: 400, code: 'VALIDATION_ERROR' },
    'prototype poisoning',
  );
  for (const url of ['/v1/language/detect', '/mcp']) {
    assertCoded(
      t,
      await app.inject({ method: 'POST', url, headers: { 'content-type': 'application/xml', accept: MCP_HEADERS.accept }, payload: '<text>hi</text>' }),
      { status: 415, code: 'UNSUPPORTED_FORMAT', message: /^Unsupported Content-Type "application\/xml": send application\/json$/ },
      `XML on ${url}`,
    );
  }
  assertCoded(
    t,
    await app.inject({ method: 'POST', url: '/v1/language/detect', headers: { 'content-type': 'text/plain' }, payload: ENGLISH }),
    { status: 400, code: 'VALIDATION_ERROR', message: /^body must be object$/ },
    'text/plain on a JSON route',
  );
  // A URL the router cannot decode never reaches the error handler; it still gets the coded body.
  assertCoded(
    t,
    await app.inject({ method: 'POST', url: '/v1/language/%zz', headers: JSON_HEADERS, payload: { text: ENGLISH } }),
    { status: 400, code: 'VALIDATION_ERROR', message: /^URL path "\/v1\/language\/%zz" is not valid \(malformed percent-encoding\)$/ },
    'malformed percent-encoding in the path',
  );
  await assertStillServing(t, app, 'after bad bodies');
});

t.test('bad multipart on the upload routes: coded 4xx with a clear message', async (t) => {
  const app = await buildTestApp(t, { env: { MAX_UPLOAD_BYTES: '4096' } });
  const notMultipart = (reason: RegExp) => ({ status: 400, code: 'VALIDATION_ERROR', message: new RegExp(`^body is not a valid multipart/form-data request \\(${reason.source}\\)`) });
  const cases: [string, string | Buffer, Record<string, string>, Expect][] = [
    ['no boundary', filePart('a.csv', 'text/csv', CSV), { 'content-type': 'multipart/form-data' }, notMultipart(/Content-Type has no boundary parameter/)],
    ['a boundary too long', filePart('a.csv', 'text/csv', CSV), { 'content-type': `multipart/form-data; boundary=${'b'.repeat(300)}` }, notMultipart(/the boundary parameter must be 1 to 70 characters/)],
    ['truncated', `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="a.csv"\r\nContent-Type: text/csv\r\n\r\nname,score\nada,`, FORM_HEADERS, notMultipart(/the body ends before the closing boundary/)],
    ['truncated in a header', `--${BOUNDARY}\r\nContent-Disposition: form-da`, FORM_HEADERS, notMultipart(/the body ends before the closing boundary/)],
    ['garbage', Buffer.from(Array.from({ length: 4000 }, (_, i) => (i * 7919) % 256)), FORM_HEADERS, { status: 400, code: 'VALIDATION_ERROR', message: /^body is not a valid multipart\/form-data request/ }],
    [
      'a file over MAX_UPLOAD_BYTES',
      `${filePart('a.csv', 'text/csv', 'a,b\n'.repeat(2000))}--${BOUNDARY}--\r\n`,
      FORM_HEADERS,
      { status: 413, code: 'PAYLOAD_TOO_LARGE', message: /^body\/file is larger than MAX_UPLOAD_BYTES \(4096 bytes\)$/ },
    ],
    [
      'too many fields',
      `${Array.from({ length: 40 }, (_, i) => fieldPart(`f${i}`, 'v')).join('')}--${BOUNDARY}--\r\n`,
      FORM_HEADERS,
      { status: 413, code: 'PAYLOAD_TOO_LARGE', message: /^the form has more than 32 fields$/ },
    ],
    [
      'a field over 1 MiB',
      `${fieldPart('note', 'x'.repeat(1024 * 1024 + 10))}--${BOUNDARY}--\r\n`,
      FORM_HEADERS,
      { status: 413, code: 'PAYLOAD_TOO_LARGE', message: /^body\/note is longer than 1048576 bytes$/ },
    ],
    [
      'a field named __proto__',
      `${fieldPart('__proto__', 'x')}--${BOUNDARY}--\r\n`,
      FORM_HEADERS,
      { status: 400, code: 'VALIDATION_ERROR', message: /Object\.prototype property/ },
    ],
    [
      'two files',
      `${filePart('a.csv', 'text/csv', CSV)}${filePart('b.csv', 'text/csv', CSV)}--${BOUNDARY}--\r\n`,
      FORM_HEADERS,
      { status: 400, code: 'VALIDATION_ERROR', message: /one file per call/ },
    ],
  ];
  for (const url of ['/v1/extract/csv', '/v1/documents/process']) {
    for (const [what, payload, headers, want] of cases) {
      assertCoded(t, await app.inject({ method: 'POST', url, payload, headers }), want, `${url}: ${what}`);
    }
  }
  const ok = await app.inject({ method: 'POST', url: '/v1/extract/csv', headers: FORM_HEADERS, payload: `${filePart('scores.csv', 'text/csv', CSV)}--${BOUNDARY}--\r\n` });
  t.equal(ok.statusCode, 200, `a good form is still read (${ok.body.slice(0, 200)})`);
  t.equal(ok.json().table_count, 1);
  await assertStillServing(t, app, 'after bad multipart');
});

t.test('MCP: malformed params get -32602 naming the field, not -32603 with a raw message', async (t) => {
  const app = await buildTestApp(t);
  const rpc = async (body: unknown) => (await app.inject({ method: 'POST', url: '/mcp', headers: MCP_HEADERS, payload: body as object })).json();
  const cases: [unknown, RegExp][] = [
    [{ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 5, arguments: {} } }, /^Invalid params for tools\/call: params\.name: expected string, received number$/],
    [{ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'detect_language', arguments: 'hello' } }, /^Invalid params for tools\/call: params\.arguments: expected object/],
    [{ jsonrpc: '2.0', id: 3, method: 'tools/call' }, /^Invalid params for tools\/call: params: expected object/],
    [{ jsonrpc: '2.0', id: 4, method: 'resources/read', params: {} }, /^Invalid params for resources\/read: params\.uri: expected string/],
    [{ jsonrpc: '2.0', id: 5, method: 'initialize', params: { protocolVersion: 5 } }, /^Invalid params for initialize: params\.protocolVersion: expected string/],
  ];
  for (const [body, message] of cases) {
    const res = await rpc(body);
    t.equal(res.id, (body as { id: number }).id);
    t.equal(res.error?.code, -32602, JSON.stringify(res));
    t.match(res.error?.message, message);
    t.notMatch(res.error?.message, /\n/, 'one line');
  }
  // In a batch, the malformed request is answered -32602 and the good one normally.
  const batch = await rpc([
    { jsonrpc: '2.0', id: 10, method: 'tools/call', params: { name: [], arguments: {} } },
    { jsonrpc: '2.0', id: 11, method: 'tools/call', params: { name: 'detect_language', arguments: { text: ENGLISH } } },
  ]);
  const byId = new Map((batch as { id: number }[]).map((m) => [m.id, m as { error?: { code: number }; result?: { structuredContent: { language_code: string } } }]));
  t.equal(byId.get(10)?.error?.code, -32602);
  t.equal(byId.get(11)?.result?.structuredContent.language_code, 'en');
  // Arguments that do not fit the tool's schema stay a tool error the model can correct.
  const bad = await rpc({ jsonrpc: '2.0', id: 12, method: 'tools/call', params: { name: 'detect_language', arguments: { text: 5 } } });
  t.equal(bad.result.isError, true);
  t.equal(JSON.parse(bad.result.content[0].text).code, 'VALIDATION_ERROR');
  await assertStillServing(t, app, 'after bad params');
});
