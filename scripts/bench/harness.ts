/**
 * Shared benchmark harness: warm-up, repeated timed runs, medians and spread, peak RSS, the
 * side-by-side ratio against the comparison measured in the same run (interleaved, so both see the
 * same machine state), and the section file every benchmark writes.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { writeFileAtomic } from '../../src/util/atomic-file.ts';
import { mergeReport, renderSection, type ResultsFile, type Section, type Table } from './report.ts';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const SHARED = path.resolve(ROOT, '..', 'shared');
export const CORPUS = path.join(SHARED, 'corpus');
export const SCIFACT = path.join(SHARED, 'eval', 'scifact', 'corpus.jsonl');
export const BENCH_DIR = path.join(ROOT, 'bench');
export const RESULTS_FILE = path.join(BENCH_DIR, 'results.json');
export const DOC_FILE = path.join(ROOT, 'docs', 'benchmarks.md');
export const BENCH_MODELS_DIR = path.join(ROOT, 'data', 'bench-models');
export const BENCH_INPUTS_DIR = path.join(ROOT, 'data', 'bench-inputs');

export interface Sample {
  ms: number[];
  median_ms: number;
  p95_ms: number;
  min_ms: number;
  max_ms: number;
  /** (max - min) / median, a rough spread. */
  spread: number;
  peak_rss_mb: number;
}

export interface BenchOptions {
  warmup?: number;
  runs?: number;
}

export interface Pair {
  ours: Sample;
  baseline: Sample;
  /** baseline median / ours median: > 1 means ours is faster. */
  speedup: number;
}

export function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i];
}

export function round(x: number, digits = 2): number {
  if (!Number.isFinite(x)) return x;
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

export function summarize(ms: number[], peakMb = process.memoryUsage.rss() / 1024 / 1024): Sample {
  const sorted = [...ms].sort((a, b) => a - b);
  const median = quantile(sorted, 0.5);
  return {
    ms: ms.map((x) => round(x)),
    median_ms: round(median),
    p95_ms: round(quantile(sorted, 0.95)),
    min_ms: round(sorted[0]),
    max_ms: round(sorted[sorted.length - 1]),
    spread: round((sorted[sorted.length - 1] - sorted[0]) / median, 3),
    peak_rss_mb: round(peakMb, 1),
  };
}

/** Samples RSS every 5 ms while `fn` runs; returns the peak in MB. */
export async function withPeakRss<T>(fn: () => Promise<T>): Promise<{ value: T; peakMb: number }> {
  let peak = process.memoryUsage.rss();
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
  }, 5);
  try {
    const value = await fn();
    peak = Math.max(peak, process.memoryUsage.rss());
    return { value, peakMb: peak / 1024 / 1024 };
  } finally {
    clearInterval(timer);
  }
}

export async function time(fn: () => Promise<unknown> | unknown): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

export async function measure(fn: () => Promise<unknown> | unknown, opts: BenchOptions = {}): Promise<Sample> {
  const warmup = opts.warmup ?? 1;
  const runs = opts.runs ?? 5;
  for (let i = 0; i < warmup; i++) await fn();
  const ms: number[] = [];
  const { peakMb } = await withPeakRss(async () => {
    for (let i = 0; i < runs; i++) ms.push(await time(fn));
  });
  return summarize(ms, peakMb);
}

/**
 * Ours and the baseline, warmed up, then timed alternately (A B, B A, A B, ...) so drift from
 * other load on the machine hits both equally.
 */
export async function comparePair(
  ours: () => Promise<unknown> | unknown,
  baseline: () => Promise<unknown> | unknown,
  opts: BenchOptions = {},
): Promise<Pair> {
  const warmup = opts.warmup ?? 1;
  const runs = opts.runs ?? 5;
  for (let i = 0; i < warmup; i++) {
    await baseline();
    await ours();
  }
  const a: number[] = [];
  const b: number[] = [];
  const { peakMb } = await withPeakRss(async () => {
    for (let i = 0; i < runs; i++) {
      if (i % 2 === 0) {
        a.push(await time(ours));
        b.push(await time(baseline));
      } else {
        b.push(await time(baseline));
        a.push(await time(ours));
      }
    }
  });
  const o = summarize(a, peakMb);
  const bl = summarize(b, peakMb);
  return { ours: o, baseline: bl, speedup: round(bl.median_ms / o.median_ms, 3) };
}

export function machine(): Record<string, unknown> {
  const cpus = os.cpus();
  const load = os.loadavg();
  return {
    cpu: cpus[0]?.model ?? 'unknown',
    cores: cpus.length,
    memory_gb: round(os.totalmem() / 1024 ** 3, 1),
    node: process.version,
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    load_average_1m_at_start: round(load[0], 2),
  };
}

// ------------------------------------------------------------------ results and report sections

export class SectionBuilder {
  private readonly started = performance.now();
  readonly section: Section;

  constructor(name: string, title: string, settings: Record<string, unknown> = {}) {
    this.section = {
      name,
      title,
      started_at: new Date().toISOString(),
      duration_s: 0,
      machine: machine(),
      settings,
      tables: [],
      checks: [],
      notes: [],
      data: {},
    };
  }

  table(title: string, columns: string[], note?: string): Table {
    const t: Table = { title, columns, rows: [], note };
    this.section.tables.push(t);
    return t;
  }

  check(name: string, pass: boolean, detail: string): void {
    this.section.checks.push({ name, pass, detail });
    log(`${pass ? 'PASS' : 'FAIL'} ${name}: ${detail}`);
  }

  note(text: string): void {
    this.section.notes.push(text);
  }

  finish(): Section {
    this.section.duration_s = round((performance.now() - this.started) / 1000, 1);
    return this.section;
  }
}

export function log(...args: unknown[]): void {
  process.stderr.write(`[bench] ${args.map((a) => (typeof a === 'string' ? a : JSON.stringify(a))).join(' ')}\n`);
}

export function readResults(): ResultsFile {
  try {
    return JSON.parse(fs.readFileSync(RESULTS_FILE, 'utf8')) as ResultsFile;
  } catch {
    return { generated_at: new Date().toISOString(), machine: machine(), sections: {} };
  }
}

/** Writes a generated input file whole or not at all (temp beside it + rename), synchronously. */
export function writeAtomic(file: string, text: string | Uint8Array): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    fs.writeFileSync(tmp, text);
    fs.renameSync(tmp, file);
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw err;
  }
}

/**
 * Records one section: merged into bench/results.json (raw numbers, local) and put in place of
 * that benchmark's part of docs/benchmarks.md, every other part kept as it is.
 */
export async function saveSection(section: Section): Promise<void> {
  const results = readResults();
  results.sections[section.name] = section;
  results.generated_at = new Date().toISOString();
  results.machine = machine();
  await writeFileAtomic(RESULTS_FILE, JSON.stringify(results, null, 1) + '\n');
  const doc = fs.existsSync(DOC_FILE) ? fs.readFileSync(DOC_FILE, 'utf8') : null;
  await writeFileAtomic(DOC_FILE, mergeReport(doc, section));
  log(`wrote ${path.relative(ROOT, RESULTS_FILE)} and the ${section.name} part of ${path.relative(ROOT, DOC_FILE)}`);
}

/** Entry point shared by every benchmark file: runs it, prints its tables, saves the section. */
export async function runStandalone(fn: () => Promise<Section>): Promise<void> {
  try {
    const section = await fn();
    process.stdout.write(renderSection(section) + '\n');
    await saveSection(section);
    process.exit(0);
  } catch (err) {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  }
}

export function isMain(importMetaUrl: string): boolean {
  return !!process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(importMetaUrl);
}

/** Full-size runs unless BENCH_QUICK=1 (a fast smoke pass of the whole suite). */
export const QUICK = process.env.BENCH_QUICK === '1';

/** Runs a TypeScript file in a fresh Node process (tsx) and parses the last stdout line as JSON. */
export function runChild(
  file: string,
  args: string[],
  opts: { env?: Record<string, string>; timeoutMs?: number; nodeArgs?: string[] } = {},
): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...(opts.nodeArgs ?? []), '--import', 'tsx', file, ...args], {
      cwd: ROOT,
      env: { ...process.env, ...opts.env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const timer = opts.timeoutMs ? setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs) : null;
    child.on('error', reject);
    child.on('close', (code) => {
      if (timer) clearTimeout(timer);
      const last = out.trim().split('\n').pop() ?? '';
      if (code !== 0) return reject(new Error(`${path.basename(file)} ${args.join(' ')} exited with ${code}: ${last.slice(0, 500)}`));
      try {
        resolve(JSON.parse(last));
      } catch {
        reject(new Error(`${path.basename(file)} printed no JSON: ${last.slice(0, 500)}`));
      }
    });
  });
}

export const mb = (bytes: number) => bytes / 1024 / 1024;

export interface ChildServer<T> {
  info: T;
  pid: number;
  /** Resident set size of the child now, in MB (from /proc). */
  rssMb(): number;
  /** Asks the child (SIGUSR2) for its next JSON line, e.g. memory after a forced GC. */
  ask<R>(timeoutMs?: number): Promise<R>;
  stop(): Promise<void>;
}

/** Starts a long-running TypeScript child that prints one JSON line when ready (and one per SIGUSR2). */
export function startChildServer<T>(file: string, args: string[], opts: { timeoutMs?: number; nodeArgs?: string[] } = {}): Promise<ChildServer<T>> {
  const timeoutMs = opts.timeoutMs ?? 120_000;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...(opts.nodeArgs ?? []), '--import', 'tsx', file, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
    let buf = '';
    const lines: string[] = [];
    let waiter: ((line: string) => void) | null = null;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${path.basename(file)} did not start within ${timeoutMs} ms`));
    }, timeoutMs);
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    child.once('exit', (code) => reject(new Error(`${path.basename(file)} exited with ${code} before it was ready`)));
    const nextLine = (ms: number) =>
      new Promise<string>((res, rej) => {
        const queued = lines.shift();
        if (queued !== undefined) return res(queued);
        const t = setTimeout(() => rej(new Error(`${path.basename(file)} sent no line within ${ms} ms`)), ms);
        waiter = (line) => {
          clearTimeout(t);
          res(line);
        };
      });
    child.stdout.on('data', (d: Buffer) => {
      buf += d.toString();
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (waiter) {
          const w = waiter;
          waiter = null;
          w(line);
        } else lines.push(line);
      }
    });
    void nextLine(timeoutMs).then((first) => {
      clearTimeout(timer);
      resolve({
        info: JSON.parse(first) as T,
        pid: child.pid!,
        rssMb: () => {
          const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${child.pid}/status`, 'utf8'));
          return m ? Number(m[1]) / 1024 : NaN;
        },
        ask: async <R>(ms = 30_000) => {
          child.kill('SIGUSR2');
          return JSON.parse(await nextLine(ms)) as R;
        },
        stop: async () => {
          child.kill('SIGTERM');
          const t = setTimeout(() => child.kill('SIGKILL'), 10_000);
          await exited;
          clearTimeout(t);
        },
      });
    }, reject);
  });
}

/**
 * Several variants measured round-robin (A B C, B C A, C A B, ...) after one warm-up each, so slow
 * drift in machine load spreads over all of them instead of landing on whichever ran last.
 */
export async function measureRoundRobin(variants: Array<() => Promise<unknown> | unknown>, rounds: number): Promise<Sample[]> {
  for (const v of variants) await v();
  const ms: number[][] = variants.map(() => []);
  for (let r = 0; r < rounds; r++) {
    for (let j = 0; j < variants.length; j++) {
      const i = (j + r) % variants.length;
      ms[i].push(await time(variants[i]));
    }
  }
  return ms.map((m) => summarize(m));
}

/** A loopback TCP port free at the moment of asking (for a server a benchmark spawns). */
export { freePort } from '../../test/free-port.ts';
