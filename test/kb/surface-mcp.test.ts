/**
 * The knowledge base over MCP (Streamable HTTP on 127.0.0.1:0, the SDK client): tools/list has the
 * six KB tools with honest annotations and not the REST-only ones, ingest_documents with a
 * progressToken gets notifications/progress, search_collection returns hits, and the resources
 * rag://collections and rag://collections/{name} are listed, templated and readable.
 */
import t from 'tap';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { kbWorld, listenLoopback } from './surface-fixtures.ts';

const MCP_KB_TOOLS = ['list_collections', 'ingest_documents', 'list_documents', 'delete_document', 'search_collection', 'get_job', 'list_sources', 'add_source', 'sync_source'];
const REST_ONLY = ['create_collection', 'get_collection', 'delete_collection', 'get_document', 'list_document_chunks', 'reingest_document', 'list_jobs', 'cancel_job', 'update_source', 'delete_source'];

t.test('MCP: KB tools, progress notifications, search, resources', async (t) => {
  const { app, urls } = await kbWorld(t);
  const origin = await listenLoopback(app);
  const client = new Client({ name: 'surface-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${origin}/mcp`)));
  t.teardown(() => client.close());

  const { tools } = await client.listTools();
  const names = tools.map((x) => x.name);
  t.same(names.slice(0, 13), app.tools.slice(0, 13).map((x) => x.name), 'the 13 document tools first, as before');
  t.same(names.slice(13), MCP_KB_TOOLS, 'then the knowledge-base tools (six, and the three source tools)');
  for (const name of REST_ONLY) t.notOk(names.includes(name), `${name} is REST only`);
  const ann = (name: string) => tools.find((x) => x.name === name)!.annotations!;
  for (const name of ['list_collections', 'list_documents', 'search_collection', 'get_job', 'list_sources']) {
    t.equal(ann(name).readOnlyHint, true, `${name} read-only`);
    t.equal(ann(name).destructiveHint, false);
  }
  t.match(ann('delete_document'), { readOnlyHint: false, destructiveHint: true });
  t.match(ann('ingest_documents'), { readOnlyHint: false, destructiveHint: false, openWorldHint: true });
  t.match(tools.find((x) => x.name === 'ingest_documents')!.description, /creat\w* the collection/);
  const restOnly = await client.callTool({ name: 'create_collection', arguments: { name: 'x' } });
  t.equal(restOnly.isError, true, 'a REST-only tool is not callable over MCP');

  const progress: Array<{ progress: number; total?: number; message?: string }> = [];
  const ingested = await client.callTool(
    { name: 'ingest_documents', arguments: { name: 'mcp-docs', urls: [urls.otters, urls.volcanoes, urls.bread] } },
    undefined,
    { onprogress: (p) => progress.push(p) },
  );
  t.notOk(ingested.isError, JSON.stringify(ingested.content));
  const job = ingested.structuredContent as { id: string; status: string; hint: string; counts: { done: number } };
  t.equal(job.status, 'succeeded', 'waited (default 20 s) until the job ended');
  t.equal(job.counts.done, 3);
  t.match(job.hint, /search_collection/);
  t.ok(progress.length >= 1, `${progress.length} progress notifications`);
  t.ok(progress.every((p, i) => i === 0 || p.progress > progress[i - 1]!.progress), 'strictly increasing');
  t.ok(progress.every((p) => p.total === 100 && p.progress <= 100 && typeof p.message === 'string'));

  const noWait = await client.callTool({ name: 'ingest_documents', arguments: { name: 'mcp-docs', urls: [urls.otters], wait_seconds: 0 } });
  const queued = noWait.structuredContent as { id: string; status: string; hint: string };
  if (queued.status === 'queued' || queued.status === 'running') t.match(queued.hint, /get_job/);
  const polled = await client.callTool({ name: 'get_job', arguments: { job_id: queued.id } });
  t.equal((polled.structuredContent as { id: string }).id, queued.id);

  const found = await client.callTool({ name: 'search_collection', arguments: { name: 'mcp-docs', query: 'caldera magma chamber' } });
  t.notOk(found.isError);
  const result = found.structuredContent as { results: Array<{ source: string; text: string }>; confidence: string };
  t.ok(result.results.length > 0);
  t.equal(result.results[0]!.source, urls.volcanoes);
  t.not(result.confidence, 'none');
  const missing = await client.callTool({ name: 'search_collection', arguments: { name: 'nope', query: 'x' } });
  t.equal(missing.isError, true);
  t.equal(JSON.parse((missing.content as { text: string }[])[0]!.text).code, 'NOT_FOUND');

  const listed = await client.callTool({ name: 'list_documents', arguments: { name: 'mcp-docs', limit: 2 } });
  t.equal((listed.structuredContent as { total: number }).total, 3);

  // Resources: listed, templated, readable.
  const { resources } = await client.listResources();
  const uris = resources.map((r) => r.uri);
  t.ok(uris.includes('rag://collections'));
  t.ok(uris.includes('rag://collections/mcp-docs'), 'one entry per collection');
  const { resourceTemplates } = await client.listResourceTemplates();
  t.same(resourceTemplates.map((r) => r.uriTemplate), ['rag://collections/{name}']);
  const all = JSON.parse(((await client.readResource({ uri: 'rag://collections' })).contents[0] as { text: string }).text);
  t.same(all.collections.map((c: { name: string }) => c.name), ['mcp-docs']);
  t.equal(all.collections[0].stats.documents, 3);
  const one = JSON.parse(((await client.readResource({ uri: 'rag://collections/mcp-docs' })).contents[0] as { text: string }).text);
  t.equal(one.collection.name, 'mcp-docs');
  t.equal(one.collection.stats.documents, 3);
  t.equal(one.documents.items.length, 3);
  await t.rejects(client.readResource({ uri: 'rag://collections/nope' }), 'an unknown collection is an error');

  // delete_document over MCP: gone from search.
  const volcano = one.documents.items.find((d: { source: string }) => d.source === urls.volcanoes);
  const del = await client.callTool({ name: 'delete_document', arguments: { name: 'mcp-docs', document_id: volcano.id, confirm: true } });
  t.notOk(del.isError);
  const after = await client.callTool({ name: 'search_collection', arguments: { name: 'mcp-docs', query: 'caldera magma chamber' } });
  t.notOk((after.structuredContent as { results: Array<{ document_id: string }> }).results.some((h) => h.document_id === volcano.id));
});
