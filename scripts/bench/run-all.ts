/**
 * `npm run bench`: every benchmark, one after another, each in its own Node process (a fresh heap,
 * no JIT or cache state carried from one to the next). Each writes its section into
 * bench/results.json and regenerates docs/benchmarks.md; a benchmark that crashes is recorded as
 * not run, with the reason, and the others still run.
 *
 *   npm run bench                       # all
 *   npm run bench -- extraction index   # some
 *   BENCH_QUICK=1 npm run bench         # fast smoke pass (fewer runs, smaller inputs)
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { ROOT, SectionBuilder, log, readResults, round, saveSection } from './harness.ts';

export const BENCHMARKS: Array<{ name: string; file: string; title: string }> = [
  { name: 'extraction', file: 'extraction.bench.ts', title: '1. Extraction throughput' },
  { name: 'chunking', file: 'chunking.bench.ts', title: '2. Chunking throughput' },
  { name: 'embedding', file: 'embedding.bench.ts', title: '3. Embedding and reranking throughput' },
  { name: 'index', file: 'index.bench.ts', title: '4. Vector index (HNSW)' },
  { name: 'e2e', file: 'e2e.bench.ts', title: '5. End to end: retrieve_chunks vs a LangChain.js pipeline' },
  { name: 'http-load', file: 'http-load.bench.ts', title: '6. HTTP load (autocannon)' },
  { name: 'startup', file: 'startup.bench.ts', title: '7. Start-up time' },
  { name: 'streams', file: 'streams.bench.ts', title: '8. Streams and big uploads' },
];

function runOne(file: string): Promise<{ code: number | null; tail: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'scripts', 'bench', file)], { cwd: ROOT, stdio: ['ignore', 'inherit', 'pipe'] });
    let tail = '';
    child.stderr.on('data', (d: Buffer) => {
      process.stderr.write(d);
      tail = (tail + d.toString()).slice(-2000);
    });
    child.on('close', (code) => resolve({ code, tail }));
  });
}

async function main(): Promise<void> {
  const wanted = process.argv.slice(2);
  const list = wanted.length ? BENCHMARKS.filter((b) => wanted.includes(b.name)) : BENCHMARKS;
  if (wanted.length && list.length !== wanted.length) {
    throw new Error(`unknown benchmark in ${wanted.join(', ')}; known: ${BENCHMARKS.map((b) => b.name).join(', ')}`);
  }
  const t0 = performance.now();
  const failed: string[] = [];
  for (const b of list) {
    log(`=== ${b.name}`);
    const started = performance.now();
    const { code, tail } = await runOne(b.file);
    log(`=== ${b.name} finished in ${round((performance.now() - started) / 1000, 1)} s (exit ${code})`);
    if (code !== 0) {
      failed.push(b.name);
      const s = new SectionBuilder(b.name, b.title);
      s.section.skipped = `the benchmark exited with ${code}: ${tail.trim().split('\n').slice(-3).join(' / ')}`;
      await saveSection(s.finish());
    }
  }
  const results = readResults();
  const checks = Object.values(results.sections).flatMap((s) => s.checks.map((c) => ({ s: s.name, ...c })));
  log(`all done in ${round((performance.now() - t0) / 1000 / 60, 1)} min; results in bench/results.json and docs/benchmarks.md`);
  for (const c of checks) log(`${c.pass ? 'PASS' : 'FAIL'} [${c.s}] ${c.name}: ${c.detail}`);
  if (failed.length) {
    log(`benchmarks that did not run: ${failed.join(', ')}`);
    process.exitCode = 1;
  }
}

await main();
