/**
 * Restart with a large collection, end to end: the compiled server (bin/rag-document-server.js) is
 * spawned on a DATA_DIR holding one collection of N chunks, and the clock runs from the spawn to
 * the first 200 of /health and of a collection search (which waits for the index to load). Twice:
 * with the snapshot at the collection's version ("fresh"), and after another process committed
 * more chunks that the snapshot lacks ("stale": loaded, then caught up from SQLite). Also the
 * server's RSS once the search answered, and the search answered again at once.
 *
 * The collection is written straight into the store (KbStore.replaceDocument, 1,000 chunks per
 * document, SciFact-like sentences), then a first server run rebuilds the index from it and saves
 * the snapshot, as a server that ingested it would have.
 *
 *   npm run bench:kb-restart                  (1M chunks)
 *   npm run bench:kb-restart -- 100000        (BENCH_QUICK=1: 100k)
 */
import { execFileSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { log, QUICK, quantile, round, ROOT, runStandalone, SectionBuilder } from './harness.ts';
import { addDocuments, PER_DOC, searchBig, snapshotWritten, startServer, stopServer } from './kb-server.ts';
import { scifactSource } from './scifact-chunks.ts';

const arg = Number(process.argv[2]);
const N = Number.isInteger(arg) && arg > 0 ? arg : QUICK ? 100_000 : 1_000_000;
const RUNS = 3;
const STALE_CHUNKS = 5_000;

interface Run {
  health: number;
  search: number;
  again: number;
  rssMb: number;
}

/** Spawns the server, polls until /health answers and then until a search answers 200. */
async function restart(dataDir: string, query: string, opts: { keep?: boolean; env?: Record<string, string> } = {}): Promise<Run & { child: ChildProcess; base: string }> {
  const t0 = performance.now();
  const { child, base, health } = await startServer(dataDir, opts.env);
  await searchBig(base, query);
  const searched = performance.now() - t0;
  const t1 = performance.now();
  await searchBig(base, query);
  const again = performance.now() - t1;
  const rss = fs.readFileSync(`/proc/${child.pid}/status`, 'utf8').match(/VmRSS:\s+(\d+)/);
  const run = { health, search: searched, again, rssMb: rss ? Number(rss[1]) / 1024 : NaN, child, base };
  if (!opts.keep) await stopServer(child);
  return run;
}

const CLIENTS = 8;
const PER_CLIENT = 60;

/**
 * CLIENTS HTTP clients searching at once (each PER_CLIENT different queries), against a server
 * started with `env`; the first searches (the replica opening on the workers) are a warm-up.
 */
async function concurrentHttp(dataDir: string, queries: string[], env: Record<string, string>): Promise<{ qps: number; p50: number; p95: number; health: number }> {
  const run = await restart(dataDir, queries[0], { keep: true, env });
  try {
    const base = run.base;
    const search = async (q: string) => {
      const res = await fetch(`${base}/v1/collections/big/search`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: q, top_k: 10, min_confidence: 'none' }) });
      if (res.status !== 200) throw new Error(`search ${res.status}`);
      await res.arrayBuffer();
    };
    for (let i = 0; i < 3; i++) await Promise.all(queries.slice(0, 16).map(search));
    const lat: number[] = [];
    const healthLat: number[] = [];
    let running = true;
    // /health meanwhile, one call at a time: what a load balancer's probe waits.
    const prober = (async () => {
      while (running) {
        const t = performance.now();
        await fetch(`${base}/health`).then((r) => r.arrayBuffer());
        healthLat.push(performance.now() - t);
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: CLIENTS }, async (_, c) => {
        for (let i = 0; i < PER_CLIENT; i++) {
          const t = performance.now();
          await search(queries[(c * PER_CLIENT + i) % queries.length]);
          lat.push(performance.now() - t);
        }
      }),
    );
    const secs = (performance.now() - t0) / 1000;
    running = false;
    await prober;
    const sorted = lat.sort((a, c) => a - c);
    return { qps: lat.length / secs, p50: quantile(sorted, 0.5), p95: quantile(sorted, 0.95), health: quantile(healthLat.sort((a, c) => a - c), 0.95) };
  } finally {
    await stopServer(run.child);
  }
}

await runStandalone(async () => {
  if (!fs.existsSync(path.join(ROOT, 'dist', 'src', 'server.js'))) throw new Error('dist/ is missing: run npm run build first');
  const b = new SectionBuilder('kb-restart', `Restart with a ${N.toLocaleString('en')}-chunk collection`, { chunks: N, runs: RUNS, stale_chunks: STALE_CHUNKS });
  b.note('The compiled server spawned on the DATA_DIR; times from the spawn. The search waits for the index (SEARCH_LOAD_WAIT_MS raised so it never answers 503), so "first search" includes reading and verifying the snapshot.');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-kb-restart-'));
  process.on('exit', () => fs.rmSync(dataDir, { recursive: true, force: true }));
  const kbDir = path.join(dataDir, 'kb');
  // SciFact sentences and claims, as the issue measured (generated look-alikes without ../shared/eval).
  const src = scifactSource(CLIENTS * PER_CLIENT + 1);
  const query = src.queries[CLIENTS * PER_CLIENT];
  b.note(`Chunks: ${src.kind}.`);

  log(`writing ${N} chunks into the store`);
  let t0 = performance.now();
  addDocuments(kbDir, 0, N / PER_DOC, src.chunk);
  b.note(`Store written in ${round((performance.now() - t0) / 1000, 1)} s.`);

  log('first start: the index is rebuilt from the store and saved');
  t0 = performance.now();
  const first = await restart(dataDir, query, { keep: true });
  await snapshotWritten(kbDir);
  await stopServer(first.child);
  b.note(`First start (rebuild from SQLite, then the snapshot saved): first search after ${round(first.search / 1000, 1)} s; snapshot written ${round((performance.now() - t0) / 1000, 1)} s after the spawn.`);

  const table = b.table('Spawn to ready (ms, median of runs; RSS after the first search)', ['snapshot', 'runs', '/health', 'first search', 'p max first search', 'next search', 'RSS MB']);
  const row = (label: string, runs: Run[]) => {
    const med = (f: (r: Run) => number) => round(quantile(runs.map(f).sort((a, c) => a - c), 0.5), 0);
    table.rows.push([label, runs.length, med((r) => r.health), med((r) => r.search), round(Math.max(...runs.map((r) => r.search)), 0), round(quantile(runs.map((r) => r.again).sort((a, c) => a - c), 0.5), 1), med((r) => r.rssMb)]);
    return med((r) => r.search);
  };
  const fresh: Run[] = [];
  for (let i = 0; i < RUNS; i++) fresh.push(await restart(dataDir, query));
  const freshMs = row('fresh (at the collection version)', fresh);
  log(`fresh: first search ${freshMs} ms after the spawn`);

  const http = b.table(`${CLIENTS} concurrent HTTP clients (POST /v1/collections/big/search, top 10, ${CLIENTS * PER_CLIENT} different queries; /health probed meanwhile)`, ['server', 'q/s', 'p50 ms', 'p95 ms', '/health p95 ms']);
  const queries = src.queries.slice(0, CLIENTS * PER_CLIENT);
  let workersQps = 0;
  for (const [label, env] of [['search workers (default)', {}], ['SEARCH_WORKERS=0 (main thread)', { SEARCH_WORKERS: '0' }]] as const) {
    const r = await concurrentHttp(dataDir, queries, env);
    http.rows.push([label, round(r.qps, 0), round(r.p50, 1), round(r.p95, 1), round(r.health, 1)]);
    log(`${label}: ${round(r.qps, 0)} q/s over HTTP`);
    if (label.startsWith('search workers')) workersQps = r.qps;
  }
  if (N >= 1_000_000) b.check(`${CLIENTS} HTTP clients at ${N} chunks >= 150 q/s`, workersQps >= 150, `${round(workersQps, 0)} q/s (issue 23's goal)`);

  // Another process commits: the snapshot is now behind the store by STALE_CHUNKS chunks. The
  // server that catches up saves a fresh snapshot, so the old one is put back before each run.
  const indexes = path.join(kbDir, 'indexes');
  const saved = path.join(dataDir, 'indexes-at-start');
  fs.cpSync(indexes, saved, { recursive: true });
  addDocuments(kbDir, N / PER_DOC, STALE_CHUNKS / PER_DOC, src.chunk);
  execFileSync('sync');
  const staleRuns: Run[] = [];
  for (let i = 0; i < RUNS; i++) {
    fs.rmSync(indexes, { recursive: true, force: true });
    fs.cpSync(saved, indexes, { recursive: true });
    // The copy's dirty pages written out first: the server's first fsync would otherwise flush them (ext4 orders data before its journal commit).
    execFileSync('sync');
    staleRuns.push(await restart(dataDir, query));
  }
  const staleMs = row(`stale (${STALE_CHUNKS.toLocaleString('en')} chunks behind, caught up from SQLite)`, staleRuns);
  log(`stale: first search ${staleMs} ms after the spawn`);

  b.check(`first search after a restart at ${N} chunks <= 2 s (fresh snapshot)`, freshMs <= 2_000, `${freshMs} ms (issue 23's goal)`);
  b.check(`first search after a restart at ${N} chunks <= 2 s (stale snapshot)`, staleMs <= 2_000, `${staleMs} ms (issue 23's goal)`);
  const rss = Math.max(...fresh.map((r) => r.rssMb));
  b.check(`steady RSS <= 1.2 GB per million chunks`, rss <= (1_200 * N) / 1_000_000 + 150, `${round(rss, 0)} MB at ${N} chunks (150 MB allowed for the server itself)`);
  return b.finish();
});
