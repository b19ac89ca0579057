/**
 * Over MCP stdio, stdout carries the protocol only: extraction children (started by the real CLI)
 * never write there, and a document read in a child comes back as a normal tool result.
 */
import http from 'node:http';
import type net from 'node:net';
import path from 'node:path';
import t from 'tap';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CLI_BIN, tempDir } from '../helper.ts';

const TEXT = 'The marsh survey counted forty-two grey herons and seven little egrets along the northern reed beds.';

t.test('stdio: process_document is extracted in a child and stdout stays protocol-only', async (t) => {
  const origin = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end(TEXT));
  await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
  t.teardown(() => origin.close());
  const port = (origin.address() as net.AddressInfo).port;

  const cwd = tempDir(t);
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI_BIN, '--transport', 'stdio'],
    cwd,
    env: { PATH: process.env.PATH ?? '', DATA_DIR: path.join(cwd, 'data'), ALLOWED_HOSTS: `127.0.0.1:${port}`, LOG_LEVEL: 'info' },
    stderr: 'pipe',
  });
  const transportErrors: Error[] = [];
  const client = new Client({ name: 'stdio-extraction-test', version: '1.0.0' });
  client.onerror = (e) => transportErrors.push(e);
  await client.connect(transport);
  t.teardown(() => client.close());

  const res = await client.callTool({ name: 'process_document', arguments: { document_url: `http://127.0.0.1:${port}/survey.txt` } });
  t.notOk(res.isError, JSON.stringify(res.content).slice(0, 300));
  t.match((res.structuredContent as { content: string }).content, 'forty-two grey herons');
  const health = await client.callTool({ name: 'get_system_health', arguments: {} });
  const pool = (health.structuredContent as { features: Record<string, Record<string, number>> }).features.extraction_isolation!;
  t.equal(pool.jobs, 1, 'the extraction ran in a child');
  t.same(transportErrors, [], 'no stray bytes on stdout');
});
