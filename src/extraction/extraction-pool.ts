/**
 * Runs untrusted document parsing in a bounded pool of child processes. Worker threads would not
 * do: their resourceLimits bound only the JS heap (not pdf.js wasm, canvas or other native
 * memory), and only the OS can stop a hung native call. Each child has a heap ceiling
 * (--max-old-space-size) and an RSS watchdog here that SIGKILLs it past EXTRACT_MEMORY_MB; a
 * cancelled call (timeout, client gone) SIGKILLs its child at once. A dead child is replaced lazily;
 * idle children exit, and children are recycled after many jobs or when their memory stays high.
 * OCR stays in this process (OcrPool): the child's OCR calls arrive over IPC and run here.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL, fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import { isToolError, toolError } from '../errors.ts';
import type { OcrPool } from '../extractors/ocr/ocr-pool.ts';
import type { DocumentKind, PageProgress, ProcessedDocument } from '../extractors/shared/types.ts';
import { COMPILED, PROJECT_ROOT } from '../project-root.ts';
import { abortError } from '../util/abort.ts';
import { errorText } from '../util/error-text.ts';
import { MemoryBudget } from './memory-budget.ts';
import { readRssBytes, RSS_WATCH_SUPPORTED } from './proc-rss.ts';
import { isSignalArg, syncKey, type ExtractJob, type SyncCall, type FinishInfo, type FromChild, type SerializedError, type ToChild } from './protocol.ts';

// Compiled (dist/, where this code sits in a shared chunk): the child is its own bundle entry.
// From the sources: a boot file loads tsx first.
const CHILD_ENTRY = COMPILED
  ? path.join(PROJECT_ROOT, 'dist', 'src', 'extraction', 'extract-child.js')
  : fileURLToPath(new URL('./extract-child-boot.mjs', import.meta.url));

/** Young-generation semi-space for a child with this ceiling: 32 MB at 1 GiB and above, 1/32 below. */
export function semiSpaceMb(memoryMb: number): number {
  return Math.max(1, Math.min(32, Math.floor(memoryMb / 32)));
}

/**
 * The V8 flags of an extraction child with a heap ceiling of `memoryMb`. The heap ceiling alone
 * makes V8 size the young generation from it, and parsers that allocate many short-lived objects
 * (mammoth, jsdom) then ran 2x slower than inline; 32 MB semi-spaces restore inline speed (npm run
 * bench:isolation: DOCX 3.4 s pooled vs 4.3 s inline). They cost up to 3x their size in RSS, so a
 * small ceiling gets proportionally smaller ones. The ceiling also lowers the old generation's
 * first limit, so the heap was marked and compacted several times per document: an initial old
 * space of an eighth of the ceiling (128 MB at 1 GiB) took 8-10% off the CPU time of a 400-page
 * PDF in a warm child, for ~45 MB more RSS. bench:pdf-text runs our side with these flags too.
 */
export function childExecArgv(memoryMb: number): string[] {
  return [`--max-old-space-size=${memoryMb}`, `--max-semi-space-size=${semiSpaceMb(memoryMb)}`, `--initial-old-space-size=${initialOldSpaceMb(memoryMb)}`];
}

/** Old generation size before the child's first full GC: an eighth of its ceiling, 8 to 128 MB. */
export function initialOldSpaceMb(memoryMb: number): number {
  return Math.max(8, Math.min(128, Math.floor(memoryMb / 8)));
}

/**
 * Environment a child may see: enough to run, none of the server's secrets (API keys).
 * RAG_EXTRACT_CHILD_IMPORTS: the test suite's loader for a child run from the sources (extract-child-boot.mjs).
 */
const CHILD_ENV_KEYS = ['PATH', 'HOME', 'TMPDIR', 'TMP', 'TEMP', 'LANG', 'LC_ALL', 'TZ', 'SYSTEMROOT', 'RAG_EXTRACT_CHILD_IMPORTS'];

/** OcrPool members a child may not call. */
const OCR_FORBIDDEN = new Set(['close', 'constructor', 'stats']);

export interface ExtractionPoolOptions {
  /** Children (and so extractions) at most. */
  concurrency: number;
  /** Per-child ceiling: heap limit and RSS watchdog (EXTRACT_MEMORY_MB). */
  memoryMb: number;
  /** Process-wide budget each running job reserves memoryMb from (MAX_MEMORY_MB). */
  budgetMb: number;
  /** Jobs that may wait for a slot (EXTRACT_QUEUE_MAX). */
  queueMax: number;
  ocr: OcrPool;
  log?: Logger;
  /** An idle child exits after this long (ms). */
  idleMs?: number;
  /** A child is replaced after this many jobs. */
  recycleAfterJobs?: number;
  /** A child whose RSS after a job is above this (MB) is replaced instead of kept. */
  recycleRssMb?: number;
  /** RSS watchdog period (ms). */
  watchIntervalMs?: number;
  /** Longest a child may take to start (ms). */
  startTimeoutMs?: number;
  /** Tests only: module URLs whose `extract` export replaces the extractor of a kind in the child. */
  extractorModules?: Partial<Record<DocumentKind, string>>;
}

export interface ExtractRequest {
  kind: DocumentKind;
  input: ExtractJob['input'];
  finish: FinishInfo;
  /** The format's label for messages ("a PDF document"). */
  label: string;
  /** Page progress the child reports (PDFs). */
  onProgress?: (p: PageProgress) => void;
  /** Set by extract(): the input's bytes are in this file, not in `input.bytes` (FILE_HANDOFF_BYTES). */
  bytesFile?: string;
}

/** Inputs larger than this reach the child through a temporary file rather than the IPC message. */
export const FILE_HANDOFF_BYTES = 8 * 1024 * 1024;

type RestartReason = 'memory' | 'crash' | 'cancelled' | 'recycled' | 'idle' | 'start_failed';

interface ActiveJob {
  id: number;
  req: ExtractRequest;
  signal: AbortSignal;
  resolve: (doc: ProcessedDocument) => void;
  reject: (err: unknown) => void;
  settled: boolean;
  release: () => void;
  ocrCalls: Map<number, AbortController>;
  peakRss: number;
  /** Rows received ahead of the result, by table index. */
  rows?: Map<number, { rows: unknown[][]; row_numbers: number[] | null }>;
  /** Content slices received so far, joined once at the result (one copy into a flat string). */
  content?: string[];
}

interface Child {
  proc: ChildProcess;
  pid: number;
  jobs: number;
  job: ActiveJob | null;
  /** Why this process kills its child; null while it is wanted. */
  killedFor: RestartReason | 'shutdown' | null;
  exited: boolean;
  stderrTail: string;
  idleTimer: NodeJS.Timeout | null;
  watch: NodeJS.Timeout | null;
  gone: Promise<void>;
}

const MB = 1024 * 1024;
const STDERR_TAIL = 4096;
const HEAP_OOM = /heap out of memory|Reached heap limit|allocation failed - process out of memory/i;

export class ExtractionPool {
  private readonly opts: Required<Omit<ExtractionPoolOptions, 'log' | 'extractorModules'>> & Pick<ExtractionPoolOptions, 'log' | 'extractorModules'>;
  private readonly budget: MemoryBudget;
  private readonly children = new Set<Child>();
  private readonly idle: Child[] = [];
  private readonly restarts: Record<RestartReason, number> = { memory: 0, crash: 0, cancelled: 0, recycled: 0, idle: 0, start_failed: 0 };
  private nextJobId = 1;
  private jobsDone = 0;
  private ocrCalls = 0;
  private started = 0;
  private closed = false;

  constructor(opts: ExtractionPoolOptions) {
    this.opts = {
      idleMs: 30_000,
      // High: a fresh child costs seconds (pdf.js, the language detector), which dominated knowledge-base
      // ingestion of many small files at 50; growth is caught by the RSS check after every job instead.
      recycleAfterJobs: 1000,
      recycleRssMb: Math.max(128, Math.min(512, Math.floor(opts.memoryMb / 2))),
      watchIntervalMs: 50,
      startTimeoutMs: 60_000,
      ...opts,
    };
    this.budget = new MemoryBudget({
      concurrency: Math.max(1, opts.concurrency),
      perJobMb: opts.memoryMb,
      budgetMb: opts.budgetMb,
      queueMax: opts.queueMax,
    });
  }

  stats(): Record<string, unknown> {
    let busy = 0;
    for (const c of this.children) if (c.job) busy++;
    const b = this.budget.stats();
    return {
      children: this.children.size,
      busy,
      idle: this.idle.length,
      queued: b.queued,
      max_children: b.slots,
      queue_max: this.opts.queueMax,
      memory_limit_mb: this.opts.memoryMb,
      memory_budget_mb: b.budget_mb,
      memory_reserved_mb: b.reserved_mb,
      rss_watchdog: RSS_WATCH_SUPPORTED,
      children_started: this.started,
      jobs: this.jobsDone,
      refused: b.refused,
      ocr_calls: this.ocrCalls,
      restarts: { ...this.restarts },
    };
  }

  /** Process ids of the live children (tests and diagnostics). */
  pids(): number[] {
    return [...this.children].filter((c) => !c.exited).map((c) => c.pid);
  }

  /** Starts children until `count` are idle and ready, so the next calls skip the start-up. */
  async warm(count = 1): Promise<void> {
    const want = Math.min(count, this.budget.slots) - this.idle.length;
    const never = new AbortController().signal;
    const started = await Promise.all(Array.from({ length: Math.max(0, want) }, () => this.spawn(never)));
    for (const c of started) this.makeIdle(c);
  }

  async extract(req: ExtractRequest, signal: AbortSignal): Promise<ProcessedDocument> {
    if (this.closed) throw shuttingDown();
    const release = await this.budget.acquire(signal);
    let child: Child;
    let handoff: string | null = null;
    try {
      if (signal.aborted) throw abortError(signal, 'Extraction');
      // Big inputs go through a file: written by the thread pool, read by the child, instead of
      // being copied into one IPC message on the main thread (50 MB: a ~100 ms pause).
      if (req.input.bytes.length > FILE_HANDOFF_BYTES) {
        handoff = path.join(os.tmpdir(), `rag-extract-${process.pid}-${randomBytes(6).toString('hex')}`);
        await fs.writeFile(handoff, req.input.bytes, { mode: 0o600 });
        req = { ...req, input: { ...req.input, bytes: Buffer.alloc(0) }, bytesFile: handoff };
      }
      child = await this.takeChild(signal);
    } catch (err) {
      release();
      if (handoff) await fs.rm(handoff, { force: true }).catch(() => undefined);
      throw err;
    }
    if (!handoff) return this.runOn(child, req, signal, release);
    const file = handoff;
    return this.runOn(child, req, signal, release).finally(() => fs.rm(file, { force: true }).catch(() => undefined));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.budget.rejectAll(shuttingDown());
    const all = [...this.children];
    for (const c of all) this.kill(c, 'shutdown');
    await Promise.all(all.map((c) => c.gone));
  }

  // ---------------------------------------------------------------- children

  private async takeChild(signal: AbortSignal): Promise<Child> {
    while (this.idle.length > 0) {
      const c = this.idle.pop()!;
      if (c.idleTimer) clearTimeout(c.idleTimer);
      c.idleTimer = null;
      if (!c.exited && c.killedFor === null) return c;
    }
    return this.spawn(signal);
  }

  private spawn(signal: AbortSignal): Promise<Child> {
    const env: Record<string, string> = {};
    for (const k of CHILD_ENV_KEYS) if (process.env[k] !== undefined) env[k] = process.env[k]!;
    const proc = fork(CHILD_ENTRY, [], {
      execArgv: childExecArgv(this.opts.memoryMb),
      serialization: 'advanced',
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      env,
    });
    this.started++;
    let markGone!: () => void;
    const child: Child = {
      proc,
      pid: proc.pid ?? -1,
      jobs: 0,
      job: null,
      killedFor: null,
      exited: false,
      stderrTail: '',
      idleTimer: null,
      watch: null,
      gone: new Promise<void>((r) => (markGone = r)),
    };
    this.children.add(child);
    // Nothing a child prints may reach this process's stdout (MCP over stdio speaks there).
    proc.stdout?.resume();
    proc.stderr?.setEncoding('utf8');
    proc.stderr?.on('data', (d: string) => {
      child.stderrTail = (child.stderrTail + d).slice(-STDERR_TAIL);
    });
    proc.on('message', (msg: FromChild) => this.onMessage(child, msg));
    proc.on('error', (err) => this.opts.log?.warn({ err, pid: child.pid }, 'extraction child error'));
    proc.on('exit', () => {
      child.exited = true;
      this.forget(child);
      // The memory is the OS's again: the budget can admit the next job.
      child.job?.release();
    });
    proc.on('close', (code, sig) => {
      this.onClose(child, code, sig);
      markGone();
    });

    return new Promise<Child>((resolve, reject) => {
      const timer = setTimeout(() => fail(toolError('INTERNAL_ERROR', 'The extraction process did not start in time')), this.opts.startTimeoutMs);
      const onAbort = () => fail(abortError(signal, 'Extraction'));
      const cleanup = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        proc.off('message', onReady);
        proc.off('close', onEarlyClose);
      };
      const fail = (err: unknown) => {
        cleanup();
        this.kill(child, 'start_failed');
        reject(err);
      };
      const onReady = (msg: FromChild) => {
        if (msg.type !== 'ready') return;
        cleanup();
        resolve(child);
      };
      const onEarlyClose = () => {
        cleanup();
        if (child.killedFor === 'shutdown') return reject(shuttingDown());
        this.restarts.start_failed++;
        this.opts.log?.error({ pid: child.pid, stderr: child.stderrTail.slice(-1000) }, 'extraction child failed to start');
        reject(toolError('INTERNAL_ERROR', 'The extraction process failed to start'));
      };
      signal.addEventListener('abort', onAbort, { once: true });
      proc.on('message', onReady);
      proc.once('close', onEarlyClose);
    });
  }

  private runOn(child: Child, req: ExtractRequest, signal: AbortSignal, release: () => void): Promise<ProcessedDocument> {
    return new Promise<ProcessedDocument>((resolve, reject) => {
      const job: ActiveJob = { id: this.nextJobId++, req, signal, resolve, reject, settled: false, release, ocrCalls: new Map(), peakRss: 0 };
      child.job = job;
      child.proc.ref();
      (child.proc.channel as { ref?: () => void } | undefined)?.ref?.();
      const onAbort = () => {
        // A hung native call cannot be interrupted any other way; the slot frees as soon as the OS
        // has reaped the child.
        this.kill(child, 'cancelled');
        this.settle(child, job, abortError(signal, 'Extraction'));
        // Should the exit be slow to arrive, the budget is not held hostage by it.
        setTimeout(release, 1000).unref();
      };
      signal.addEventListener('abort', onAbort, { once: true });
      job.resolve = (doc) => {
        signal.removeEventListener('abort', onAbort);
        resolve(doc);
      };
      job.reject = (err) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      };
      if (signal.aborted) return onAbort();
      if (RSS_WATCH_SUPPORTED) {
        const limit = this.opts.memoryMb * MB;
        child.watch = setInterval(() => {
          const rss = readRssBytes(child.pid);
          if (rss === null) return;
          if (rss > job.peakRss) job.peakRss = rss;
          if (rss > limit) this.kill(child, 'memory');
        }, this.opts.watchIntervalMs);
        child.watch.unref();
      }
      const msg: ExtractJob = {
        type: 'extract',
        id: job.id,
        kind: req.kind,
        input: req.input,
        ...(req.bytesFile ? { bytesFile: req.bytesFile } : {}),
        finish: req.finish,
        ocrSync: ocrSyncCalls(this.opts.ocr, req.input),
        ...(this.opts.extractorModules?.[req.kind] ? { extractorModule: this.opts.extractorModules[req.kind] } : {}),
      };
      this.send(child, msg);
    });
  }

  private onMessage(child: Child, msg: FromChild): void {
    const job = child.job;
    if (msg.type === 'ocr-cancel') {
      job?.ocrCalls.get(msg.callId)?.abort(toolError('TIMEOUT', 'OCR cancelled by the extractor'));
      return;
    }
    if (!job || msg.type === 'ready' || msg.id !== job.id) return;
    if (msg.type === 'ocr') {
      this.runOcr(child, job, msg.callId, msg.method, msg.args);
    } else if (msg.type === 'progress') {
      job.req.onProgress?.(msg.progress);
    } else if (msg.type === 'rows') {
      job.rows ??= new Map();
      let acc = job.rows.get(msg.table);
      if (!acc) job.rows.set(msg.table, (acc = { rows: [], row_numbers: msg.row_numbers ? [] : null }));
      for (const r of msg.rows) acc.rows.push(r);
      if (acc.row_numbers && msg.row_numbers) for (const n of msg.row_numbers) acc.row_numbers.push(n);
    } else if (msg.type === 'content') {
      (job.content ??= []).push(msg.text);
    } else if (msg.type === 'result') {
      if (job.content !== undefined) {
        msg.doc.content = job.content.join('');
        job.content = undefined;
      }
      if (job.rows) {
        for (const [i, acc] of job.rows) {
          const t = msg.doc.tables[i];
          if (!t) continue;
          t.rows = acc.rows as NonNullable<typeof t.rows>;
          if (acc.row_numbers) t.row_numbers = acc.row_numbers;
        }
        job.rows = undefined;
      }
      this.settle(child, job, null, msg.doc);
      this.afterJob(child);
    } else if (msg.type === 'error') {
      this.settle(child, job, fromSerialized(msg.error));
      this.afterJob(child);
    }
  }

  private runOcr(child: Child, job: ActiveJob, callId: number, method: string, args: unknown[]): void {
    this.ocrCalls++;
    const reply = (ok: boolean, value?: unknown, error?: SerializedError) => {
      job.ocrCalls.delete(callId);
      if (child.job === job) this.send(child, { type: 'ocr-reply', callId, ok, ...(ok ? { value } : { error }) });
    };
    const pool = this.opts.ocr as unknown as Record<string, unknown>;
    const fn = pool[method];
    if (OCR_FORBIDDEN.has(method) || method.startsWith('_') || typeof fn !== 'function') {
      reply(false, undefined, { message: `OCR has no method ${method}` });
      return;
    }
    const controller = new AbortController();
    job.ocrCalls.set(callId, controller);
    const signal = AbortSignal.any([job.signal, controller.signal]);
    const real = args.map((a) => (isSignalArg(a) ? signal : a));
    Promise.resolve()
      .then(() => (fn as (...a: unknown[]) => unknown).apply(this.opts.ocr, real))
      .then(
        (value) => reply(true, value),
        (err) => reply(false, undefined, isToolError(err) ? { code: err.code, message: err.message } : { message: errorText(err) }),
      );
  }

  private settle(child: Child, job: ActiveJob, err: unknown, doc?: ProcessedDocument): void {
    if (job.settled) return;
    job.settled = true;
    if (child.watch) clearInterval(child.watch);
    child.watch = null;
    // OCR still running for this job is nobody's any more.
    for (const c of job.ocrCalls.values()) c.abort(toolError('TIMEOUT', 'OCR cancelled: the extraction ended'));
    job.ocrCalls.clear();
    if (err) job.reject(err);
    else job.resolve(doc!);
  }

  /** A finished job leaves its child idle, or retires it when it has done enough or kept memory. */
  private afterJob(child: Child): void {
    const job = child.job;
    child.job = null;
    child.jobs++;
    this.jobsDone++;
    job?.release();
    if (child.exited || child.killedFor) return;
    const rss = RSS_WATCH_SUPPORTED ? readRssBytes(child.pid) : null;
    if (this.closed || child.jobs >= this.opts.recycleAfterJobs || (rss !== null && rss > this.opts.recycleRssMb * MB)) {
      this.kill(child, 'recycled');
      return;
    }
    this.makeIdle(child);
  }

  private makeIdle(child: Child): void {
    if (this.closed) {
      this.kill(child, 'shutdown');
      return;
    }
    // An idle child must not keep the server's process alive.
    child.proc.unref();
    (child.proc.channel as { unref?: () => void } | undefined)?.unref?.();
    child.idleTimer = setTimeout(() => {
      const i = this.idle.indexOf(child);
      if (i >= 0) this.idle.splice(i, 1);
      this.kill(child, 'idle');
    }, this.opts.idleMs);
    child.idleTimer.unref();
    this.idle.push(child);
  }

  private onClose(child: Child, code: number | null, sig: NodeJS.Signals | null): void {
    this.forget(child);
    const job = child.job;
    child.job = null;
    if (!job || job.settled) {
      if (job) job.release();
      return;
    }
    job.release();
    const overMemory = child.killedFor === 'memory' || HEAP_OOM.test(child.stderrTail);
    if (overMemory) {
      if (child.killedFor !== 'memory') this.restarts.memory++;
      this.opts.log?.warn({ pid: child.pid, kind: job.req.kind, peak_rss_mb: Math.round(job.peakRss / MB) }, 'extraction over its memory ceiling');
      this.settle(
        child,
        job,
        toolError(
          'PAYLOAD_TOO_LARGE',
          `Extracting ${job.req.label} needed more than EXTRACT_MEMORY_MB=${this.opts.memoryMb} MB of memory; the file is too large or too complex for this server's limit`,
        ),
      );
      return;
    }
    if (child.killedFor === 'shutdown') {
      this.settle(child, job, shuttingDown());
      return;
    }
    if (child.killedFor === null) this.restarts.crash++;
    const how = sig ?? `exit code ${code}`;
    this.opts.log?.warn({ pid: child.pid, kind: job.req.kind, how, stderr: child.stderrTail.slice(-500) }, 'extraction child crashed');
    this.settle(child, job, toolError('PROCESSING_ERROR', `The extraction process crashed (${how}) while reading ${job.req.label}; the file may be damaged`));
  }

  private kill(child: Child, reason: RestartReason | 'shutdown'): void {
    if (child.exited || child.killedFor !== null) return;
    child.killedFor = reason;
    if (reason !== 'shutdown') this.restarts[reason]++;
    if (child.idleTimer) clearTimeout(child.idleTimer);
    if (child.watch) clearInterval(child.watch);
    child.idleTimer = child.watch = null;
    this.forget(child);
    // Held until it is reaped, so close() can wait for its exit.
    child.proc.ref();
    try {
      child.proc.kill('SIGKILL');
    } catch {
      // already gone
    }
  }

  private forget(child: Child): void {
    this.children.delete(child);
    const i = this.idle.indexOf(child);
    if (i >= 0) this.idle.splice(i, 1);
  }

  private send(child: Child, msg: ToChild): void {
    if (!child.proc.connected) return;
    child.proc.send(msg, (err) => {
      // A child that died mid-send is classified by its close event.
      if (err) this.opts.log?.debug({ err, pid: child.pid }, 'could not send to extraction child');
    });
  }
}

/**
 * The synchronous OcrPool calls an extractor may make, answered here for the child: stats, the
 * language table, and language resolution for what the job asked for and for what that resolved to
 * (extractors resolve once, then pass the result on).
 */
function ocrSyncCalls(ocr: OcrPool, input: ExtractJob['input']): SyncCall[] {
  const pool = ocr as unknown as Record<string, (...a: unknown[]) => unknown>;
  const calls = new Map<string, SyncCall>();
  const add = (method: string, args: unknown[]): unknown => {
    if (typeof pool[method] !== 'function') return undefined;
    const key = syncKey(method, args);
    const known = calls.get(key);
    if (known) return known.value;
    try {
      const value = pool[method]!.apply(ocr, args);
      calls.set(key, { method, args, value });
      return value;
    } catch (err) {
      calls.set(key, { method, args, error: isToolError(err) ? { code: err.code, message: err.message } : { message: errorText(err) } });
      return undefined;
    }
  };
  add('stats', []);
  add('languageInfo', []);
  for (const requested of [undefined, input.ocr?.languages]) {
    const resolved = add('resolveJobLanguages', [requested]);
    if (Array.isArray(resolved)) add('resolveJobLanguages', [resolved]);
  }
  return [...calls.values()];
}

function fromSerialized(e: SerializedError): Error {
  return e.code ? toolError(e.code, e.message) : new ChildExtractorError(e.message);
}

/** An extractor's own (uncoded) failure; the caller words it as it does for inline extraction. */
export class ChildExtractorError extends Error {
  override name = 'ChildExtractorError';
}

const shuttingDown = () => toolError('SHUTTING_DOWN', 'The server is shutting down: the extraction was stopped; retry it');

/** A file URL for a test extractor module (ExtractionPoolOptions.extractorModules). */
export const moduleUrl = (file: string): string => pathToFileURL(file).href;
