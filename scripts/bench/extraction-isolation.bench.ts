/**
 * What moving extraction into child processes buys: a big generated DOCX and a big text file are
 * extracted through the HTTP server while GET /health is polled every 20 ms, once with extraction
 * inline on the server's event loop (the old path) and once through the pool, side by side in one
 * run. Prints /health p50/p99/max, extraction time and memory (server RSS before / peak / after,
 * and the pool children's peak) with ratios. Each server runs in its own process, so the poller
 * never shares the loop it measures.
 *
 *   npm run bench:isolation            (BENCH_QUICK=1: smaller files, one round)
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';

type Mode = 'inline' | 'pooled';
const QUICK = process.env.BENCH_QUICK === '1';

// ---------------------------------------------------------------- server side (forked)

async function serve(mode: Mode): Promise<void> {
  const { buildApp } = await import('../../src/app.ts');
  const { loadConfig } = await import('../../src/config.ts');
  const { createServices } = await import('../../src/services.ts');
  const dataDir = mkdtempSync(path.join(os.tmpdir(), `bench-isolation-${mode}-`));
  const config = loadConfig({ DATA_DIR: dataDir, RATE_LIMIT_RPM: '0', LOG_LEVEL: 'silent', MAX_UPLOAD_BYTES: String(512 * 1024 * 1024) });
  const services = createServices(config, { startModels: false, inlineExtraction: mode === 'inline' });
  const app = await buildApp({ config, services });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as { port: number };
  process.send!({ port });
  // Close, clean up and exit when the parent goes; a failure there still ends the process.
  process.on('disconnect', () => {
    void (async () => {
      await app.close();
      await services.close();
      rmSync(dataDir, { recursive: true, force: true });
      process.exit(0);
    })().catch((err: unknown) => {
      process.stderr.write(`shutdown failed: ${String(err)}\n`);
      process.exit(1);
    });
  });
}

// ---------------------------------------------------------------- inputs

async function bigDocx(paragraphs: number, seed: string): Promise<Buffer> {
  const { Document, HeadingLevel, Packer, Paragraph, TextRun } = await import('docx');
  const children = [];
  for (let i = 0; i < paragraphs; i++) {
    if (i % 40 === 0) children.push(new Paragraph({ text: `Chapter ${i / 40 + 1} ${seed}`, heading: HeadingLevel.HEADING_1 }));
    children.push(
      new Paragraph({
        children: [
          new TextRun(`Paragraph ${i}: the survey team counted herons, egrets and bitterns along the northern marsh transect; `),
          new TextRun({ text: 'water levels were recorded at every station ', bold: i % 3 === 0 }),
          new TextRun(`and compared with the previous season (see https://example.org/reports/${i}).`),
        ],
      }),
    );
  }
  return Buffer.from(await Packer.toBuffer(new Document({ sections: [{ children }] })));
}

function bigText(mb: number, seed: string): Buffer {
  const line = (i: number) => `Line ${i} ${seed}: observers logged wading birds at https://example.org/site/${i % 997} near the reed beds.\n`;
  const parts: string[] = [];
  let size = 0;
  for (let i = 0; size < mb * 1024 * 1024; i++) {
    const l = line(i);
    parts.push(l);
    size += l.length;
  }
  return Buffer.from(parts.join(''));
}

// ---------------------------------------------------------------- measurement

function rssMb(pid: number): number {
  try {
    const m = /^VmRSS:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** Direct children of pid (the extraction children, for the pooled server). */
function childPids(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((tid) =>
      readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number),
    );
  } catch {
    return [];
  }
}

const q = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))] ?? NaN;

interface Run {
  docx_s: number;
  text_s: number;
  health_p50_ms: number;
  health_p99_ms: number;
  health_max_ms: number;
  health_probes: number;
  server_rss_before_mb: number;
  server_rss_peak_mb: number;
  server_rss_after_mb: number;
  children_rss_peak_mb: number;
}

async function upload(base: string, bytes: Buffer, filename: string): Promise<void> {
  const form = new FormData();
  form.set('file', new Blob([new Uint8Array(bytes)]), filename);
  const res = await fetch(`${base}/v1/documents/process`, { method: 'POST', body: form });
  const body = (await res.json()) as { content_length?: number; error?: string };
  if (res.status !== 200) throw new Error(`${filename}: HTTP ${res.status} ${body.error}`);
}

async function measure(server: { base: string; pid: number }, files: Array<{ bytes: Buffer; name: string }>): Promise<Run> {
  const before = rssMb(server.pid);
  let peak = before;
  let childPeak = 0;
  const latencies: number[] = [];
  let polling = true;
  const inflight = new Set<Promise<void>>();
  const poller = setInterval(() => {
    peak = Math.max(peak, rssMb(server.pid));
    childPeak = Math.max(childPeak, childPids(server.pid).reduce((a, p) => a + rssMb(p), 0));
    if (!polling) return;
    const started = performance.now();
    const p = fetch(`${server.base}/health`)
      .then((r) => r.arrayBuffer())
      .then(() => void latencies.push(performance.now() - started))
      .finally(() => inflight.delete(p));
    inflight.add(p);
  }, 20);
  const seconds: number[] = [];
  for (const f of files) {
    const t0 = performance.now();
    await upload(server.base, f.bytes, f.name);
    seconds.push((performance.now() - t0) / 1000);
  }
  polling = false;
  await Promise.all(inflight);
  clearInterval(poller);
  // Settled memory: what the server keeps once the big documents are done (they stay cached).
  await sleep(3000);
  const sorted = latencies.sort((a, b) => a - b);
  return {
    docx_s: seconds[0]!,
    text_s: seconds[1]!,
    health_p50_ms: q(sorted, 0.5),
    health_p99_ms: q(sorted, 0.99),
    health_max_ms: sorted.at(-1) ?? NaN,
    health_probes: sorted.length,
    server_rss_before_mb: before,
    server_rss_peak_mb: peak,
    server_rss_after_mb: rssMb(server.pid),
    children_rss_peak_mb: childPeak,
  };
}

async function startServer(mode: Mode): Promise<{ base: string; pid: number; proc: ChildProcess }> {
  const proc = fork(process.argv[1]!, ['--serve', mode], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const { port } = await new Promise<{ port: number }>((resolve, reject) => {
    proc.once('message', (m) => resolve(m as { port: number }));
    proc.once('exit', (code) => reject(new Error(`${mode} server exited (${code})`)));
  });
  return { base: `http://127.0.0.1:${port}`, pid: proc.pid!, proc };
}

async function main(): Promise<void> {
  const paragraphs = QUICK ? 6000 : 20_000;
  const textMb = QUICK ? 3 : 10;
  const rounds = QUICK ? 1 : 2;
  console.log(`inputs: DOCX of ${paragraphs} paragraphs, text of ${textMb} MB; ${rounds} round(s) of each, distinct files per round and mode`);
  const results: Record<Mode, Run[]> = { inline: [], pooled: [] };
  const sizes: string[] = [];
  for (const mode of ['inline', 'pooled'] as const) {
    const server = await startServer(mode);
    // Warm: load the extractors (and, pooled, start a child) before measuring.
    await upload(server.base, Buffer.from('Warm-up text about herons in the marsh.'), 'warm.txt');
    await upload(server.base, await bigDocx(20, `warm-${mode}`), 'warm.docx');
    for (let r = 0; r < rounds; r++) {
      const files = [
        { bytes: await bigDocx(paragraphs, `${mode}-${r}`), name: 'big.docx' },
        { bytes: bigText(textMb, `${mode}-${r}`), name: 'big.txt' },
      ];
      if (sizes.length === 0) sizes.push(...files.map((f) => `${f.name} ${(f.bytes.length / 1048576).toFixed(1)} MB`));
      results[mode].push(await measure(server, files));
    }
    server.proc.disconnect();
    await new Promise((r) => server.proc.once('exit', r));
  }
  console.log(`files: ${sizes.join(', ')}`);
  const keys = Object.keys(results.inline[0]!) as Array<keyof Run>;
  const med = (runs: Run[], k: keyof Run) => [...runs.map((x) => x[k])].sort((a, b) => a - b)[Math.floor((runs.length - 1) / 2)]!;
  const worst = (runs: Run[], k: keyof Run) => Math.max(...runs.map((x) => x[k]));
  console.log(`\n${'metric'.padEnd(24)}${'inline'.padStart(12)}${'pooled'.padStart(12)}${'inline/pooled'.padStart(16)}`);
  for (const k of keys) {
    // Latency and peaks: the worst round; the rest: the median round.
    const pick = /max|p99|peak|after/.test(k) ? worst : med;
    const a = pick(results.inline, k);
    const b = pick(results.pooled, k);
    const ratio = b === 0 ? '—' : (a / b).toFixed(2);
    console.log(`${k.padEnd(24)}${a.toFixed(k.endsWith('_s') ? 2 : 1).padStart(12)}${b.toFixed(k.endsWith('_s') ? 2 : 1).padStart(12)}${ratio.padStart(16)}`);
  }
}

if (process.argv[2] === '--serve') await serve(process.argv[3] as Mode);
else await main();
