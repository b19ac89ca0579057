/**
 * The committed OpenAPI document is usable as is: every example is valid for its schema and works
 * when sent unchanged (the JSON examples, and for upload operations the multipart form Swagger UI
 * fills from the examples, plus a small generated file); upload forms offer the tool's real fields;
 * every error status is documented with the error body.
 *
 * No network: requests go through app.inject, and DNS answers 127.0.0.1 for every name. The
 * default address policy refuses loopback before a socket opens, so a URL example ends in 403
 * URL_NOT_ALLOWED once its input has been validated (and were the guard ever bypassed, the
 * connection would still stay on this machine).
 */
import dns from 'node:dns';
import { readFileSync } from 'node:fs';
import t from 'tap';
import Value from 'typebox/value';
import * as XLSX from 'xlsx';
import { buildTestApp, type Teardown } from '../helper.ts';
import { ERROR_STATUS, type ErrorCode } from '../../src/errors.ts';
import { OPENAPI_FILE } from '../../src/openapi.ts';
import type { AnyTool } from '../../src/tools/define-tool.ts';
import { OFFLINE_SUFFIX, SAMPLE_XLSX_UUID } from '../../src/tools/examples.ts';
import { tools } from '../../src/tools/index.ts';
import { ErrorBodySchema } from '../../src/tools/schemas.ts';
import { makeMultiPagePdf, makeTextImageAs } from '../fixtures-gen/make-pdf-fixtures.ts';
import { makeSampleDocx, makeSamplePptx } from '../fixtures-gen/make-office-fixtures.ts';

/* eslint-disable @typescript-eslint/no-explicit-any */
type Schema = Record<string, any>;
interface Media {
  schema: Schema;
  example?: unknown;
  examples?: Record<string, { summary?: string; value: unknown }>;
}
interface Operation {
  operationId: string;
  requestBody?: { content: Record<string, Media> };
  parameters?: { name: string; in: string; schema: Schema }[];
  responses: Record<string, any>;
}

const doc = JSON.parse(readFileSync(OPENAPI_FILE, 'utf8'));
const operations: { path: string; method: string; op: Operation }[] = Object.entries(doc.paths as Record<string, Record<string, Operation>>).flatMap(
  ([path, item]) => Object.entries(item).map(([method, op]) => ({ path, method, op })),
);
const opFor = (tool: AnyTool) => operations.find((o) => o.op.operationId === tool.name)!;
/**
 * The knowledge-base operations act on collections a fresh server does not have (their paths name
 * one), so no example of theirs could work as is: the README shows them with curl instead.
 */
const documentTools = tools.filter((x) => x.group !== 'knowledge_base');
const isKbOperation = (op: Operation) => tools.some((x) => x.name === op.operationId && x.group === 'knowledge_base') || op.operationId === 'job_events';
const URL_FIELDS = ['document_url', 'image_url', 'document_urls'];

const jsonExamples = (op: Operation) => Object.entries(op.requestBody?.content['application/json']?.examples ?? {});
const isUnionOfConsts = (s: Schema) => Array.isArray(s.anyOf) && s.anyOf.every((b: Schema) => 'const' in b);

t.test('every example is valid for its schema', async (t) => {
  let checked = 0;
  for (const { path, method, op } of operations) {
    for (const [type, media] of Object.entries(op.requestBody?.content ?? {})) {
      for (const [name, ex] of Object.entries(media.examples ?? {})) {
        t.ok(Value.Check(media.schema, ex.value), `${method} ${path} ${type} example ${name}`);
        t.ok(ex.summary, `${op.operationId} example ${name} has a summary`);
        checked++;
      }
      if ('example' in media) t.ok(Value.Check(media.schema, media.example), `${method} ${path} ${type} example`);
      for (const [field, prop] of Object.entries((media.schema.properties ?? {}) as Record<string, Schema>)) {
        for (const v of prop.examples ?? []) {
          t.ok(Value.Check(prop, v), `${method} ${path} ${type} field ${field} example ${JSON.stringify(v)}`);
          checked++;
        }
      }
    }
  }
  for (const [name, response] of Object.entries(doc.components.responses as Record<string, any>)) {
    const media = response.content['application/json'];
    t.same(media.schema, { $ref: '#/components/schemas/ErrorBody' }, `${name}: the error body`);
    const codes = name.split('_OR_') as ErrorCode[];
    t.same(Object.keys(media.examples), codes, `${name}: one example per code`);
    for (const code of codes) {
      t.ok(Value.Check(doc.components.schemas.ErrorBody, media.examples[code].value), `${name} example ${code}`);
      t.equal(media.examples[code].value.code, code);
      t.equal(ERROR_STATUS[code], ERROR_STATUS[codes[0]!], `${name}: one HTTP status`);
      checked++;
    }
  }
  t.ok(checked > 40, `${checked} examples checked`);
});

t.test('every tool with inputs has examples that are useful as is', async (t) => {
  for (const tool of documentTools) {
    const { op } = opFor(tool);
    const props = (tool.input.properties ?? {}) as Record<string, Schema>;
    if (Object.keys(props).length === 0) continue;
    const examples = jsonExamples(op);
    t.ok(examples.length > 0, `${tool.name} has a JSON example`);
    t.same(
      examples.map(([name]) => name),
      (tool.examples ?? []).map((e) => e.name),
      `${tool.name}: the declared examples, in order (the first is the default)`,
    );
    for (const [name, ex] of examples) {
      const value = ex.value as Record<string, unknown>;
      t.notOk('document_url' in value && 'document_urls' in value, `${tool.name}/${name}: one way to name the documents`);
      for (const [field, v] of Object.entries(value)) {
        const schema = props[field]!;
        // Swagger UI's own sample is the minimum (max_chars: 1 cuts the answer to one character).
        if (schema.type === 'integer' && !(tool.input.required ?? []).includes(field)) {
          t.not(v, schema.minimum, `${tool.name}/${name}: ${field} is not the bare minimum`);
        }
      }
      // The offline twins point at the demo's loopback file server: openapi-offline-examples.test.ts.
      if (name.endsWith(OFFLINE_SUFFIX)) continue;
      for (const url of URL_FIELDS.flatMap((f) => (value[f] === undefined ? [] : [value[f]].flat())) as string[]) {
        const u = new URL(url);
        t.equal(u.protocol, 'https:', `${tool.name}/${name}: ${url} is https`);
        t.notOk(/^[\d.]+$|^\[|localhost|(^|\.)example\.(com|org|net)$/i.test(u.hostname), `${tool.name}/${name}: ${u.hostname} is a real public host`);
      }
    }
  }
});

t.test('upload operations offer a multipart form with the file and the real fields only', async (t) => {
  for (const tool of tools.filter((x) => x.upload)) {
    const { op } = opFor(tool);
    const content = op.requestBody!.content;
    t.same(Object.keys(content), ['application/json', 'multipart/form-data', 'application/octet-stream'], tool.name);
    const form = content['multipart/form-data']!.schema;
    // Path parameters (ingest_documents' collection name) travel in the path, never in the form.
    const inPath = [...tool.rest.path.matchAll(/:(\w+)/g)].map((m) => m[1]!);
    const notWithFile = [tool.upload!.urlField, ...(tool.upload!.alsoUrlFields ?? []), ...inPath];
    const fields = Object.keys(tool.input.properties).filter((f) => !notWithFile.includes(f));
    t.same(Object.keys(form.properties), ['file', ...fields], `${tool.name}: file, then the other input fields`);
    t.match(form.properties.file, { type: 'string', format: 'binary' }, `${tool.name}: file is binary (a file picker)`);
    t.same(form.required, ['file', ...((tool.input.required ?? []) as string[]).filter((f) => fields.includes(f))], `${tool.name}: required`);
    t.equal(form.additionalProperties, false, `${tool.name}: no other form fields`);
    t.same(
      (op.parameters ?? []).filter((p) => p.in === 'query').map((p) => [p.name, p.in]),
      fields.map((f) => [f, 'query']),
      `${tool.name}: the raw-body querystring has the same fields`,
    );
    // Swagger UI pre-fills every form field with its example, else its default, else a sample.
    for (const field of fields) {
      const prop = form.properties[field] as Schema;
      if (isUnionOfConsts(prop) || (tool.input.required ?? []).includes(field)) continue;
      t.ok(prop.examples !== undefined || prop.default !== undefined, `${tool.name}: optional field ${field} has an example or default`);
    }
  }
});

t.test('every error status is documented with the error body; servers is the serving server', async (t) => {
  t.same(doc.components.schemas.ErrorBody, JSON.parse(JSON.stringify(ErrorBodySchema)));
  t.same(doc.servers.map((s: { url: string }) => s.url), ['/'], 'relative: Try it out calls the server that serves the document');
  for (const { path, method, op } of operations) {
    const statuses = Object.keys(op.responses);
    t.notOk(statuses.some((s) => /^[1-5]xx$/i.test(s)), `${method} ${path}: no status ranges`);
    for (const status of statuses.filter((s) => Number(s) >= 400)) {
      const response = op.responses[status];
      const ref: string | undefined = response.$ref;
      if (ref) {
        const name = ref.replace('#/components/responses/', '');
        t.ok(doc.components.responses[name], `${method} ${path} ${status}: ${name} exists`);
        for (const code of name.split('_OR_') as ErrorCode[]) t.equal(ERROR_STATUS[code], Number(status), `${method} ${path} ${status}: ${code}`);
      } else {
        // /mcp (JSON-RPC errors from the transport) and /health 503 (the health body) add alternatives.
        t.ok(response.description, `${method} ${path} ${status} is described`);
        const schema = JSON.stringify(response.content?.['application/json']?.schema ?? {});
        if (status !== '406') t.ok(schema.includes('"#/components/schemas/ErrorBody"'), `${method} ${path} ${status}: the error body is an answer`);
      }
    }
    if (method === 'get') t.notOk(statuses.includes('413') || statuses.includes('415'), `${method} ${path}: no request body, no 413/415`);
    if (path !== '/health') t.ok(statuses.includes('401') && statuses.includes('429'), `${method} ${path}: behind auth and the rate limit`);
  }
  for (const tool of tools) {
    const statuses = Object.keys(opFor(tool).op.responses);
    t.ok(statuses.includes('504'), `${tool.name}: its timeout class`);
    if (tool.upload) {
      for (const s of ['400', '403', '413', '415', '422', '502']) t.ok(statuses.includes(s), `${tool.name} documents ${s}`);
    } else if (tool.group === 'knowledge_base') {
      // A collection, document or job that does not exist.
      t.ok(statuses.includes('404'), `${tool.name} documents 404`);
    } else {
      t.notOk(statuses.includes('502') || statuses.includes('422'), `${tool.name} fetches and parses no document`);
    }
  }
});

/** Every hostname resolves to 127.0.0.1 while the test runs; the names asked are recorded. */
function fakeDns(t: Teardown): string[] {
  const asked: string[] = [];
  const original = dns.promises.lookup;
  dns.promises.lookup = (async (hostname: string) => {
    asked.push(hostname);
    return [{ address: '127.0.0.1', family: 4 }];
  }) as unknown as typeof dns.promises.lookup;
  t.teardown(() => {
    dns.promises.lookup = original;
  });
  return asked;
}

/** The generated file uploaded for each document kind (content that matches the examples). */
async function sampleFiles(): Promise<Record<string, { bytes: Buffer; name: string; type: string }>> {
  const rows = [
    ['Alpha', 'Beta', 'Gamma', 'Delta'],
    [89, 'first entry', 100, 12],
    [58, SAMPLE_XLSX_UUID, 22, 9],
  ];
  const wb = XLSX.utils.book_new();
  XLSX.utils.book_append_sheet(wb, XLSX.utils.aoa_to_sheet(rows), 'Sheet1');
  return {
    pdf: { bytes: await makeMultiPagePdf(), name: 'report.pdf', type: 'application/pdf' },
    docx: { bytes: await makeSampleDocx(), name: 'report.docx', type: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document' },
    pptx: { bytes: await makeSamplePptx(), name: 'deck.pptx', type: 'application/vnd.openxmlformats-officedocument.presentationml.presentation' },
    xlsx: { bytes: XLSX.write(wb, { type: 'buffer', bookType: 'xlsx' }) as Buffer, name: 'sheet.xlsx', type: 'application/octet-stream' },
    csv: { bytes: Buffer.from(rows.map((r) => r.join(';')).join('\n') + '\n'), name: 'rows.csv', type: 'text/csv' },
    image: { bytes: await makeTextImageAs('png', ['HERON COUNT 2024']), name: 'count.png', type: 'image/png' },
  };
}

/** A multipart body exactly as a browser sends Swagger UI's form. */
async function multipart(fields: Record<string, unknown>, file: { bytes: Buffer; name: string; type: string }) {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, String(v));
  form.append('file', new Blob([new Uint8Array(file.bytes)], { type: file.type }), file.name);
  const req = new Request('http://localhost/', { method: 'POST', body: form });
  return { payload: Buffer.from(await req.arrayBuffer()), headers: { 'content-type': req.headers.get('content-type')! } };
}

t.test('every example works as is: JSON examples and the upload forms, never a 400', async (t) => {
  const asked = fakeDns(t);
  const app = await buildTestApp(t);
  const files = await sampleFiles();

  for (const { path, method, op } of operations.filter((o) => !isKbOperation(o.op))) {
    const documented = Object.keys(op.responses);
    for (const [name, ex] of jsonExamples(op)) {
      const value = ex.value as Record<string, unknown>;
      const res = await app.inject({ method: method.toUpperCase() as 'POST', url: path, payload: value as object });
      const label = `${op.operationId}/${name}: ${res.statusCode} ${res.body.slice(0, 200)}`;
      t.not(res.statusCode, 400, label);
      t.ok(res.statusCode < 300 || documented.includes(String(res.statusCode)), `${label} (2xx or documented)`);
      if (URL_FIELDS.some((f) => f in value)) {
        // Validated, then refused at connection time: the fake DNS said 127.0.0.1.
        t.equal(res.statusCode, 403, label);
        t.equal(res.json().code, 'URL_NOT_ALLOWED', label);
      } else {
        t.equal(res.statusCode, 200, label);
      }
    }

    const form = op.requestBody?.content['multipart/form-data'];
    if (!form) continue;
    const tool = tools.find((x) => x.name === op.operationId)!;
    const kind = tool.formats!.find((f) => f in files)!;
    const fields = Object.fromEntries(
      Object.entries(form.schema.properties as Record<string, Schema>).flatMap(([field, prop]) => (prop.examples ? [[field, prop.examples[0]]] : [])),
    );
    const res = await app.inject({ method: 'POST', url: path, ...(await multipart(fields, files[kind]!)) });
    t.equal(res.statusCode, 200, `${op.operationId} form ${JSON.stringify(fields)} with a ${kind} file: ${res.statusCode} ${res.body.slice(0, 200)}`);
  }
  t.ok(asked.length > 0 && asked.every((h) => h === 'raw.githubusercontent.com'), `only the examples' host was looked up: ${[...new Set(asked)]}`);
});
