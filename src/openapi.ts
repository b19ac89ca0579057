/**
 * The OpenAPI document as committed in openapi/openapi.json: generated from the production
 * registry with default settings, so it does not depend on the environment it is generated in.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { buildApp } from './app.ts';
import { loadConfig } from './config.ts';

export const OPENAPI_FILE = new URL('../openapi/openapi.json', import.meta.url);

export async function generateOpenApi(): Promise<Record<string, unknown>> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'rag-openapi-'));
  const app = await buildApp({ config: loadConfig({ DATA_DIR: dataDir }) });
  try {
    await app.ready();
    return await app.openApiDocument();
  } finally {
    await app.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

/** The exact text written to openapi/openapi.json. */
export function serializeOpenApi(doc: unknown): string {
  return `${JSON.stringify(doc, null, 2)}\n`;
}
