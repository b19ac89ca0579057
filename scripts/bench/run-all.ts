/**
 * `npm run bench`: the benchmarks of scripts/bench/registry.ts, one after another, each in its own
 * Node process (a fresh heap, no JIT or cache state carried from one to the next). A benchmark on
 * the shared harness writes its own part of docs/benchmarks.md; for one that prints its own tables
 * this runner records what it printed. A benchmark that fails is recorded as not run, with the
 * reason, and the others still run. Only the parts of the benchmarks that ran are replaced.
 *
 *   npm run bench                          # all
 *   npm run bench -- extraction index      # some
 *   npm run bench -- kb-store 20000        # one, with its own arguments (same as npm run bench:kb-store -- 20000)
 *   npm run bench -- --check               # the registry against the folder and package.json
 *   BENCH_QUICK=1 npm run bench            # fast smoke pass (fewer runs, smaller inputs)
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { ROOT, SectionBuilder, log, readResults, round, saveSection } from './harness.ts';
import { BENCHMARKS, benchmarkNamed, registryProblems, type Benchmark } from './registry.ts';

const BENCH_DIR = path.join(ROOT, 'scripts', 'bench');
/** What a printing benchmark's part keeps of its output (its tables come last). */
const OUTPUT_KEEP_CHARS = 20_000;

function runOne(b: Benchmark, args: string[]): Promise<{ code: number | null; out: string; tail: string }> {
  return new Promise((resolve) => {
    // --expose-gc: benchmarks that read memory force a collection first when they can.
    const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', path.join(BENCH_DIR, b.file), ...args], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let tail = '';
    child.stdout.on('data', (d: Buffer) => {
      process.stdout.write(d);
      out += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      process.stderr.write(d);
      tail = (tail + d.toString()).slice(-2000);
    });
    child.on('close', (code) => resolve({ code, out, tail }));
  });
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv.includes('--check')) {
    const problems = registryProblems();
    for (const p of problems) log(`registry: ${p}`);
    log(problems.length ? `${problems.length} registry problem(s)` : `registry: ${BENCHMARKS.length} benchmarks, every file and bench:* script listed`);
    process.exitCode = problems.length ? 1 : 0;
    return;
  }
  let split = argv.findIndex((a) => !benchmarkNamed(a));
  if (split < 0) split = argv.length;
  const names = argv.slice(0, split);
  const extra = argv.slice(split);
  if (extra.length && names.length !== 1) {
    throw new Error(`unknown benchmark ${extra[0]}; known: ${BENCHMARKS.map((b) => b.name).join(', ')} (arguments follow exactly one name)`);
  }
  const list = names.length ? names.map((n) => benchmarkNamed(n)!) : BENCHMARKS;
  const t0 = performance.now();
  const failed: string[] = [];
  for (const b of list) {
    log(`=== ${b.name}`);
    const started = new SectionBuilder(b.name, b.title, extra.length ? { arguments: extra.join(' ') } : {});
    const { code, out, tail } = await runOne(b, extra);
    const section = started.finish();
    log(`=== ${b.name} finished in ${section.duration_s} s (exit ${code})`);
    if (code !== 0) {
      failed.push(b.name);
      section.skipped = `the benchmark exited with ${code}: ${tail.trim().split('\n').slice(-3).join(' / ')}`;
      await saveSection(section);
    } else if (b.report === 'output') {
      section.output = out.length > OUTPUT_KEEP_CHARS ? `[... ${out.length - OUTPUT_KEEP_CHARS} characters before]\n${out.slice(-OUTPUT_KEEP_CHARS)}` : out;
      if (process.env.BENCH_QUICK === '1') section.notes.push('BENCH_QUICK=1: a smoke pass with smaller inputs.');
      await saveSection(section);
    }
  }
  const results = readResults();
  const checks = list.flatMap((b) => (results.sections[b.name]?.checks ?? []).map((c) => ({ s: b.name, ...c })));
  log(`done in ${round((performance.now() - t0) / 1000 / 60, 1)} min; results in bench/results.json and docs/benchmarks.md`);
  for (const c of checks) log(`${c.pass ? 'PASS' : 'FAIL'} [${c.s}] ${c.name}: ${c.detail}`);
  if (failed.length) {
    log(`benchmarks that did not run: ${failed.join(', ')}`);
    process.exitCode = 1;
  }
}

await main();
