/**
 * Shared set-up of the jobs tests: real services (createServices) on a fresh DATA_DIR with the
 * private-network opt-in (documents come from a loopback server), extraction in this process
 * and no models (lexical), plus generated documents with known words.
 */
import type { Test } from 'tap';
import pino from 'pino';
import { createServices, type Services } from '../../src/services.ts';
import { testConfig } from '../helper.ts';
import { startLocalServer, type LocalServer } from '../documents/fixtures/local-server.ts';
import type { RawConfig } from '../../src/config.ts';
import type { JobRecord, KnowledgeBaseApi } from '../../src/kb/types.ts';

export interface KbFixture {
  services: Services;
  kb: KnowledgeBaseApi;
  server: LocalServer;
  dataDir: string;
}

export async function startKb(
  t: Test,
  env: Record<string, string> = {},
  overrides: Partial<RawConfig> = {},
  server?: LocalServer,
  opts: { startModels?: boolean } = {},
): Promise<KbFixture> {
  const config = testConfig(t, { ALLOW_PRIVATE_NETWORKS: 'true', ...env }, overrides);
  const services = createServices(config, { startModels: opts.startModels ?? false, inlineExtraction: true, log: pino({ level: 'silent' }) });
  t.teardown(() => services.close());
  const srv = server ?? (await startLocalServer());
  if (!server) t.teardown(() => srv.close());
  return { services, kb: services.kb, server: srv, dataDir: config.dataDir };
}

/** Serves `body` at `path` with a content type. */
export function serve(server: LocalServer, path: string, body: string | Buffer, type: string): void {
  server.route(path, (_q, res) => {
    res.writeHead(200, { 'content-type': type });
    res.end(body);
  });
}

export const TEXT_DOC = (word: string) =>
  `Notes about ${word}\n\nThe ${word} appears in this plain text document several times. ${word} is the topic.\n`;
export const HTML_DOC = (word: string) =>
  `<!doctype html><html><head><title>Page on ${word}</title></head><body><h1>${word}</h1><p>This page explains ${word} in detail, with ${word} examples.</p></body></html>`;
export const CSV_DOC = (word: string) => `name,value\n${word},1\nother,2\n`;

export async function waitEnded(kb: KnowledgeBaseApi, job: JobRecord, ms = 60_000): Promise<JobRecord> {
  return kb.waitForJob(job.id, ms);
}
