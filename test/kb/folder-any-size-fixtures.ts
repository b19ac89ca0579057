/**
 * Shared set-up of the folder-of-any-size tests: a generated folder of small text files (each with
 * one word of its own, so a search tells whether it is in), spread over nested subfolders, and the
 * app on real services (extraction in this process, no models) over it with a small queue.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Test } from 'tap';
import pino from 'pino';
import type { FastifyInstance } from 'fastify';
import { buildTestApp, tempDir, testConfig } from '../helper.ts';
import { createServices } from '../../src/services.ts';

/** The word only file `i` holds. */
export const wordOf = (i: number) => `zq${i.toString(36)}x${(i * 7919).toString(36)}`;

/**
 * `count` files under `root`: a quarter in the root, the rest in a/, a/b/ and c/ (so a walk crosses
 * folders), plus, when asked, a symlink that leads outside and a dangling one (skipped items).
 */
export function makeFolder(root: string, count: number, opts: { links?: string } = {}): string[] {
  const dirs = ['', 'a', path.join('a', 'b'), 'c'];
  for (const d of dirs) fs.mkdirSync(path.join(root, d), { recursive: true });
  const files: string[] = [];
  for (let i = 0; i < count; i++) {
    const file = path.join(root, dirs[i % dirs.length]!, `note-${String(i).padStart(5, '0')}.txt`);
    fs.writeFileSync(file, `Note ${i}\n\nThis short note mentions ${wordOf(i)} once.\n`);
    files.push(file);
  }
  if (opts.links) {
    fs.writeFileSync(path.join(opts.links, 'secret.txt'), 'not to be ingested\n');
    fs.symlinkSync(path.join(opts.links, 'secret.txt'), path.join(root, 'a', 'escape.txt'));
    fs.symlinkSync(path.join(opts.links, 'gone.txt'), path.join(root, 'c', 'dangling.txt'));
  }
  return files;
}

export interface FolderApp {
  app: FastifyInstance;
  dataDir: string;
  base: string;
}

/** A temp base folder (ALLOWED_DIRS) and the app over it. */
export async function startFolderApp(t: Test, env: Record<string, string>, base = fs.realpathSync(tempDir(t, 'kb-folder-'))): Promise<FolderApp> {
  const config = testConfig(t, { ALLOWED_DIRS: base, ...env });
  const services = createServices(config, { startModels: false, inlineExtraction: true, log: pino({ level: 'silent' }) });
  t.teardown(() => services.close());
  const app = await buildTestApp(t, { config, services });
  return { app, dataDir: config.dataDir, base };
}

export async function getJob(app: FastifyInstance, id: string): Promise<any> {
  const res = await app.inject({ url: `/v1/jobs/${id}` });
  if (res.statusCode !== 200) throw new Error(`GET /v1/jobs/${id}: ${res.statusCode} ${res.body}`);
  return res.json();
}

export async function kbHealth(app: FastifyInstance): Promise<any> {
  return (await app.inject({ url: '/v1/system/health' })).json().features.knowledge_base;
}

/**
 * Polls until the job ends, calling `each` with the knowledge base's health on every round (the
 * documents waiting are read through /v1/system/health). The deadline bounds only a failure; a
 * big job is polled less often (each answer carries every item).
 */
export async function pollJobEnd(app: FastifyInstance, id: string, each: (kb: any, job: any) => void = () => undefined, timeoutMs = 300_000, everyMs = 25): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const job = await getJob(app, id);
    each(await kbHealth(app), job);
    if (!['queued', 'running'].includes(job.status)) return job;
    if (Date.now() > deadline) throw new Error(`job ${id} did not end within ${timeoutMs} ms: ${JSON.stringify(job.counts)}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
