/**
 * API server processes for the scale suite: the real CLI (src/server.ts through tsx, so the suite
 * tests the sources whether or not dist/ is current), each in its own folder on a free loopback
 * port, with only PATH, DATA_DIR and the given variables in its environment; killed on teardown.
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { tempDir, type Teardown } from '../helper.ts';

const SERVER = path.resolve(import.meta.dirname, '../../src/server.ts');
const TSX_LOADER = import.meta.resolve('tsx');

export interface ApiProcess {
  child: ChildProcessByStdio<null, Readable, Readable>;
  /** http://127.0.0.1:PORT */
  address: string;
  stderr(): string;
  /** Whether the process is still running (no crash). */
  alive(): boolean;
}

function spawnServer(t: Teardown, env: Record<string, string>, args: string[]) {
  const cwd = tempDir(t, 'rag-scale-');
  const child = spawn(process.execPath, ['--import', TSX_LOADER, SERVER, '--port', '0', '--host', '127.0.0.1', ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? '', DATA_DIR: path.join(cwd, 'data'), LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  return { child, stderr: () => stderr };
}

/** Starts one API process and resolves once it listens. */
export async function startApi(t: Teardown, env: Record<string, string>, args: string[] = []): Promise<ApiProcess> {
  const { child, stderr } = spawnServer(t, env, args);
  const address = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the server did not listen within 60 s:\n${stderr()}`)), 60_000);
    child.stderr.on('data', () => {
      const m = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(stderr());
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited early (${code}): ${stderr()}`));
    });
  });
  return { child, address, stderr, alive: () => child.exitCode === null && child.signalCode === null };
}

/** Runs the server expecting it not to start: its exit code and what it wrote. */
export async function runUntilExit(t: Teardown, env: Record<string, string>, timeoutMs = 60_000): Promise<{ code: number | null; stderr: string; stdout: string }> {
  const { child, stderr } = spawnServer(t, env, []);
  let stdout = '';
  child.stdout.on('data', (d) => (stdout += d));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the server neither failed nor exited within ${timeoutMs} ms:\n${stderr()}`)), timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr: stderr(), stdout });
    });
  });
}

export const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** One JSON-RPC message to /mcp (stateless: no session needed); the HTTP status and body. */
export async function mcpPost(address: string, message: object): Promise<{ status: number; body: any }> {
  const res = await fetch(`${address}/mcp`, { method: 'POST', headers: MCP_HEADERS, body: JSON.stringify(message) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

/** A REST tool call counted against the budget (GET /v1/system/health); status, headers, body. */
export async function restCall(address: string): Promise<{ status: number; headers: Headers; body: any }> {
  const res = await fetch(`${address}/v1/system/health`);
  return { status: res.status, headers: res.headers, body: await res.json() };
}

export async function health(address: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`${address}/health`);
  return { status: res.status, body: await res.json() };
}

/** Polls `check` every 100 ms until it returns true (or fails after `ms`). */
export async function waitFor(what: string, check: () => Promise<boolean>, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
