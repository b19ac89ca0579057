/**
 * MCP roots as the allowed folders over stdio: the real server process (the CLI's main() from the
 * TypeScript sources, `--transport stdio`) and the SDK's stdio client declaring roots. With
 * ALLOWED_DIRS unset the server asks the client for its roots, so a file inside a root is ingested
 * by path and one outside is refused with URL_NOT_ALLOWED. The REST-only tools are not listed.
 */
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import t from 'tap';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { tempDir } from '../helper.ts';
import { SERVER_ENTRY_ARGS } from '../setup/server-entry.ts';


t.test('stdio: the client roots serve as ALLOWED_DIRS when it is unset', async (t) => {
  const root = tempDir(t, 'rag-roots-');
  const outside = tempDir(t, 'rag-outside-');
  fs.mkdirSync(path.join(root, 'notes'));
  fs.writeFileSync(path.join(root, 'notes', 'lighthouse.txt'), 'The lighthouse keeper trims the wick of the Fresnel lamp every evening.\n');
  fs.writeFileSync(path.join(outside, 'secret.txt'), 'Nothing to see here.\n');

  // A neutral working directory (no .env), only PATH and DATA_DIR: ALLOWED_DIRS is unset.
  const cwd = tempDir(t);
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [...SERVER_ENTRY_ARGS, '--transport', 'stdio'],
    cwd,
    env: { PATH: process.env.PATH ?? '', DATA_DIR: path.join(cwd, 'data') },
    stderr: 'pipe',
  });
  const client = new Client({ name: 'roots-test', version: '1.0.0' }, { capabilities: { roots: {} } });
  let asked = 0;
  client.setRequestHandler(ListRootsRequestSchema, async () => {
    asked++;
    return { roots: [{ uri: pathToFileURL(root).href, name: 'workspace' }] };
  });
  await client.connect(transport);
  t.teardown(() => client.close());

  const names = (await client.listTools()).tools.map((x) => x.name);
  t.ok(names.includes('ingest_documents') && names.includes('search_collection'));
  t.notOk(names.includes('create_collection'), 'REST-only tools are not listed over stdio');

  // The tool waits at most wait_seconds: on a loaded machine the first extraction child can take
  // longer to start, so follow the job with get_job until it ends (the tap timeout bounds it).
  const res = await client.callTool({ name: 'ingest_documents', arguments: { name: 'local', paths: [path.join(root, 'notes')], include: ['**/*.txt'] } });
  t.notOk(res.isError, JSON.stringify(res.content));
  type Job = { id: string; status: string; items: Array<{ source_kind: string; stage: string }> };
  let job = res.structuredContent as Job;
  while (job.status === 'queued' || job.status === 'running') {
    await new Promise((r) => setTimeout(r, 100));
    job = (await client.callTool({ name: 'get_job', arguments: { job_id: job.id } })).structuredContent as Job;
  }
  t.equal(asked, 1, 'the server asked the client for its roots');
  t.equal(job.status, 'succeeded');
  t.same(job.items.map((i) => [i.source_kind, i.stage]), [['path', 'done']]);
  t.notOk('local' in job.items[0]!, "the file's identity (device, inode) stays inside the server, as over REST");
  const hit = await client.callTool({ name: 'search_collection', arguments: { name: 'local', query: 'lighthouse keeper Fresnel lamp' } });
  t.match((hit.structuredContent as { results: Array<{ text: string }> }).results[0]!.text, /lighthouse/);

  const refused = await client.callTool({ name: 'ingest_documents', arguments: { name: 'local', paths: [path.join(outside, 'secret.txt')] } });
  const text = JSON.stringify(refused.structuredContent ?? refused.content);
  t.match(text, /URL_NOT_ALLOWED/, 'a path outside the roots is refused');
});
