/**
 * Destructive MCP calls are confirmed. Over stdio a client that declared elicitation is asked
 * through elicitation/create: accept + confirm deletes, decline (or accept without confirming)
 * deletes nothing. A client without elicitation (stdio, and /mcp, which is stateless and never
 * learns the client's capabilities) must pass confirm: true, else CONFIRMATION_REQUIRED. REST
 * needs no confirm (scopes-rest.test.ts).
 */
import t from 'tap';
import { ElicitRequestSchema, type ElicitRequest, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { kbWorld, listenLoopback } from '../kb/surface-fixtures.ts';
import { startStaticServer } from '../integration/helpers.ts';
import { DOCS } from '../kb/surface-fixtures.ts';
import { callOutcome, httpMcpClient, stdioMcpClient } from './fixtures.ts';

/** Ingests the three documents into `name` and returns their ids by source name. */
async function ingest(client: Client, name: string, urls: string[]): Promise<string[]> {
  const res = await client.callTool({ name: 'ingest_documents', arguments: { name, urls, wait_seconds: 60 } });
  const job = res.structuredContent as { status: string; items: Array<{ document_id: string }> };
  if (job.status !== 'succeeded') throw new Error(`ingest: ${JSON.stringify(res.content).slice(0, 300)}`);
  return job.items.map((i) => i.document_id);
}

async function documentIds(client: Client, name: string): Promise<string[]> {
  const res = await client.callTool({ name: 'list_documents', arguments: { name } });
  return (res.structuredContent as { items: Array<{ id: string }> }).items.map((d) => d.id);
}

const errorText = (result: unknown) => (result as { content: Array<{ text: string }> }).content[0]!.text;

t.test('stdio with elicitation: the user is asked; accept deletes, decline does not', async (t) => {
  const files = await startStaticServer(t);
  const urls = Object.values(DOCS).map((d) => files.add(d.name, Buffer.from(d.text), 'text/plain; charset=utf-8'));
  const answers: ElicitResult[] = [];
  const asked: ElicitRequest['params'][] = [];
  const client = await stdioMcpClient(t, { ALLOW_PRIVATE_NETWORKS: 'true' }, { capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    asked.push(request.params);
    return answers.shift() ?? { action: 'cancel' };
  });
  const [first, second, third] = await ingest(client, 'confirm-docs', urls);

  answers.push({ action: 'decline' });
  const declined = await client.callTool({ name: 'delete_document', arguments: { name: 'confirm-docs', document_id: first } });
  t.equal(callOutcome(declined as never), 'CONFIRMATION_REQUIRED');
  t.match(errorText(declined), /declined/);
  t.equal(asked.length, 1, 'asked once');
  t.match(asked[0]!.message, new RegExp(`delete_document.*${first}`), 'the prompt names the document');
  t.ok((await documentIds(client, 'confirm-docs')).includes(first!), 'declined: the document stays');

  answers.push({ action: 'accept', content: { confirm: false } });
  const unticked = await client.callTool({ name: 'delete_document', arguments: { name: 'confirm-docs', document_id: first, confirm: true } });
  t.equal(callOutcome(unticked as never), 'CONFIRMATION_REQUIRED', 'accepted without confirming (and confirm: true from the model does not count)');
  t.ok((await documentIds(client, 'confirm-docs')).includes(first!));

  answers.push({ action: 'accept', content: { confirm: true } });
  const accepted = await client.callTool({ name: 'delete_document', arguments: { name: 'confirm-docs', document_id: first } });
  t.equal(callOutcome(accepted as never), 'ok', errorText(accepted));
  t.same(await documentIds(client, 'confirm-docs').then((ids) => ids.sort()), [second, third].sort(), 'accepted: deleted');
  t.equal(asked.length, 3);

  const stats = await client.callTool({ name: 'manage_cache', arguments: { action: 'stats' } });
  t.equal(callOutcome(stats as never), 'ok');
  t.equal(asked.length, 3, 'cache statistics are not destructive: nobody is asked');
  answers.push({ action: 'accept', content: { confirm: true } });
  const clear = await client.callTool({ name: 'manage_cache', arguments: { action: 'clear' } });
  t.equal(callOutcome(clear as never), 'ok');
  t.equal(asked.length, 4, 'clearing the caches is asked');
});

t.test('stdio without elicitation: confirm: true is required', async (t) => {
  const files = await startStaticServer(t);
  const urls = Object.values(DOCS).map((d) => files.add(d.name, Buffer.from(d.text), 'text/plain; charset=utf-8'));
  const client = await stdioMcpClient(t, { ALLOW_PRIVATE_NETWORKS: 'true' });
  const [first] = await ingest(client, 'plain-docs', urls);
  const refused = await client.callTool({ name: 'delete_document', arguments: { name: 'plain-docs', document_id: first } });
  t.equal(callOutcome(refused as never), 'CONFIRMATION_REQUIRED');
  t.match(JSON.parse(errorText(refused)).error, /"confirm": true/);
  t.ok((await documentIds(client, 'plain-docs')).includes(first!));
  const confirmed = await client.callTool({ name: 'delete_document', arguments: { name: 'plain-docs', document_id: first, confirm: true } });
  t.equal(callOutcome(confirmed as never), 'ok');
  t.notOk((await documentIds(client, 'plain-docs')).includes(first!), 'deleted');
});

t.test('/mcp: confirm: true is required, also from a client that declares elicitation', async (t) => {
  const { app, urls } = await kbWorld(t);
  const origin = await listenLoopback(app);
  for (const [label, options] of [['without elicitation', undefined], ['with elicitation', { capabilities: { elicitation: {} } }]] as const) {
    const client = await httpMcpClient(t, origin, null, options);
    let asked = 0;
    if (options) {
      client.setRequestHandler(ElicitRequestSchema, async () => {
        asked++;
        return { action: 'accept', content: { confirm: true } };
      });
    }
    const name = label === 'with elicitation' ? 'http-elicit' : 'http-plain';
    const [first] = await ingest(client, name, [urls.otters, urls.bread]);
    const refused = await client.callTool({ name: 'delete_document', arguments: { name, document_id: first } });
    t.equal(callOutcome(refused as never), 'CONFIRMATION_REQUIRED', `${label}: no confirm`);
    t.ok((await documentIds(client, name)).includes(first!), `${label}: still there`);
    const confirmed = await client.callTool({ name: 'delete_document', arguments: { name, document_id: first, confirm: true } });
    t.equal(callOutcome(confirmed as never), 'ok', `${label}: confirm: true deletes`);
    t.notOk((await documentIds(client, name)).includes(first!));
    t.equal(asked, 0, `${label}: the stateless endpoint never prompts`);
  }
});

t.test('every destructive MCP tool documents and accepts confirm', async (t) => {
  const { app } = await kbWorld(t);
  const origin = await listenLoopback(app);
  const client = await httpMcpClient(t, origin, null);
  const destructive = (await client.listTools()).tools.filter((x) => x.annotations?.destructiveHint);
  t.same(destructive.map((x) => x.name).sort(), ['delete_document', 'manage_cache']);
  for (const tool of destructive) {
    t.match((tool.inputSchema.properties as Record<string, { type: string }>).confirm, { type: 'boolean' }, `${tool.name} has confirm`);
    t.match(tool.description, /"confirm": true/, `${tool.name} says so`);
  }
});
