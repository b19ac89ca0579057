/**
 * Builds the app for tests: configuration from explicit values only (never the process environment
 * or a local .env), a fresh temporary DATA_DIR, a silent logger unless one is given, and closing
 * on teardown.
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { buildApp, type BuildAppOptions } from '../src/app.ts';
import { loadConfig, type Config, type RawConfig } from '../src/config.ts';

export interface Teardown {
  teardown(fn: () => unknown): void;
}

/** A fresh temporary folder removed on teardown. */
export function tempDir(t: Teardown, prefix = 'rag-test-'): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/**
 * Config from defaults plus `env` (strings, as the environment would give them) and `overrides`.
 * Every app.inject call comes from 127.0.0.1, so tests get a rate limit they will not hit unless
 * they set RATE_LIMIT_RPM themselves.
 */
export function testConfig(t: Teardown, env: Record<string, string> = {}, overrides: Partial<RawConfig> = {}): Readonly<Config> {
  return loadConfig({ DATA_DIR: tempDir(t), RATE_LIMIT_RPM: '100000', ...env }, overrides);
}

export interface BuildTestAppOptions extends Omit<BuildAppOptions, 'config'> {
  env?: Record<string, string>;
  config?: Readonly<Config>;
  logger?: Logger;
}

export async function buildTestApp(t: Teardown, opts: BuildTestAppOptions = {}): Promise<FastifyInstance> {
  const { env, config, ...rest } = opts;
  const app = await buildApp({ ...rest, config: config ?? testConfig(t, env) });
  t.teardown(() => app.close());
  await app.ready();
  return app;
}

export const CLI_BIN = path.resolve(import.meta.dirname, '../bin/rag-document-server.js');

export interface CliServer {
  child: ChildProcessByStdio<null, Readable, Readable>;
  /** http://127.0.0.1:PORT, read from the "Server listening" log line. */
  address: string;
  /** Everything the server wrote to stderr so far (its JSON log lines). */
  stderr(): string;
}

/**
 * Spawns the CLI (the compiled build when dist/ exists) on a free loopback port in a fresh
 * folder, with only PATH, DATA_DIR and `env` in its environment; killed on teardown.
 */
export async function spawnCliServer(t: Teardown, env: Record<string, string> = {}, args: string[] = []): Promise<CliServer> {
  const cwd = tempDir(t);
  const child = spawn(process.execPath, [CLI_BIN, '--port', '0', '--host', '127.0.0.1', ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? '', DATA_DIR: path.join(cwd, 'data'), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let stderr = '';
  const address = await new Promise<string>((resolve, reject) => {
    child.stderr.on('data', (d) => {
      stderr += d;
      const m = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(stderr);
      if (m) resolve(m[1]);
    });
    child.once('exit', (code) => reject(new Error(`exited early (${code}): ${stderr}`)));
  });
  return { child, address, stderr: () => stderr };
}
