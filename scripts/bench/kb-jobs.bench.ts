/**
 * Ingestion-job throughput on real services: N small generated text files ingested by path (one
 * job, a folder) and the same number by URL from a loopback server (20 jobs at once), with
 * extraction in child processes as the server runs it. Prints documents/s after a warm-up
 * document (first-use code loading is not ingestion), and the job runner's peak queue.
 *
 *   npx tsx scripts/bench/kb-jobs.bench.ts            # 500 documents each way
 *   KB_BENCH_DOCS=2000 INGEST_CONCURRENCY=4 npx tsx scripts/bench/kb-jobs.bench.ts
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { loadConfig } from '../../src/config.ts';
import { createServices } from '../../src/services.ts';

const N = Number(process.env.KB_BENCH_DOCS ?? 500);
const words = ['river', 'mountain', 'forest', 'desert', 'glacier', 'valley', 'island', 'canyon', 'meadow', 'tundra'];
const text = (i: number) =>
  `# Note ${i}\n\n` +
  Array.from({ length: 6 }, (_, s) => `Sentence ${s} of note ${i} mentions the ${words[(i + s) % words.length]} and item${i}.`).join(' ') +
  '\n';

const base = fs.mkdtempSync(path.join(os.tmpdir(), 'kb-jobs-bench-'));
const folder = path.join(base, 'files');
fs.mkdirSync(folder);
for (let i = 0; i < N; i++) fs.writeFileSync(path.join(folder, `note-${i}.md`), text(i));
const server = http.createServer((req, res) => {
  const i = Number(/\/doc-(\d+)\.txt/.exec(req.url ?? '')?.[1] ?? 0);
  res.writeHead(200, { 'content-type': 'text/plain' });
  res.end(text(N + i));
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

const config = loadConfig({
  DATA_DIR: path.join(base, 'data'),
  ALLOWED_DIRS: folder,
  ALLOW_PRIVATE_NETWORKS: 'true',
  LOG_LEVEL: 'silent',
  ...(process.env.INGEST_CONCURRENCY ? { INGEST_CONCURRENCY: process.env.INGEST_CONCURRENCY } : {}),
  INGEST_QUEUE_MAX: String(Math.max(1000, 2 * N)),
});
const services = createServices(config, { startModels: false, inlineExtraction: process.env.KB_BENCH_INLINE === '1' });
const kb = services.kb;
try {
  kb.createCollection('bench');
  // Warm-up: first download, extraction child start, language detector load.
  await kb.waitForJob((await kb.addDocuments('bench', { urls: [`${origin}/doc-999999.txt`] })).id, 120_000);

  let t0 = performance.now();
  const byPath = await kb.waitForJob((await kb.addDocuments('bench', { paths: [folder] })).id, 3_600_000);
  const pathMs = performance.now() - t0;

  t0 = performance.now();
  const per = Math.ceil(N / 20);
  const jobs = await Promise.all(
    Array.from({ length: 20 }, (_, j) =>
      kb.addDocuments('bench', { urls: Array.from({ length: per }, (_, k) => `${origin}/doc-${j * per + k}.txt`).slice(0, Math.max(0, N - j * per)) }).catch(() => null),
    ),
  );
  const ended = await Promise.all(jobs.filter((j) => j).map((j) => kb.waitForJob(j!.id, 3_600_000)));
  const urlMs = performance.now() - t0;
  const stats = kb.getCollection('bench').stats;
  const rss = Math.round(process.memoryUsage().rss / 1024 / 1024);
  console.log(
    JSON.stringify(
      {
        documents_per_way: N,
        ingest_concurrency: config.INGEST_CONCURRENCY,
        by_path: { status: byPath.status, ms: Math.round(pathMs), docs_per_s: +(N / (pathMs / 1000)).toFixed(1) },
        by_url_20_jobs: { statuses: [...new Set(ended.map((j) => j.status))], ms: Math.round(urlMs), docs_per_s: +(N / (urlMs / 1000)).toFixed(1) },
        collection: { documents: stats.documents, chunks: stats.chunks },
        rss_mb: rss,
      },
      null,
      2,
    ),
  );
} finally {
  await services.close();
  server.close();
  fs.rmSync(base, { recursive: true, force: true });
}
