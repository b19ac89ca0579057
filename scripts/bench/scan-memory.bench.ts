/**
 * Memory of OCR'ing a 600-dpi scanned PDF (Letter pages, each one 5100 x 6600 JPEG of text),
 * 4 and 35 pages, uploaded to process_document on a real server in a child process. Prints the
 * peak RSS growth of the server plus its extraction children (VmRSS of each, polled every 50 ms,
 * summed; and the sum of their VmHWM), seconds per page and OCR word recall against the text
 * drawn on the pages.
 *
 * SCAN_MODE=in-process runs extractPdf with a real OCR pool in a fresh child process instead
 * (the same process tree measured, no HTTP): the server's document timeout (300 s) cuts a
 * 35-page scan short on a slow or busy machine; the server mode then reports what it measured up
 * to the timeout.
 *
 *   npm run bench:scan-memory              (SCAN_PAGES=4,35, SCAN_MODE=server,in-process)
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { makeScanPdf } from '../../test/fixtures-gen/make-scan-fixtures.ts';
import { wordRecall } from '../../test/extractors/word-recall.ts';

async function serve(): Promise<void> {
  const { buildApp } = await import('../../src/app.ts');
  const { loadConfig } = await import('../../src/config.ts');
  const { createServices } = await import('../../src/services.ts');
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'bench-scan-memory-'));
  const config = loadConfig({
    DATA_DIR: dataDir,
    RATE_LIMIT_RPM: '0',
    LOG_LEVEL: 'silent',
    MAX_UPLOAD_BYTES: String(512 * 1024 * 1024),
    OCR_MAX_PAGES: '1000',
    REQUEST_TIMEOUT: '3600',
  });
  const services = createServices(config, { startModels: false });
  const app = await buildApp({ config, services });
  await app.listen({ host: '127.0.0.1', port: 0 });
  process.send!({ port: (app.server.address() as { port: number }).port });
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

async function extractInProcess(file: string): Promise<void> {
  const { OcrPool } = await import('../../src/extractors/ocr/ocr-pool.ts');
  const { extractPdf } = await import('../../src/extractors/pdf/pdf.ts');
  const cacheDir = mkdtempSync(path.join(os.tmpdir(), 'bench-scan-ocr-'));
  const ocr = new OcrPool({ size: 2, cacheDir });
  // Nothing is warmed: like the server's, the growth includes starting the OCR workers.
  process.send!({ ready: true });
  await new Promise((r) => process.once('message', r));
  const doc = await extractPdf({ bytes: readFileSync(file), filename: 'scan.pdf', signal: AbortSignal.timeout(3_600_000), ocr: { maxPages: 1000 } }, { ocr });
  process.send!({ content: doc.content, metadata: doc.metadata });
  await ocr.close();
  rmSync(cacheDir, { recursive: true, force: true });
  process.disconnect?.();
}

function statusKb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

function childPids(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((tid) => readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number));
  } catch {
    return [];
  }
}

const treeKb = (pid: number, field: 'VmRSS' | 'VmHWM') => [pid, ...childPids(pid)].reduce((a, p) => a + statusKb(p, field), 0);

async function startServer(): Promise<{ base: string; pid: number; proc: ChildProcess }> {
  const proc = fork(process.argv[1]!, ['--serve'], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const { port } = await new Promise<{ port: number }>((resolve, reject) => {
    proc.once('message', (m) => resolve(m as { port: number }));
    proc.once('exit', (code) => reject(new Error(`server exited (${code})`)));
  });
  return { base: `http://127.0.0.1:${port}`, pid: proc.pid!, proc };
}

/** The in-process child, started and warmed (OCR worker up); run() extracts and resolves its output. */
async function startInProcess(pdf: Buffer): Promise<{ pid: number; run: () => Promise<{ content: string; metadata: Record<string, unknown> }>; done: () => void }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-scan-pdf-'));
  const file = path.join(dir, 'scan.pdf');
  writeFileSync(file, pdf);
  const proc = fork(process.argv[1]!, ['--extract', file], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  await new Promise((resolve, reject) => {
    proc.once('message', resolve);
    proc.once('exit', (code) => reject(new Error(`extraction child exited (${code})`)));
  });
  return {
    pid: proc.pid!,
    run: () =>
      new Promise((resolve) => {
        proc.once('message', (m) => resolve(m as { content: string; metadata: Record<string, unknown> }));
        proc.send({ go: true });
      }),
    done: () => rmSync(dir, { recursive: true, force: true }),
  };
}

async function upload(base: string, bytes: Buffer, filename: string): Promise<{ content: string; metadata: Record<string, unknown> }> {
  const form = new FormData();
  form.set('file', new Blob([new Uint8Array(bytes)]), filename);
  const res = await fetch(`${base}/v1/documents/process`, { method: 'POST', body: form });
  const body = (await res.json()) as { content: string; metadata: Record<string, unknown>; error?: string };
  if (res.status !== 200) throw new Error(`${filename}: HTTP ${res.status} ${body.error}`);
  return body;
}

async function main(): Promise<void> {
  const sizes = (process.env.SCAN_PAGES ?? '4,35').split(',').map(Number);
  const modes = (process.env.SCAN_MODE ?? 'server,in-process').split(',');
  console.log('mode        pages  pdf_MB  base_MB  peak_MB  growth_MB  hwm_growth_MB  s/page  ocr_pages  recall');
  for (const mode of modes) for (const pages of sizes) {
    const { pdf, text } = await makeScanPdf(pages);
    // A fresh process per run: peaks of one run do not hide those of the next.
    let server: { pid: number; proc?: ChildProcess; base?: string };
    let extract: () => Promise<{ content: string; metadata: Record<string, unknown> }>;
    let done = () => {};
    if (mode === 'server') {
      const s = await startServer();
      await upload(s.base, Buffer.from('Warm-up text about herons in the marsh.'), 'warm.txt');
      server = s;
      extract = () => upload(s.base, pdf, 'scan.pdf').catch((err: Error) => ({ content: '', metadata: { error: err.message } }));
    } else {
      const c = await startInProcess(pdf);
      server = { pid: c.pid };
      extract = c.run;
      done = c.done;
    }
    const base = treeKb(server.pid, 'VmRSS');
    const baseHwm = treeKb(server.pid, 'VmHWM');
    let peak = base;
    let hwm = 0;
    const serverBase = statusKb(server.pid, 'VmRSS');
    let serverPeak = serverBase;
    let childrenPeak = 0;
    const poll = setInterval(() => {
      peak = Math.max(peak, treeKb(server.pid, 'VmRSS'));
      serverPeak = Math.max(serverPeak, statusKb(server.pid, 'VmRSS'));
      childrenPeak = Math.max(childrenPeak, childPids(server.pid).reduce((a, p) => a + statusKb(p, 'VmRSS'), 0));
      hwm = Math.max(hwm, treeKb(server.pid, 'VmHWM'));
    }, 50);
    const t0 = performance.now();
    const body = await extract();
    const seconds = (performance.now() - t0) / 1000;
    clearInterval(poll);
    const ocrPages = (body.metadata.ocr_pages as number[] | undefined)?.length ?? 0;
    const recall = wordRecall(text, body.content).recall;
    const mb = (kb: number) => (kb / 1024).toFixed(0);
    console.log(
      [mode.padEnd(10), String(pages).padStart(5), (pdf.length / 1048576).toFixed(1).padStart(6), mb(base).padStart(7), mb(peak).padStart(7), mb(peak - base).padStart(9), mb(hwm - baseHwm).padStart(13), (seconds / pages).toFixed(2).padStart(6), String(ocrPages).padStart(9), recall.toFixed(3).padStart(7)].join('  '),
    );
    if (body.metadata.error) console.log(`       ${body.metadata.error}: numbers up to then`);
    if (mode === 'server') console.log(`       server growth ${mb(serverPeak - serverBase)} MB (OCR workers), extraction children peak ${mb(childrenPeak)} MB (base ${mb(base - serverBase)} MB)`);
    if (server.proc) {
      server.proc.disconnect();
      await new Promise((r) => server.proc!.once('exit', r));
    }
    done();
  }
}

if (process.argv.includes('--serve')) void serve();
else if (process.argv.includes('--extract')) void extractInProcess(process.argv[process.argv.indexOf('--extract') + 1]!);
else await main();
