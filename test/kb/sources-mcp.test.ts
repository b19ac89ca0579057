/**
 * Sources over MCP (Streamable HTTP on 127.0.0.1, the SDK client): add_source adds a URL list,
 * sync_source waits for the sync and answers its counts, list_sources is read-only and lists it,
 * and adding a site is refused while SOURCES_MCP_ADD_SITE is off.
 */
import t from 'tap';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { kbWorld, listenLoopback } from './surface-fixtures.ts';

t.test('MCP: add_source, sync_source, list_sources; sites need SOURCES_MCP_ADD_SITE', async (t) => {
  const { app, urls } = await kbWorld(t, { SOURCES_SCHEDULER: 'false' });
  const origin = await listenLoopback(app);
  const client = new Client({ name: 'sources-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${origin}/mcp`)));
  t.teardown(() => client.close());

  const { tools } = await client.listTools();
  t.equal(tools.find((x) => x.name === 'list_sources')?.annotations?.readOnlyHint, true, 'list_sources is read-only');

  const site = await client.callTool({ name: 'add_source', arguments: { name: 'mcp-src', kind: 'site', start_url: urls.otters } });
  t.equal(site.isError, true, 'a site over MCP is refused by default');
  t.match(JSON.stringify(site.content), /SOURCES_MCP_ADD_SITE/);

  const added = await client.callTool({ name: 'add_source', arguments: { name: 'mcp-src', kind: 'urls', urls: [urls.otters, urls.bread], sync: false } });
  t.notOk(added.isError, JSON.stringify(added.content));
  const id = (added.structuredContent as { id: string }).id;

  const synced = await client.callTool({ name: 'sync_source', arguments: { name: 'mcp-src', source_id: id, wait_seconds: 60 } });
  t.notOk(synced.isError, JSON.stringify(synced.content));
  t.match(synced.structuredContent, { running: false, last_status: 'succeeded', counts: { new: 2, failed: 0 } });

  const listed = await client.callTool({ name: 'list_sources', arguments: { name: 'mcp-src' } });
  t.match(listed.structuredContent, { total: 1, items: [{ id, kind: 'urls' }] });
});
