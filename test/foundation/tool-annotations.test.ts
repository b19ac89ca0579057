/**
 * MCP tool annotations come from each tool's declaration (src/tools/*.ts), not from its name or
 * group: tools/list shows exactly what the tool declares.
 */
import t from 'tap';
import { mcpToolListing } from '../../src/mcp/server.ts';
import type { AnyTool } from '../../src/tools/define-tool.ts';
import { tools } from '../../src/tools/index.ts';

const byName = (name: string) => tools.find((x) => x.name === name)!;

t.test('tools/list carries the declared annotations', async (t) => {
  for (const tool of tools) {
    t.same(
      mcpToolListing(tool).annotations,
      { title: tool.annotations.title ?? tool.title, ...tool.annotations },
      `${tool.name}: as declared`,
    );
  }
  // A tool declared with other values is listed with them: nothing is inferred from name or group.
  const renamed: AnyTool = {
    ...byName('get_system_health'),
    name: 'manage_cache_probe',
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true, title: 'Probe' },
  };
  t.same(mcpToolListing(renamed).annotations, { title: 'Probe', readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true });
});

t.test('the declarations say what each tool does', async (t) => {
  const cache = byName('manage_cache').annotations;
  t.same(cache, { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false }, 'manage_cache clear is destructive');
  for (const tool of tools.filter((x) => x.group !== 'knowledge_base')) {
    const a = tool.annotations;
    // Tools that take a URL fetch it: an open world.
    t.equal(a.openWorldHint, tool.upload !== undefined, `${tool.name}: openWorldHint iff it fetches URLs`);
    if (a.readOnlyHint) t.equal(a.destructiveHint, false, `${tool.name}: read-only, so not destructive`);
    if (tool.name !== 'manage_cache') t.equal(a.readOnlyHint, true, `${tool.name} changes nothing`);
  }
});

t.test('the knowledge-base tools: reads are read-only, deletes destructive, ingestion adds and replaces', async (t) => {
  const kb = tools.filter((x) => x.group === 'knowledge_base');
  for (const tool of kb) {
    const a = tool.annotations;
    if (/^(list|get|search)_/.test(tool.name)) t.match(a, { readOnlyHint: true, destructiveHint: false, openWorldHint: false }, `${tool.name} reads only`);
    if (/^delete_/.test(tool.name)) t.match(a, { readOnlyHint: false, destructiveHint: true }, `${tool.name} destroys data`);
  }
  t.match(byName('ingest_documents').annotations, { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true });
  t.match(byName('ingest_documents').description, /replaces the older version/);
  t.match(byName('create_collection').annotations, { readOnlyHint: false, destructiveHint: false });
});
