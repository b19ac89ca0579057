/**
 * The MCP half of the key x operation table, run the same way over /mcp and over stdio: which
 * tools each key is shown, and what each call answers (ok, NOT_FOUND, FORBIDDEN).
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Test } from 'tap';
import { callOutcome, type KeyName, type ScopedWorld } from './fixtures.ts';

type Tap = Pick<Test, 'equal' | 'ok' | 'notOk' | 'same'>;
export type McpKey = Extract<KeyName, 'admin' | 'reader' | 'editor' | 'uploader'>;

/** Tools each key is shown (among those MCP serves). */
export const LISTED: Record<McpKey, { has: string[]; lacks: string[] }> = {
  admin: { has: ['delete_document', 'ingest_documents', 'manage_cache', 'search_collection'], lacks: [] },
  reader: { has: ['search_collection', 'list_collections', 'get_job', 'manage_cache', 'process_document'], lacks: ['delete_document', 'ingest_documents'] },
  editor: { has: ['delete_document', 'ingest_documents', 'search_collection'], lacks: [] },
  uploader: { has: ['ingest_documents', 'get_job'], lacks: ['search_collection', 'delete_document', 'list_collections', 'detect_language'] },
};

interface Row {
  op: string;
  tool: string;
  args: Record<string, unknown>;
  expect: Partial<Record<McpKey, string>>;
}

function rows(w: ScopedWorld): Row[] {
  return [
    { op: 'list collections', tool: 'list_collections', args: {}, expect: { admin: 'ok', reader: 'ok', editor: 'ok', uploader: 'FORBIDDEN' } },
    { op: 'search own', tool: 'search_collection', args: { name: 'team-a-docs', query: 'otters' }, expect: { admin: 'ok', reader: 'ok', editor: 'ok', uploader: 'FORBIDDEN' } },
    { op: 'search other', tool: 'search_collection', args: { name: 'team-b-docs', query: 'bread' }, expect: { admin: 'ok', reader: 'NOT_FOUND', editor: 'NOT_FOUND', uploader: 'NOT_FOUND' } },
    { op: 'list other documents', tool: 'list_documents', args: { name: 'team-b-docs' }, expect: { admin: 'ok', reader: 'NOT_FOUND', editor: 'NOT_FOUND' } },
    { op: 'get own job', tool: 'get_job', args: { job_id: w.jobs.a }, expect: { admin: 'ok', reader: 'ok', uploader: 'ok' } },
    { op: 'get other job', tool: 'get_job', args: { job_id: w.jobs.b }, expect: { admin: 'ok', reader: 'NOT_FOUND', editor: 'NOT_FOUND', uploader: 'NOT_FOUND' } },
    { op: 'per-URL tool', tool: 'detect_language', args: { text: 'Sea otters hold hands while sleeping.' }, expect: { admin: 'ok', reader: 'ok', uploader: 'FORBIDDEN' } },
    { op: 'cache stats', tool: 'manage_cache', args: { action: 'stats' }, expect: { reader: 'ok', uploader: 'FORBIDDEN' } },
    { op: 'cache clear', tool: 'manage_cache', args: { action: 'clear', confirm: true }, expect: { reader: 'FORBIDDEN', editor: 'FORBIDDEN', admin: 'ok' } },
    { op: 'ingest own', tool: 'ingest_documents', args: { name: 'team-a-docs', urls: [w.urls.bread], wait_seconds: 0 }, expect: { reader: 'FORBIDDEN', uploader: 'ok' } },
    { op: 'ingest other', tool: 'ingest_documents', args: { name: 'team-b-docs', urls: [w.urls.bread], wait_seconds: 0 }, expect: { reader: 'NOT_FOUND', editor: 'NOT_FOUND', uploader: 'NOT_FOUND' } },
    { op: 'delete own document', tool: 'delete_document', args: { name: 'team-a-docs', document_id: w.docs.a, confirm: true }, expect: { reader: 'FORBIDDEN', uploader: 'FORBIDDEN', editor: 'ok' } },
    { op: 'delete other document', tool: 'delete_document', args: { name: 'team-b-docs', document_id: w.docs.b, confirm: true }, expect: { reader: 'NOT_FOUND', editor: 'NOT_FOUND', uploader: 'NOT_FOUND', admin: 'ok' } },
  ];
}

/** Runs the table in order (rows that change something end with the key allowed to). */
export async function runMcpTable(t: Tap, w: ScopedWorld, clients: Record<McpKey, Client>, transport: string): Promise<void> {
  for (const [key, { has, lacks }] of Object.entries(LISTED) as Array<[McpKey, (typeof LISTED)[McpKey]]>) {
    const names = (await clients[key].listTools()).tools.map((x) => x.name);
    for (const name of has) t.ok(names.includes(name), `${transport}: ${key} is shown ${name}`);
    for (const name of lacks) t.notOk(names.includes(name), `${transport}: ${key} is not shown ${name}`);
  }
  for (const row of rows(w)) {
    for (const [key, expected] of Object.entries(row.expect) as Array<[McpKey, string]>) {
      const result = await clients[key].callTool({ name: row.tool, arguments: row.args });
      t.equal(callOutcome(result as { isError?: boolean; content?: unknown }), expected, `${transport}: ${row.op} as ${key}: ${expected}`);
    }
  }
  // Listings and resources hold only the key's collections.
  const listed = await clients.reader.callTool({ name: 'list_collections', arguments: {} });
  t.same((listed.structuredContent as { collections: Array<{ name: string }> }).collections.map((c) => c.name), ['team-a-docs'], `${transport}: list_collections filtered`);
  const resources = (await clients.reader.listResources()).resources.map((r) => r.uri);
  t.ok(resources.includes('rag://collections/team-a-docs'), `${transport}: own collection listed as a resource`);
  t.notOk(resources.includes('rag://collections/team-b-docs'), `${transport}: other collection not listed`);
  const all = await clients.reader.readResource({ uri: 'rag://collections' });
  const read = JSON.parse((all.contents[0] as { text: string }).text) as { collections: Array<{ name: string }> };
  t.same(read.collections.map((c) => c.name), ['team-a-docs'], `${transport}: rag://collections lists only what the key may see`);
  let hidden: unknown = null;
  await clients.reader.readResource({ uri: 'rag://collections/team-b-docs' }).catch((err: unknown) => (hidden = err));
  t.ok(hidden, `${transport}: another team's collection reads as an unknown resource`);
  const adminAll = await clients.admin.readResource({ uri: 'rag://collections' });
  t.equal((JSON.parse((adminAll.contents[0] as { text: string }).text) as { collections: unknown[] }).collections.length, 2, `${transport}: admin sees both`);
  t.notOk((await clients.uploader.listResources()).resources.some((r) => r.uri.startsWith('rag://collections')), `${transport}: no search, no collection resources`);
}
