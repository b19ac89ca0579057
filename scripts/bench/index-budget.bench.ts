/**
 * `npm run bench:index-budget`: 200 collections searched once each, memory read afterwards, with
 * KB_INDEX_CACHE_MB small (64) beside effectively unbounded (1,000,000), each run in a fresh
 * process. Prints RSS and heap after a forced GC, open collections and their approximate bytes.
 *
 *   COLLECTIONS=200 DOCS=12 npm run bench:index-budget
 */
import { spawnSync } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';

const COLLECTIONS = Number(process.env.COLLECTIONS ?? 200);
const DOCS = Number(process.env.DOCS ?? 30);
const BUDGET_MB = Number(process.env.BUDGET_MB ?? 16);

function text(c: number, d: number): string {
  // Distinct vocabulary per collection, so each index holds its own terms.
  const words = Array.from({ length: 400 }, (_, i) => `w${c}x${(i * 7 + d * 13) % 997}`);
  return `Report ${c}-${d}\n\n${words.join(' ')}.\n`;
}

async function child(budgetMb: number): Promise<void> {
  const { createServices } = await import('../../src/services.ts');
  const { loadConfig } = await import('../../src/config.ts');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-index-budget-'));
  const server = http.createServer((req, res) => {
    const m = /\/(\d+)-(\d+)\.txt/.exec(req.url ?? '');
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end(m ? text(Number(m[1]), Number(m[2])) : '');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const config = loadConfig({ DATA_DIR: dataDir, ALLOW_PRIVATE_NETWORKS: 'true', KB_INDEX_CACHE_MB: String(budgetMb), INGEST_CONCURRENCY: '2' });
  const services = createServices(config, { startModels: false, inlineExtraction: true, log: pino({ level: 'silent' }) });
  const kb = services.kb;
  for (let c = 0; c < COLLECTIONS; c++) {
    kb.createCollection(`c${c}`, null);
    const job = await kb.addDocuments(`c${c}`, { urls: Array.from({ length: DOCS }, (_, d) => `${base}/${c}-${d}.txt`) });
    const done = await kb.waitForJob(job.id, 120_000);
    if (done.status !== 'succeeded') throw new Error(`job ${job.id}: ${done.status}`);
  }
  // A fresh start would open nothing; searching once opens each collection.
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  const before = process.memoryUsage();
  const t0 = performance.now();
  for (let c = 0; c < COLLECTIONS; c++) {
    const r = await kb.search(`c${c}`, { query: `w${c}x7 w${c}x14`, top_k: 5 }, { signal: AbortSignal.timeout(60_000) });
    if (r.results.length === 0) throw new Error(`c${c}: no hits`);
  }
  const searchMs = performance.now() - t0;
  gc?.();
  const after = process.memoryUsage();
  const s = kb.stats() as Record<string, number>;
  process.stdout.write(
    JSON.stringify({
      budget_mb: budgetMb,
      indexes_open: s.indexes_open,
      indexes_approx_mb: +(s.indexes_approx_bytes! / 2 ** 20).toFixed(1),
      rss_mb_before_searches: +(before.rss / 2 ** 20).toFixed(0),
      rss_mb_after: +(after.rss / 2 ** 20).toFixed(0),
      heap_mb_after: +(after.heapUsed / 2 ** 20).toFixed(0),
      external_mb_after: +((after.external + after.arrayBuffers) / 2 ** 20).toFixed(0),
      search_all_ms: +searchMs.toFixed(0),
    }) + '\n',
  );
  await services.close();
  server.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
}

if (process.argv[2] === '--child') {
  await child(Number(process.argv[3]));
} else {
  const rows: Array<Record<string, number>> = [];
  for (const budget of [BUDGET_MB, 1_000_000]) {
    const r = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', import.meta.filename, '--child', String(budget)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
    if (r.status !== 0) throw new Error(`child (budget ${budget}) exited ${r.status}`);
    rows.push(JSON.parse(r.stdout.trim().split('\n').at(-1)!));
  }
  console.log(`${COLLECTIONS} collections x ${DOCS} documents, each searched once (lexical)`);
  console.table(rows);
  const [small, big] = rows as [Record<string, number>, Record<string, number>];
  console.log(`open index bytes: ${small.indexes_approx_mb} MB with a ${BUDGET_MB} MB budget vs ${big.indexes_approx_mb} MB unbounded (${(small.indexes_approx_mb! / big.indexes_approx_mb!).toFixed(2)}x); RSS ${small.rss_mb_after} vs ${big.rss_mb_after} MB`);
}
