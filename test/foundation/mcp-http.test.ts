/** MCP over a real listening server (127.0.0.1, port 0) with the SDK client. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FastifyInstance } from 'fastify';
import { buildTestApp } from '../helper.ts';
import { crashTool, uploadEchoTool } from './test-tools.ts';
import { captureLogs } from './log-capture.ts';

async function listen(app: FastifyInstance): Promise<URL> {
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as AddressInfo;
  return new URL(`http://127.0.0.1:${port}/mcp`);
}

async function connect(t: { teardown(fn: () => unknown): void }, url: URL, headers: Record<string, string> = {}) {
  const client = new Client({ name: 'foundation-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers } });
  await client.connect(transport);
  t.teardown(() => client.close());
  return client;
}

t.test('tools/list equals the REST operations of the MCP tools, with identical input schemas', async (t) => {
  const app = await buildTestApp(t, { extraTools: [uploadEchoTool] });
  const url = await listen(app);
  const client = await connect(t, url);
  const { tools } = await client.listTools();
  const doc = await (await fetch(new URL('/openapi.json', url))).json();

  const restOps = new Map<string, { method: string; op: Record<string, any> }>();
  for (const [, item] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
    for (const [method, op] of Object.entries(item)) if (op.tags?.[0] !== 'meta') restOps.set(op.operationId, { method, op });
  }
  // Every tool has its REST operation; REST-only ones (mcp: false) are not listed over MCP.
  for (const tool of app.tools) t.ok(restOps.has(tool.name), `${tool.name} is a REST operation`);
  t.same(
    tools.map((x) => x.name),
    app.tools.filter((x) => x.mcp !== false).map((x) => x.name),
    'registry order, REST-only tools left out',
  );
  t.ok(app.tools.some((x) => x.mcp === false), 'some tools are REST only');
  for (const tool of tools) {
    const { method, op } = restOps.get(tool.name)!;
    const declared = app.tools.find((x) => x.name === tool.name)!;
    const pathParams = [...declared.rest.path.matchAll(/:(\w+)/g)].map((m) => m[1]!);
    const props = (tool.inputSchema.properties ?? {}) as Record<string, unknown>;
    t.same(
      (op.parameters ?? []).filter((p: { in: string }) => p.in === 'path').map((p: { name: string }) => p.name),
      pathParams,
      `${tool.name}: path parameters`,
    );
    if (method === 'post') {
      const body = JSON.parse(JSON.stringify(tool.inputSchema));
      for (const p of pathParams) delete body.properties[p];
      if (body.required) body.required = body.required.filter((r: string) => !pathParams.includes(r));
      if (body.required?.length === 0) delete body.required;
      t.same(op.requestBody.content['application/json'].schema, body, `${tool.name}: request body schema = MCP inputSchema without the path parameters`);
    } else {
      t.same(
        (op.parameters ?? []).filter((p: { in: string }) => p.in === 'query').map((p: { name: string }) => p.name),
        Object.keys(props).filter((k) => !pathParams.includes(k)),
        `${tool.name}: query parameters = MCP input properties`,
      );
    }
    const status = String(declared.rest.status ?? 200);
    t.same(op.responses[status].content['application/json'].schema, tool.outputSchema, `${tool.name}: response schema = MCP outputSchema`);
    t.equal(tool.description, op.description);
  }
});

t.test('tools/call: structuredContent plus a text copy; errors as isError {error, code}', async (t) => {
  const logs = captureLogs();
  const app = await buildTestApp(t, { extraTools: [crashTool], logger: logs.logger });
  const url = await listen(app);
  const client = await connect(t, url, { 'x-request-id': 'mcp-trace-1' });

  const ok = await client.callTool({ name: 'get_system_health', arguments: {} });
  t.notOk(ok.isError);
  const structured = ok.structuredContent as Record<string, any>;
  t.equal(structured.status, 'ok');
  t.equal(structured.name, 'rag-document-server');
  const content = ok.content as { type: string; text: string }[];
  t.equal(content[0].type, 'text');
  t.same(JSON.parse(content[0].text), structured, 'the text is a copy of structuredContent');
  const start = logs.events('tool.start').find((l) => l.tool === 'get_system_health');
  t.equal(start?.request_id, 'mcp-trace-1', 'the tool call runs under the HTTP request id');
  t.equal(start?.transport, 'mcp');

  const clear = await client.callTool({ name: 'manage_cache', arguments: { action: 'clear', confirm: true } });
  // The three memory layers plus the persisted indexes (DATA_DIR/indexes) registered as a disk layer.
  t.same((clear.structuredContent as any).evicted, { download: 0, document: 0, retriever: 0, indexes: 0 });
  t.same(
    (clear.structuredContent as any).layers.map((l: { name: string }) => l.name),
    ['download', 'document', 'retriever', 'indexes'],
  );

  const invalid = await client.callTool({ name: 'manage_cache', arguments: { action: 'bogus' } });
  t.equal(invalid.isError, true);
  t.same(JSON.parse((invalid.content as any)[0].text), { error: 'action must be one of: "stats", "clear"', code: 'VALIDATION_ERROR', request_id: 'mcp-trace-1' });
  t.notOk(invalid.structuredContent);

  const unknown = await client.callTool({ name: 'no_such_tool', arguments: {} });
  t.equal(unknown.isError, true);
  t.equal(JSON.parse((unknown.content as any)[0].text).code, 'NOT_FOUND');

  const crash = await client.callTool({ name: 'test_crash', arguments: {} });
  t.equal(crash.isError, true);
  const body = JSON.parse((crash.content as any)[0].text);
  t.same([body.code, body.error], ['INTERNAL_ERROR', 'Internal server error']);
  t.notMatch((crash.content as any)[0].text, /secret/);
});

t.test('resources: supported formats and tool descriptions generated from the registry', async (t) => {
  const app = await buildTestApp(t, { extraTools: [uploadEchoTool] });
  const client = await connect(t, await listen(app));
  const { resources } = await client.listResources();
  t.same(
    resources.map((r) => r.uri),
    ['rag://supported-formats', 'rag://tool-descriptions', 'rag://collections'],
    'the knowledge base adds rag://collections (and one entry per collection: none yet)',
  );
  const formats = JSON.parse(((await client.readResource({ uri: 'rag://supported-formats' })).contents[0] as { text: string }).text);
  // Every format some registered tool reads, each with its readers in registry order (the test tool last).
  const docTools = ['process_document', 'chunk_document', 'retrieve_chunks'];
  t.same(
    formats.formats.map((f: { format: string; tools: string[] }) => [f.format, f.tools]),
    [
      ['pdf', [...docTools, 'extract_pdf_text']],
      ['docx', [...docTools, 'extract_docx_text']],
      ['pptx', [...docTools, 'extract_pptx_text']],
      ['xlsx', [...docTools, 'query_spreadsheet', 'extract_xlsx_tables']],
      ['xls', [...docTools, 'query_spreadsheet', 'extract_xlsx_tables']],
      ['csv', [...docTools, 'query_spreadsheet', 'extract_csv_tables', 'test_upload']],
      ['image', [...docTools, 'extract_image_text']],
      ['html', docTools],
      ['text', [...docTools, 'test_upload']],
    ],
  );
  const csv = formats.formats.find((f: { format: string }) => f.format === 'csv');
  // Every name detection accepts for CSV, from the one format table.
  t.same(csv.extensions, ['.csv', '.tsv', '.tab']);
  t.same(csv.media_types, ['text/csv', 'text/tab-separated-values', 'application/csv', 'text/comma-separated-values']);
  const described = JSON.parse(((await client.readResource({ uri: 'rag://tool-descriptions' })).contents[0] as { text: string }).text);
  t.same(
    described.tools.map((x: { name: string }) => x.name),
    app.tools.map((x) => x.name),
  );
  const upload = described.tools.find((x: { name: string }) => x.name === 'test_upload');
  t.same(upload.rest, { method: 'POST', path: '/v1/test/upload' });
  t.equal(upload.accepts_upload, true);
  t.equal(upload.timeout_seconds, 300);
  t.same(upload.input_schema, JSON.parse(JSON.stringify(uploadEchoTool.input)));
  await t.rejects(client.readResource({ uri: 'rag://nothing' }));
});

t.test('GET and DELETE /mcp answer 405; a foreign Host is refused on a loopback bind', async (t) => {
  const app = await buildTestApp(t);
  const url = await listen(app);
  for (const method of ['GET', 'DELETE']) {
    const res = await fetch(url, { method, headers: { accept: 'text/event-stream' } });
    t.equal(res.status, 405, method);
    t.equal(res.headers.get('allow'), 'POST');
    t.ok(res.headers.get('x-request-id'));
  }
  const status = await new Promise<number>((resolve, reject) => {
    const req = http.request(url, { method: 'POST', headers: { host: `rebound.example:${url.port}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }));
  });
  t.equal(status, 403);
  const wrongPort = await new Promise<number>((resolve, reject) => {
    const req = http.request(url, { method: 'GET', path: '/info', headers: { host: `localhost:${Number(url.port) + 1}` } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
  t.equal(wrongPort, 403, 'the port must be ours');
});

t.test('rate limit over MCP: the call past RATE_LIMIT_RPM gets HTTP 429', async (t) => {
  const app = await buildTestApp(t, { env: { RATE_LIMIT_RPM: '5' } });
  const client = await connect(t, await listen(app));
  for (let i = 0; i < 3; i++) await client.listTools();
  for (let i = 0; i < 5; i++) t.notOk((await client.callTool({ name: 'get_system_health', arguments: {} })).isError, `call ${i + 1}`);
  const err = await client.callTool({ name: 'get_system_health', arguments: {} }).catch((e) => e);
  t.ok(err instanceof StreamableHTTPError, 'the client sees an HTTP error');
  t.equal(err.code, 429);
  t.match(err.message, /RATE_LIMITED/);
});

t.test('auth applies to /mcp', async (t) => {
  const app = await buildTestApp(t, { env: { API_KEYS: 'secret-1' } });
  const url = await listen(app);
  const err = await connect(t, url).catch((e) => e);
  t.ok(err instanceof Error, 'no key: cannot connect');
  const client = await connect(t, url, { authorization: 'Bearer secret-1' });
  t.ok((await client.listTools()).tools.length >= 2);
});
