/**
 * What the benchmarks that run the compiled server on a large collection share (kb-restart,
 * kb-serve): a collection written straight into the store, and the server spawned on it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { KbStore } from '../../src/kb/kb-store.ts';
import type { NewChunk } from '../../src/kb/types.ts';
import { freePort, ROOT } from './harness.ts';

/** Chunks per document the benchmarks write. */
export const PER_DOC = 1_000;

/** Adds `count` documents of PER_DOC chunks each (texts from `gen`) to collection "big", numbered from `from`. */
export function addDocuments(kbDir: string, from: number, count: number, gen: () => string): void {
  const store = new KbStore(kbDir);
  try {
    const c = store.getCollection('big') ?? store.createCollection('big', null);
    for (let d = from; d < from + count; d++) {
      const meta = { source: `https://bench.invalid/${d}`, source_kind: 'url' as const, source_key: `https://bench.invalid/${d}`, filename: null };
      const doc = store.ensureDocument(c.id, meta);
      const chunks: NewChunk[] = Array.from({ length: PER_DOC }, (_, i) => {
        const text = gen();
        return { ord: i, text, page_start: null, page_end: null, heading_path: [], char_start: 0, char_end: text.length, importance: 0.5, content_type: 'text' } satisfies NewChunk;
      });
      store.replaceDocument(c.id, doc.id, { ...meta, content_sha256: String(d).padStart(64, '0'), bytes: 100_000, type: 'text', title: null, pages: null, language: 'en', job_id: null }, chunks);
    }
  } finally {
    store.close();
  }
}

export interface Served {
  child: ChildProcess;
  base: string;
  /** Spawn to the first 200 of /health, ms. */
  health: number;
}

/** Spawns bin/rag-document-server.js on `dataDir` and waits for /health. */
export async function startServer(dataDir: string, env: Record<string, string> = {}): Promise<Served> {
  const port = await freePort();
  const t0 = performance.now();
  const child = spawn(process.execPath, [...(process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean), path.join(ROOT, 'bin', 'rag-document-server.js')], {
    env: { ...process.env, DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: process.env.BENCH_SERVER_LOG_LEVEL ?? 'warn', RATE_LIMIT_RPM: '1000000', SEARCH_LOAD_WAIT_MS: '600000', ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  for (;;) {
    const ok = await fetch(`${base}/health`).then((r) => r.ok).catch(() => false);
    if (ok) break;
    if (child.exitCode !== null) throw new Error(`server exited (${child.exitCode})`);
    await new Promise((r) => setTimeout(r, 10));
  }
  return { child, base, health: performance.now() - t0 };
}

/** POST /v1/collections/big/search, top 10, every confidence level kept; the parsed answer. */
export async function searchBig(base: string, query: string): Promise<{ results: unknown[]; timings_ms: Record<string, number> }> {
  const res = await fetch(`${base}/v1/collections/big/search`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query, top_k: 10, min_confidence: 'none' }) });
  if (res.status !== 200) throw new Error(`search ${res.status}: ${(await res.text()).slice(0, 300)}`);
  return (await res.json()) as { results: unknown[]; timings_ms: Record<string, number> };
}

export function stopServer(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

/** Waits until the collection's index snapshot is on disk (the registry saves it a moment after a rebuild). */
export async function snapshotWritten(kbDir: string): Promise<void> {
  const manifests = () => (fs.existsSync(path.join(kbDir, 'indexes')) ? fs.readdirSync(path.join(kbDir, 'indexes')) : []).map((d) => path.join(kbDir, 'indexes', d, 'manifest.json'));
  while (!manifests().some((m) => fs.existsSync(m))) await new Promise((r) => setTimeout(r, 100));
}
