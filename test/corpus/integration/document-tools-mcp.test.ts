/**
 * Document tools over MCP (Streamable HTTP) on a real listening server at 127.0.0.1 with the SDK
 * client, on real corpus files: structuredContent equals what REST returns for the same call, coded
 * errors come back as isError {error, code}. test/integration/document-tools-mcp.test.ts does the
 * same on generated files.
 */
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FastifyInstance } from 'fastify';
import { buildTestApp, testConfig, type Teardown } from '../../helper.ts';
import { buildLocalApp, startStaticServer } from '../../integration/helpers.ts';
import { CORPUS_DIR } from '../data-dirs.ts';

async function mcpClient(t: Teardown, app: FastifyInstance): Promise<Client> {
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as AddressInfo;
  const client = new Client({ name: 'integration-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)));
  t.teardown(() => client.close());
  return client;
}

/** The same call over REST on the listening server (a real HTTP request, so the Host is ours). */
async function post(app: FastifyInstance, route: string, payload: object) {
  const { port } = app.server.address() as AddressInfo;
  const res = await fetch(`http://127.0.0.1:${port}${route}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(payload) });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

type CallResult = Awaited<ReturnType<Client['callTool']>>;
const structured = (r: CallResult) => r.structuredContent as Record<string, any>;
const errorOf = (r: CallResult) => JSON.parse((r.content as Array<{ text: string }>)[0]!.text) as { error: string; code: string };
/** What may differ between two calls of retrieve_chunks: how long it took and where the index came from. */
const stable = (out: Record<string, any>) => ({
  ...out,
  timings_ms: undefined,
  retrieval: { ...out.retrieval, timings: undefined, documents: out.retrieval.documents.map((d: object) => ({ ...d, index: undefined })) },
});

t.test('document tools over MCP return structuredContent equal to REST', async (t) => {
  const srv = await startStaticServer(t, CORPUS_DIR);
  const app = await buildLocalApp(t);
  const client = await mcpClient(t, app);

  const tools = (await client.listTools()).tools.map((x) => x.name);
  for (const name of ['process_document', 'chunk_document', 'retrieve_chunks', 'query_spreadsheet', 'extract_csv_tables']) t.ok(tools.includes(name), name);

  const calls: Array<[string, string, Record<string, unknown>]> = [
    ['process_document', '/v1/documents/process', { document_url: srv.url('html/test_blog.html') }],
    ['query_spreadsheet', '/v1/spreadsheets/query', { document_url: srv.url('csv/csv-semicolon.csv'), search_value: 'chile' }],
    ['extract_xlsx_tables', '/v1/extract/xlsx', { document_url: srv.url('xlsx/test.xlsx') }],
    ['chunk_document', '/v1/documents/chunk', { document_url: srv.url('pdf/REPAIR-2022-INV-001_multipage.pdf'), max_chunks: 3 }],
  ];
  for (const [name, route, args] of calls) {
    const res = await client.callTool({ name, arguments: args });
    t.notOk(res.isError, `${name} succeeded`);
    const rest = await post(app, route, args);
    t.equal(rest.status, 200);
    t.same(structured(res), rest.body, `${name}: MCP structuredContent = REST body`);
    t.same(JSON.parse((res.content as Array<{ text: string }>)[0]!.text), structured(res), `${name}: text copy`);
  }

  const blog = structured(await client.callTool({ name: 'process_document', arguments: { document_url: srv.url('html/test_blog.html') } }));
  t.equal(blog.document_type, 'html');
  t.ok(blog.content.includes('an example where high cost can easily prevent a generic complex'));
  const chile = structured(await client.callTool({ name: 'query_spreadsheet', arguments: { document_url: srv.url('csv/csv-semicolon.csv'), search_value: 'chile' } }));
  t.equal(chile.match_count, 1);
  t.match(chile.matches[0].row, { Country: 'Chile', 'First Name': 'Sheryl', City: 'East Leonard' });

  const args = { document_url: srv.url('pdf/REPAIR-2022-INV-001_multipage.pdf'), query: 'Bruce Wayne Batmobile', top_k: 2 };
  const viaMcp = await client.callTool({ name: 'retrieve_chunks', arguments: args });
  t.notOk(viaMcp.isError);
  const m = structured(viaMcp);
  t.equal(m.results.length, 1, 'only one chunk holds the query terms');
  t.match(m.results[0].text, /Bruce Wayne/);
  t.same([m.results[0].page_start, m.results[0].page_end], [2, 2], 'the second estimate is on page 2');
  t.equal(m.retrieval.mode, 'lexical');
  const viaRest = await post(app, '/v1/documents/retrieve', args);
  t.same(stable(m), stable(viaRest.body), 'retrieve_chunks: same answer over both transports');
  t.same(viaRest.body.retrieval.documents.map((d: { index: string }) => d.index), ['memory']);

  for (const rel of ['html/test_blog.html', 'csv/csv-semicolon.csv', 'xlsx/test.xlsx', 'pdf/REPAIR-2022-INV-001_multipage.pdf']) {
    t.equal(srv.hits(rel), 1, `${rel}: one download for every call over both transports`);
  }
});

t.test('coded errors over MCP: wrong kind, validation, refused URL', async (t) => {
  const srv = await startStaticServer(t, CORPUS_DIR);
  const app = await buildLocalApp(t);
  const client = await mcpClient(t, app);

  const wrong = await client.callTool({ name: 'extract_pdf_text', arguments: { document_url: srv.url('docx/test.docx') } });
  t.equal(wrong.isError, true);
  t.match(errorOf(wrong), {
    code: 'UNSUPPORTED_FORMAT',
    error: 'Unsupported format for this tool: expected a PDF document, but the file is a Word document (DOCX)',
  });
  t.notOk(wrong.structuredContent);

  const invalid = await client.callTool({ name: 'retrieve_chunks', arguments: { document_url: srv.url('pdf/test.pdf'), query: 'x', top_k: 50 } });
  t.equal(invalid.isError, true);
  t.match(errorOf(invalid), { code: 'VALIDATION_ERROR', error: /top_k must be <= 20/ });

  const strict = await buildTestApp(t, { config: testConfig(t) });
  const strictClient = await mcpClient(t, strict);
  const refused = await strictClient.callTool({ name: 'process_document', arguments: { document_url: srv.url('pdf/test.pdf') } });
  t.equal(refused.isError, true);
  t.equal(errorOf(refused).code, 'URL_NOT_ALLOWED');
  t.equal(srv.hits('pdf/test.pdf'), 0, 'the refused URL was never requested');
});
