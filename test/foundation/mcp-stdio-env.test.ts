/**
 * MCP over stdio chosen by the environment (MCP_TRANSPORT=stdio, for clients such as the MCP
 * Inspector that take `--transport` as their own option): no port is opened, and the server exits
 * on its own when its stdin closes.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import t from 'tap';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { tempDir } from '../helper.ts';

const BIN = path.resolve(import.meta.dirname, '../../bin/rag-document-server.js');

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function isListening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** The SDK's client over a child we spawned ourselves, so the test controls stdin and sees the exit. */
class ChildStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private readonly buffer = new ReadBuffer();
  constructor(private readonly child: ChildProcessWithoutNullStreams) {}
  async start(): Promise<void> {
    this.child.stdout.on('data', (chunk: Buffer) => {
      this.buffer.append(chunk);
      for (let m = this.buffer.readMessage(); m; m = this.buffer.readMessage()) this.onmessage?.(m);
    });
    this.child.once('exit', () => this.onclose?.());
  }
  async send(message: JSONRPCMessage): Promise<void> {
    this.child.stdin.write(serializeMessage(message));
  }
  async close(): Promise<void> {
    this.child.stdin.end();
  }
}

t.test('MCP_TRANSPORT=stdio serves MCP on stdio and listens on no port', async (t) => {
  const cwd = tempDir(t);
  const port = await freePort();
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN],
    cwd,
    env: { PATH: process.env.PATH ?? '', DATA_DIR: path.join(cwd, 'data'), MCP_TRANSPORT: 'stdio', PORT: String(port), LOG_LEVEL: 'info' },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const client = new Client({ name: 'stdio-env-test', version: '1.0.0' });
  await client.connect(transport);
  t.teardown(() => client.close());

  t.equal(client.getServerVersion()?.name, 'rag-document-server', 'initialize answered over stdio');
  const { tools } = await client.listTools();
  t.ok(tools.some((x) => x.name === 'process_document'));
  t.equal(await isListening(port), false, `nothing listens on PORT ${port}`);
  t.notMatch(stderr, /Server listening/, 'no HTTP server was started');
  t.match(stderr, /"event":"server\.start","transport":"stdio"/);
});

t.test('the stdio server exits 0 by itself when stdin closes', async (t) => {
  const cwd = tempDir(t);
  const child = spawn(process.execPath, [BIN], {
    cwd,
    env: { PATH: process.env.PATH ?? '', DATA_DIR: path.join(cwd, 'data'), MCP_TRANSPORT: 'stdio' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const client = new Client({ name: 'stdio-eof-test', version: '1.0.0' });
  await client.connect(new ChildStdioTransport(child));
  const health = await client.callTool({ name: 'get_system_health', arguments: {} });
  t.notOk(health.isError);

  // What a client that goes away does: its end of the pipe closes. No signal is sent.
  const closedAt = Date.now();
  child.stdin.end();
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  const { code, signal } = await exited;
  clearTimeout(timer);
  t.same({ code, signal }, { code: 0, signal: null }, `exited on its own in ${Date.now() - closedAt} ms`);
  t.notMatch(stderr, /"event":"server\.stop"/, 'no signal was involved');
});

t.test('the --transport flag wins over MCP_TRANSPORT', async (t) => {
  const cwd = tempDir(t);
  const child = spawn(process.execPath, [BIN, '--transport', 'http', '--port', '0', '--host', '127.0.0.1'], {
    cwd,
    env: { PATH: process.env.PATH ?? '', DATA_DIR: path.join(cwd, 'data'), MCP_TRANSPORT: 'stdio' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let stderr = '';
  const address = await new Promise<string>((resolve, reject) => {
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      const m = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(stderr);
      if (m) resolve(m[1]);
    });
    child.once('exit', () => reject(new Error(`exited early: ${stderr}`)));
  });
  t.equal((await fetch(`${address}/health`)).status, 200, 'HTTP, as the flag says');
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill('SIGTERM');
  t.equal(await exited, 0);
});
