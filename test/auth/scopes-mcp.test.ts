/**
 * Scoped keys over MCP: the same key x operation table over Streamable HTTP (/mcp with the key in
 * the Authorization header) and over stdio (the key in RAG_API_KEY, the same key file and data
 * folder); a stdio server with keys configured and no valid RAG_API_KEY refuses to start.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import t from 'tap';
import { listenLoopback } from '../kb/surface-fixtures.ts';
import { tempDir } from '../helper.ts';
import { httpMcpClient, KEYS, scopedWorld, stdioMcpClient } from './fixtures.ts';
import { runMcpTable, type McpKey } from './mcp-table.ts';
import { SERVER_ENTRY_ARGS } from '../setup/server-entry.ts';

const MCP_KEYS: McpKey[] = ['admin', 'reader', 'editor', 'uploader'];

t.test('MCP over HTTP: tools/list, tools/call and resources follow the key', async (t) => {
  const w = await scopedWorld(t);
  const origin = await listenLoopback(w.app);
  const clients = Object.fromEntries(await Promise.all(MCP_KEYS.map(async (k) => [k, await httpMcpClient(t, origin, k)] as const))) as Record<McpKey, Awaited<ReturnType<typeof httpMcpClient>>>;
  await runMcpTable(t, w, clients, 'http');

  for (const key of [null, 'expired'] as const) {
    let refused: unknown = null;
    await httpMcpClient(t, origin, key).catch((err: unknown) => (refused = err));
    t.match(String(refused), /401|nauthorized|API key/, `${key ?? 'no key'}: /mcp refuses to connect`);
  }
});

t.test('MCP over stdio: RAG_API_KEY carries the same scopes', async (t) => {
  const w = await scopedWorld(t);
  const env = (key: McpKey) => ({ API_KEYS_FILE: w.keyFile, DATA_DIR: w.dataDir, RAG_API_KEY: KEYS[key], ALLOW_PRIVATE_NETWORKS: 'true' });
  const clients = {} as Record<McpKey, Awaited<ReturnType<typeof stdioMcpClient>>>;
  for (const key of MCP_KEYS) clients[key] = await stdioMcpClient(t, env(key));
  await runMcpTable(t, w, clients, 'stdio');
});

/** Runs the stdio server (test/setup/server-entry.ts: the build when current) to its exit; resolves with the exit code and stderr. */
function runStdio(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  const cwd = tempDir(t);
  const child = spawn(process.execPath, [...SERVER_ENTRY_ARGS, '--transport', 'stdio'], {
    cwd,
    env: { PATH: process.env.PATH ?? '', DATA_DIR: path.join(cwd, 'data'), ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stderr })));
}

t.test('stdio with keys configured refuses to start without a valid RAG_API_KEY', async (t) => {
  const missing = await runStdio({ API_KEYS: 'k1' });
  t.equal(missing.code, 1);
  t.match(missing.stderr, /set RAG_API_KEY/);
  const wrong = await runStdio({ API_KEYS: 'k1', RAG_API_KEY: 'k2' });
  t.equal(wrong.code, 1);
  t.match(wrong.stderr, /RAG_API_KEY is not one of the configured API keys/);
  const alias = await runStdio({ API_KEYS: 'k1', MCP_API_KEY: 'nope' });
  t.match(alias.stderr, /not one of the configured/, 'MCP_API_KEY is read as RAG_API_KEY');
});
