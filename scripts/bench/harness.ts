/**
 * Shared benchmark harness: warm-up, repeated timed runs, medians and spread, peak RSS, and the
 * side-by-side ratio against the comparison measured in the same run.
 */
import os from 'node:os';
import { performance } from 'node:perf_hooks';

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

export interface Measurement {
  name: string;
  ours: Sample & Record<string, unknown>;
  baseline?: Sample & Record<string, unknown>;
  baseline_name?: string;
  /** baseline median / ours median: > 1 means we are faster. */
  speedup?: number;
  /** Extra numbers (throughput, recall, ...). */
  extra?: Record<string, unknown>;
}

export interface BenchOptions {
  warmup?: number;
  runs?: number;
}

export function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i];
}

/** Samples RSS every 5 ms while `fn` runs; returns the peak in MB. */
async function withPeakRss<T>(fn: () => Promise<T>): Promise<{ value: T; peakMb: number }> {
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

export async function measure(fn: () => Promise<unknown> | unknown, opts: BenchOptions = {}): Promise<Sample> {
  const warmup = opts.warmup ?? 1;
  const runs = opts.runs ?? 5;
  for (let i = 0; i < warmup; i++) await fn();
  const ms: number[] = [];
  const { peakMb } = await withPeakRss(async () => {
    for (let i = 0; i < runs; i++) {
      const t0 = performance.now();
      await fn();
      ms.push(performance.now() - t0);
    }
  });
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

/** Measures ours and the baseline alternately in one process, so both see the same machine state. */
export async function compare(
  name: string,
  ours: () => Promise<unknown> | unknown,
  baselineName: string,
  baseline: () => Promise<unknown> | unknown,
  opts: BenchOptions = {},
): Promise<Measurement> {
  const b = await measure(baseline, opts);
  const o = await measure(ours, opts);
  return { name, ours: o, baseline: b, baseline_name: baselineName, speedup: round(b.median_ms / o.median_ms, 3) };
}

export function round(x: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

export function machine(): Record<string, unknown> {
  const cpus = os.cpus();
  return {
    cpu: cpus[0]?.model ?? 'unknown',
    cores: cpus.length,
    memory_gb: round(os.totalmem() / 1024 ** 3, 1),
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
  };
}
