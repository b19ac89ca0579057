/**
 * Scaling on Redis (issue: scale out): the same documents ingested with 1, 2 and 4 worker
 * processes (`--role worker`, INGEST_CONCURRENCY each) behind one API process, next to the
 * single process without Redis; then search throughput against 1 and 2 API processes on the
 * collection they share. Real processes (src/server.ts through tsx), a real redis-server (Debian's
 * package) and a loopback origin; everything on 127.0.0.1. Prints docs/s, searches/s and ratios.
 *
 *   npx tsx scripts/bench/scale.bench.ts                  # 300 documents, 10 s of searches per setup
 *   SCALE_DOCS=1000 SCALE_SEARCH_S=20 SCALE_CLIENTS=32 npx tsx scripts/bench/scale.bench.ts
 *
 * On a 2-core machine the processes share two cores: the ratios say where the machine, not the
 * design, is the limit (extraction children and the API all compete for the same CPUs).
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { startRedisServer } from '../../test/scale/redis-server.ts';
import { startApi, type ApiProcess } from '../../test/scale/api-process.ts';

const DOCS = Number(process.env.SCALE_DOCS ?? 300);
const SEARCH_S = Number(process.env.SCALE_SEARCH_S ?? 10);
const CLIENTS = Number(process.env.SCALE_CLIENTS ?? 16);
const WORDS = ['river', 'mountain', 'forest', 'desert', 'glacier', 'valley', 'island', 'canyon', 'meadow', 'tundra', 'harbor', 'prairie', 'lagoon', 'plateau'];

// Teardown for the helpers shared with the scale suite: run in reverse at the end.
const teardowns: Array<() => unknown> = [];
const t = { teardown: (fn: () => unknown) => void teardowns.push(fn) };
async function cleanup() {
  for (const fn of teardowns.reverse()) await Promise.resolve(fn()).catch(() => undefined);
  teardowns.length = 0;
}

const text = (i: number) =>
  `# Field note ${i}\n\n` +
  Array.from({ length: 30 }, (_, s) => `Sentence ${s} of note ${i} describes the ${WORDS[(i * 7 + s) % WORDS.length]} near the ${WORDS[(i + s * 3) % WORDS.length]} and marker${i}.`).join(' ') +
  '\n';

const origin = http.createServer((req, res) => {
  const i = Number(/\/doc-(\d+)\.txt/.exec(req.url ?? '')?.[1] ?? 0);
  res.writeHead(200, { 'content-type': 'text/plain' });
  res.end(text(i));
});
await new Promise<void>((r) => origin.listen(0, '127.0.0.1', r));
const base = `http://127.0.0.1:${(origin.address() as AddressInfo).port}`;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON of the API, read field by field
type Json = any;

async function call(api: ApiProcess | string, method: string, p: string, body?: unknown): Promise<{ status: number; body: Json }> {
  const address = typeof api === 'string' ? api : api.address;
  const res = await fetch(`${address}${p}`, { method, ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }) });
  const s = await res.text();
  return { status: res.status, body: s ? JSON.parse(s) : null };
}

/** Ingests documents from..from+count as jobs of at most 100 URLs (the REST limit), all at once; resolves when all ended. */
async function ingest(api: ApiProcess, collection: string, from: number, count: number): Promise<number> {
  const t0 = performance.now();
  const ids: string[] = [];
  for (let start = 0; start < count; start += 100) {
    const urls = Array.from({ length: Math.min(100, count - start) }, (_, k) => `${base}/doc-${from + start + k}.txt`);
    const r = await call(api, 'POST', `/v1/collections/${collection}/documents`, { urls });
    if (r.status !== 202) throw new Error(`ingest answered ${r.status}: ${JSON.stringify(r.body)}`);
    ids.push(r.body.id);
  }
  let done = 0;
  for (const id of ids) {
    for (;;) {
      const job = (await call(api, 'GET', `/v1/jobs/${id}`)).body;
      if (['succeeded', 'partial', 'failed', 'cancelled'].includes(job.status)) {
        if (job.counts.done !== job.counts.total) throw new Error(`job ${job.status}: ${JSON.stringify(job.counts)}`);
        done += job.counts.done;
        break;
      }
      await new Promise((res) => setTimeout(res, 100));
    }
  }
  if (done !== count) throw new Error(`${done} of ${count} documents ingested`);
  return performance.now() - t0;
}

/** Closed loop: CLIENTS callers, each sending its next search when the last answered, for SEARCH_S seconds. */
async function searchLoad(addresses: string[], collection: string): Promise<{ rps: number; p50: number; p95: number; errors: number }> {
  const lat: number[] = [];
  let errors = 0;
  const end = performance.now() + SEARCH_S * 1000;
  let n = 0;
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, c) => {
      while (performance.now() < end) {
        const q = `${WORDS[(n * 5 + c) % WORDS.length]} ${WORDS[(n * 3 + c * 2) % WORDS.length]} marker${(n * 31 + c) % DOCS}`;
        const address = addresses[n++ % addresses.length]!;
        const t0 = performance.now();
        const r = await call(address, 'POST', `/v1/collections/${collection}/search`, { query: q, top_k: 10 }).catch(() => ({ status: 0, body: null }));
        lat.push(performance.now() - t0);
        if (r.status !== 200) errors++;
      }
    }),
  );
  lat.sort((a, b) => a - b);
  const q = (p: number) => lat[Math.min(lat.length - 1, Math.floor(p * lat.length))]!;
  return { rps: lat.length / SEARCH_S, p50: q(0.5), p95: q(0.95), errors };
}

const fmt = (n: number, d = 1) => n.toFixed(d);

/** Busy and total jiffies of the whole machine (/proc/stat): how much of the CPUs a phase used. */
function cpuTimes(): { busy: number; total: number } {
  const f = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const idle = (f[3] ?? 0) + (f[4] ?? 0);
  const total = f.reduce((a, b) => a + b, 0);
  return { busy: total - idle, total };
}
async function measured<T>(fn: () => Promise<T>): Promise<{ value: T; cpu: number }> {
  const a = cpuTimes();
  const value = await fn();
  const b = cpuTimes();
  return { value, cpu: (b.busy - a.busy) / Math.max(1, b.total - a.total) };
}
const pct = (x: number) => `${Math.round(x * 100)}%`;
const rows: string[] = [];
const shared = fs.mkdtempSync(path.join(os.tmpdir(), 'rag-scale-bench-'));
const common = { ALLOW_PRIVATE_NETWORKS: 'true', RATE_LIMIT_RPM: '1000000', LOG_LEVEL: 'info' };

console.log(`scale bench: ${DOCS} documents, ${os.cpus().length} CPUs, ${CLIENTS} search clients for ${SEARCH_S} s per setup`);
try {
  // Baseline: one process, no Redis (the default deployment).
  {
    const api = await startApi(t, { ...common, DATA_DIR: path.join(shared, 'single') });
    await call(api, 'POST', '/v1/collections', { name: 'bench' });
    await ingest(api, 'bench', 1_000_000, 1); // warm-up: extraction child, language detector
    const { value: ms, cpu } = await measured(() => ingest(api, 'bench', 0, DOCS));
    rows.push(`| one process, no Redis | ${fmt(DOCS / (ms / 1000))} docs/s | 1.00 (baseline) | ${pct(cpu)} |`);
    await cleanup();
  }
  const redisRows: Array<{ workers: number; dps: number; cpu: number }> = [];
  for (const workers of [1, 2, 4]) {
    const redis = await startRedisServer(t);
    const dataDir = path.join(shared, `w${workers}`);
    const env = { ...common, REDIS_URL: redis.url, DATA_DIR: dataDir };
    const procs = await Promise.all([startApi(t, env, ['--role', 'api']), ...Array.from({ length: workers }, () => startApi(t, env, ['--role', 'worker']))]);
    const api = procs[0]!;
    await call(api, 'POST', '/v1/collections', { name: 'bench' });
    await ingest(api, 'bench', 1_000_000, workers * 2); // warm-up: every worker's first document
    const { value: ms, cpu } = await measured(() => ingest(api, 'bench', 0, DOCS));
    redisRows.push({ workers, dps: DOCS / (ms / 1000), cpu });
    if (workers === 4) {
      // The search runs use this collection: a second API joins, the workers stop.
      const api2 = await startApi(t, env, ['--role', 'api']);
      for (const p of procs.slice(1)) p.child.kill('SIGTERM');
      // Both APIs open the collection before the clock starts.
      await call(api, 'POST', '/v1/collections/bench/search', { query: 'warm' });
      await call(api2, 'POST', '/v1/collections/bench/search', { query: 'warm' });
      const chunks = (await call(api, 'GET', '/v1/collections/bench')).body.stats.chunks;
      const { value: one, cpu: cpu1 } = await measured(() => searchLoad([api.address], 'bench'));
      const { value: two, cpu: cpu2 } = await measured(() => searchLoad([api.address, api2.address], 'bench'));
      rows.push('');
      rows.push(`search on ${DOCS} documents (${chunks} chunks), ${CLIENTS} clients:`);
      rows.push('| API processes | searches/s | p50 ms | p95 ms | errors | ratio | machine CPU busy |');
      rows.push('|---|---|---|---|---|---|---|');
      rows.push(`| 1 | ${fmt(one.rps)} | ${fmt(one.p50)} | ${fmt(one.p95)} | ${one.errors} | 1.00 | ${pct(cpu1)} |`);
      rows.push(`| 2 | ${fmt(two.rps)} | ${fmt(two.p50)} | ${fmt(two.p95)} | ${two.errors} | ${fmt(two.rps / one.rps, 2)} | ${pct(cpu2)} |`);
    }
    await cleanup();
  }
  const one = redisRows[0]!.dps;
  const ingestRows = redisRows.map((r) => `| ${r.workers} worker${r.workers > 1 ? 's' : ''} + 1 API, Redis | ${fmt(r.dps)} docs/s | ${fmt(r.dps / one, 2)} (vs 1 worker) | ${pct(r.cpu)} |`);
  console.log(`\ningestion of ${DOCS} documents by URL (INGEST_CONCURRENCY 2 per process; machine CPU busy: all ${os.cpus().length} cores, every process):`);
  console.log('| setup | throughput | ratio | machine CPU busy |\n|---|---|---|---|');
  console.log([rows[0], ...ingestRows, ...rows.slice(1)].join('\n'));
} finally {
  await cleanup();
  origin.close();
  fs.rmSync(shared, { recursive: true, force: true });
}
