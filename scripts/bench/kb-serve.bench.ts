/**
 * Collection search through the compiled server at 100k and 1M chunks, one client at a time: the
 * latency issue 23 measured ("in-server": the search tool's own timings_ms.total_ms, from the
 * request's arrival in the tool to its answer), its lexical stage (timings_ms.lexical_ms: the
 * index search in a worker thread, the hand-off included) and the HTTP round trip a client on
 * loopback sees, each as p50 and p95, and how each grows from the smallest size to the largest.
 *
 * Each collection is written straight into the store (1,000 chunks per document, SciFact corpus
 * sentences, 1-3 per chunk, as kb-scale and kb-restart), a first server run rebuilds its index and
 * saves the snapshot, and the server measured is a second one started on it, as after a restart.
 * Every size is served at once and the searches alternate between them query by query, so the
 * growth compares sizes under the same machine state. Queries: SciFact train claims, each searched
 * once per server as a warm-up, then ROUNDS times in turn.
 * Top 10, lexical (no embedder is configured), every confidence level kept.
 *
 *   npm run bench:kb-serve                    (100k and 1M chunks)
 *   npm run bench:kb-serve -- 100000          (sizes as arguments; BENCH_QUICK=1: 100k only)
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { log, QUICK, quantile, round, ROOT, runStandalone, SectionBuilder } from './harness.ts';
import { addDocuments, PER_DOC, searchBig, snapshotWritten, startServer, stopServer } from './kb-server.ts';
import { scifactSource } from './scifact-chunks.ts';

const argSizes = process.argv.slice(2).map(Number).filter((n) => Number.isInteger(n) && n >= PER_DOC);
const SIZES = argSizes.length > 0 ? argSizes : QUICK ? [100_000] : [100_000, 1_000_000];
const QUERIES = 200;
const ROUNDS = 3;

const pct = (xs: number[], p: number) => round(quantile([...xs].sort((a, b) => a - b), p));

await runStandalone(async () => {
  if (!fs.existsSync(path.join(ROOT, 'dist', 'src', 'server.js'))) throw new Error('dist/ is missing: run npm run build first');
  const b = new SectionBuilder('kb-serve', 'Collection search through the server at 100k and 1M chunks', { sizes: SIZES, queries: QUERIES, rounds: ROUNDS, top_k: 10 });
  b.note('The compiled server on a DATA_DIR holding one collection, restarted on its saved snapshot (as after a restart), one client searching at a time over loopback HTTP: POST /v1/collections/big/search, top_k 10, min_confidence none, lexical (no embedder configured). "In-server" is the answer\'s timings_ms.total_ms; "lexical stage" its timings_ms.lexical_ms (the worker-thread search for 3 x top_k candidates, the hand-off included); "round trip" the client\'s.');
  const queries = scifactSource(QUERIES).queries;
  const lat = b.table(`Latency (ms, one client, every query ${ROUNDS} times, the sizes alternated query by query)`, ['chunks', 'searches', 'in-server p50', 'in-server p95', 'lexical stage p50', 'lexical stage p95', 'round trip p50', 'round trip p95', 'results (mean)']);
  const rows: Array<{ n: number; total: number; lexical: number; trip: number; totalP95: number }> = [];
  const dirs: string[] = [];
  const served: Array<{ n: number; base: string; child: ChildProcess }> = [];
  try {
    // Each collection written and indexed once (its snapshot saved), as a server that ingested it would have.
    for (const n of SIZES) {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-kb-serve-'));
      dirs.push(dataDir);
      const kbDir = path.join(dataDir, 'kb');
      log(`${n}: writing the store`);
      addDocuments(kbDir, 0, Math.ceil(n / PER_DOC), scifactSource(QUERIES).chunk);
      log(`${n}: first start, the index rebuilt and saved`);
      const first = await startServer(dataDir);
      await searchBig(first.base, queries[0]);
      await snapshotWritten(kbDir);
      await stopServer(first.child);
    }
    // Then every size served at once, restarted on its snapshot, and the searches alternated
    // query by query between them, so a slower moment of the machine hits every size alike.
    for (const [i, n] of SIZES.entries()) {
      const s = await startServer(dirs[i]);
      served.push({ n, base: s.base, child: s.child });
    }
    for (const s of served) for (const q of queries) await searchBig(s.base, q);
    const t = served.map(() => ({ total: [] as number[], lexical: [] as number[], trip: [] as number[], results: 0 }));
    for (let r = 0; r < ROUNDS; r++) {
      for (const q of queries) {
        for (const [i, s] of served.entries()) {
          const t0 = performance.now();
          const res = await searchBig(s.base, q);
          t[i].trip.push(performance.now() - t0);
          t[i].total.push(res.timings_ms.total_ms);
          t[i].lexical.push(res.timings_ms.lexical_ms);
          t[i].results += res.results.length;
        }
      }
    }
    for (const [i, s] of served.entries()) {
      const m = t[i];
      const row = { n: s.n, total: pct(m.total, 0.5), lexical: pct(m.lexical, 0.5), trip: pct(m.trip, 0.5), totalP95: pct(m.total, 0.95) };
      rows.push(row);
      lat.rows.push([s.n, m.total.length, row.total, row.totalP95, row.lexical, pct(m.lexical, 0.95), row.trip, pct(m.trip, 0.95), round(m.results / m.total.length, 1)]);
      b.section.data[`ms_${s.n}`] = { total: m.total, lexical: m.lexical, trip: m.trip };
      log(`${s.n}: in-server p50 ${row.total} ms, lexical ${row.lexical} ms, round trip ${row.trip} ms`);
    }
  } finally {
    await Promise.all(served.map((s) => stopServer(s.child)));
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  }
  const big = rows.find((r) => r.n >= 1_000_000);
  if (big) {
    b.check(`in-server p50 at ${big.n} chunks <= 10 ms`, big.total <= 10, `${big.total} ms (issue 23's goal)`);
    b.check(`in-server p95 at ${big.n} chunks <= 30 ms`, big.totalP95 <= 30, `${big.totalP95} ms (issue 23's goal)`);
  }
  if (rows.length > 1) {
    const first = rows[0];
    const last = rows[rows.length - 1];
    const g = b.table(`Growth of p50 from ${first.n} to ${last.n} chunks (x${round(last.n / first.n)} the chunks)`, ['measure', 'growth']);
    g.rows.push(['in-server', round(last.total / first.total)], ['lexical stage', round(last.lexical / first.lexical)], ['round trip', round(last.trip / first.trip)]);
    b.check('in-server p50 grows x3 or less', last.total / first.total <= 3, `x${round(last.total / first.total)} (issue 23's goal, measured in-server as the issue did; the index search alone in bench kb-scale)`);
  }
  return b.finish();
});
