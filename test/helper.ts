/**
 * Builds the app for tests: configuration from explicit values only (never the process environment
 * or a local .env), a fresh temporary DATA_DIR, a silent logger unless one is given, and closing
 * on teardown.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
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
