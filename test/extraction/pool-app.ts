/**
 * An app whose extraction pool runs the hostile test extractor for text files (see
 * fixtures/hostile-extractor.ts), and helpers to upload a command to it.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildTestApp, testConfig, type Teardown } from '../helper.ts';
import { createServices, type Services } from '../../src/services.ts';
import { moduleUrl } from '../../src/extraction/extraction-pool.ts';
import type { ExtractionPoolOptions } from '../../src/extraction/extraction-pool.ts';
import { multipart } from '../integration/helpers.ts';

export const HOSTILE = moduleUrl(path.join(import.meta.dirname, 'fixtures', 'hostile-extractor.ts'));

export async function hostileApp(
  t: Teardown,
  env: Record<string, string> = {},
  pool: Partial<Omit<ExtractionPoolOptions, 'ocr' | 'log'>> = {},
): Promise<{ app: FastifyInstance; services: Services }> {
  const config = testConfig(t, env);
  const services = createServices(config, { startModels: false, extraction: { extractorModules: { text: HOSTILE }, ...pool } });
  t.teardown(() => services.close());
  const app = await buildTestApp(t, { config, services });
  return { app, services };
}

/** POST /v1/documents/process with a text file holding `text`. */
export function processText(app: FastifyInstance, text: string) {
  const body = multipart({ bytes: Buffer.from(text), filename: 'note.txt', contentType: 'text/plain' });
  return app.inject({ method: 'POST', url: '/v1/documents/process', ...body });
}

/** The extraction section of get_system_health. */
export async function poolHealth(app: FastifyInstance): Promise<Record<string, any>> {
  const res = await app.inject({ method: 'GET', url: '/v1/system/health' });
  return (res.json() as { features: Record<string, Record<string, any>> }).features.extraction_isolation!;
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * A command for the hostile extractor that holds its child (event loop blocked) until `release()`;
 * `text` is what the call then extracts.
 */
export function holdCommand(t: Teardown, label = ''): { text: string; release(): void } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'rag-hold-'));
  const file = path.join(dir, 'release');
  const release = () => writeFileSync(file, '');
  // Released on teardown too, so a failing test leaves no child blocked.
  t.teardown(() => {
    release();
    rmSync(dir, { recursive: true, force: true });
  });
  return { text: `HOLD release:${file} ${label}`.trim(), release };
}

export const PLAIN_TEXT = 'Herons wade in the shallow marsh water at dawn, looking for small fish and frogs.';

/**
 * Starts a child and has it extract once (modules loaded), without a call timeout: tests with short
 * timeouts then measure their own work, not a start-up on a loaded machine.
 */
export async function warmUp(services: Services): Promise<void> {
  await services.documents.load(
    { upload: { bytes: Buffer.from(`${PLAIN_TEXT} ${Math.random()}`), filename: 'warm.txt', contentType: 'text/plain' } },
    { signal: AbortSignal.timeout(120_000) } as never,
  );
}
