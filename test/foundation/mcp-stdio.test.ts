/** MCP over stdio: spawn the real CLI and talk to it with the SDK's stdio client. */
import path from 'node:path';
import t from 'tap';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { tempDir } from '../helper.ts';
import { tools as registry } from '../../src/tools/index.ts';

const BIN = path.resolve(import.meta.dirname, '../../bin/rag-document-server.js');

t.test('stdio: same tools, tools/call works, logs only on stderr', async (t) => {
  // A neutral working directory, so no local .env is picked up.
  const cwd = tempDir(t);
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, '--transport', 'stdio'],
    cwd,
    env: { PATH: process.env.PATH ?? '', DATA_DIR: path.join(cwd, 'data'), LOG_LEVEL: 'info' },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const transportErrors: Error[] = [];
  const client = new Client({ name: 'stdio-test', version: '1.0.0' });
  client.onerror = (e) => transportErrors.push(e);
  await client.connect(transport);
  t.teardown(() => client.close());

  const { tools } = await client.listTools();
  t.same(
    tools.map((x) => x.name),
    registry.filter((x) => x.mcp !== false).map((x) => x.name),
    'the registry without its REST-only tools',
  );
  for (const tool of tools) {
    t.same(tool.inputSchema, JSON.parse(JSON.stringify(registry.find((r) => r.name === tool.name)!.input)), `${tool.name} input schema`);
  }
  const health = await client.callTool({ name: 'get_system_health', arguments: {} });
  t.notOk(health.isError);
  t.equal((health.structuredContent as { status: string }).status, 'ok');
  const bad = await client.callTool({ name: 'manage_cache', arguments: { action: 'drop' } });
  t.equal(bad.isError, true);
  t.equal(JSON.parse((bad.content as { text: string }[])[0].text).code, 'VALIDATION_ERROR');

  await client.close();
  t.same(transportErrors, [], 'stdout carried nothing but protocol messages');
  const lines = stderr.split('\n').filter(Boolean);
  t.ok(lines.length > 0, 'logs went to stderr');
  const events = lines.map((l) => JSON.parse(l) as { event?: string; request_id?: string; transport?: string });
  const start = events.find((e) => e.event === 'tool.start');
  t.equal(start?.transport, 'stdio');
  t.type(start?.request_id, 'string');
});
