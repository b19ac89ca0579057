/**
 * A bounded pool of reused tesseract.js workers. Workers start lazily (at most `size`), jobs wait
 * in a bounded FIFO queue, and a worker is only thrown away when a job running on it is aborted,
 * times out or its thread dies — then it is terminated and replaced on demand, so one stuck
 * recognition can never block the pool.
 *
 * Fully offline: the English LSTM model comes from @tesseract.js-data/eng (4.0.0_best_int, gzip);
 * without an explicit langPath tesseract.js would fetch from a CDN.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { createRequire } from 'node:module';
import { gunzipSync } from 'node:zlib';
import type { Worker } from 'tesseract.js';
import { isToolError, toolError, type ToolError } from '../errors.ts';
import type { OcrWord } from './types.ts';
import { abortError as cancelled } from '../util/abort.ts';
import { errorText as errorMessage } from '../util/error-text.ts';

export interface OcrResult {
  text: string;
  /** Mean confidence (0-100) of the words kept. */
  confidence: number;
  words: OcrWord[];
}

export interface OcrPoolOptions {
  size: number;
  cacheDir: string;
  /** Folder holding eng.traineddata.gz; defaults to @tesseract.js-data/eng/4.0.0_best_int. */
  langPath?: string;
  /** Jobs allowed to wait for a worker; beyond this recognize() fails fast with RATE_LIMITED. */
  maxQueue?: number;
  /** Hard cap on one recognition, independent of the caller's signal. */
  jobTimeoutMs?: number;
}

export interface OcrRecognizeOptions {
  /** Tesseract page segmentation mode; default '3' (fully automatic). */
  psm?: string;
}

interface Job {
  image: Buffer;
  /** 'normalize' only decodes and re-encodes the image (no recognition). */
  mode: 'recognize' | 'normalize';
  options: OcrRecognizeOptions;
  signal?: AbortSignal;
  resolve: (r: OcrResult | Buffer) => void;
  reject: (e: unknown) => void;
  onAbort?: () => void;
  settled: boolean;
}

interface Slot {
  worker: Worker;
  job: Job | null;
  /** Set when the slot is discarded (abort, timeout, thread exit); its late result is ignored. */
  dead: boolean;
  /** Page segmentation mode currently set on the worker. */
  psm: string;
}

const requireHere = createRequire(import.meta.url);

export function defaultLangPath(): string {
  return path.join(path.dirname(requireHere.resolve('@tesseract.js-data/eng/package.json')), '4.0.0_best_int');
}

export const DEFAULT_OCR_JOB_TIMEOUT_MS = 120_000;
const WORKER_START_TIMEOUT_MS = 60_000;

export class OcrPool {
  readonly #size: number;
  readonly #cacheDir: string;
  readonly #langPath: string;
  readonly #maxQueue: number;
  readonly #jobTimeoutMs: number;
  readonly #slots = new Set<Slot>();
  readonly #idle: Slot[] = [];
  readonly #queue: Job[] = [];
  #starting = 0;
  #started = 0;
  #closed = false;
  /** Worker starts run one at a time (each loads ~15 MB of model; the first prepares the cache). */
  #startChain: Promise<unknown> = Promise.resolve();

  constructor(opts: OcrPoolOptions) {
    this.#size = Math.max(1, Math.floor(opts.size));
    this.#cacheDir = opts.cacheDir;
    this.#langPath = opts.langPath ?? defaultLangPath();
    this.#maxQueue = opts.maxQueue ?? Math.max(32, this.#size * 16);
    this.#jobTimeoutMs = opts.jobTimeoutMs ?? DEFAULT_OCR_JOB_TIMEOUT_MS;
  }

  stats(): { size: number; busy: number; queued: number; started: number } {
    let busy = 0;
    for (const s of this.#slots) if (s.job) busy++;
    return { size: this.#size, busy, queued: this.#queue.length, started: this.#started };
  }

  recognize(image: Buffer, signal?: AbortSignal, options: OcrRecognizeOptions = {}): Promise<OcrResult> {
    return this.#submit<OcrResult>(image, 'recognize', signal, options);
  }

  /**
   * Decodes an image with the engine's own (memory-safe, WebAssembly) image library and returns it
   * re-encoded as PNG. Untrusted bytes go through here before any native decoder sees them: a
   * damaged file becomes a PROCESSING_ERROR instead of a crash.
   */
  normalizeImage(image: Buffer, signal?: AbortSignal): Promise<Buffer> {
    return this.#submit<Buffer>(image, 'normalize', signal, {});
  }

  #submit<T>(image: Buffer, mode: Job['mode'], signal: AbortSignal | undefined, options: OcrRecognizeOptions): Promise<T> {
    if (this.#closed) return Promise.reject(toolError('MODEL_UNAVAILABLE', 'OCR engine is shut down'));
    if (signal?.aborted) return Promise.reject(abortError(signal));
    if (this.#queue.length >= this.#maxQueue) {
      return Promise.reject(toolError('RATE_LIMITED', `OCR queue is full (${this.#maxQueue} jobs waiting); retry later`));
    }
    return new Promise<T>((resolve, reject) => {
      const job: Job = { image, mode, options, signal, resolve: resolve as Job['resolve'], reject, settled: false };
      if (signal) {
        job.onAbort = () => this.#abortJob(job, abortError(signal));
        signal.addEventListener('abort', job.onAbort, { once: true });
      }
      this.#queue.push(job);
      this.#pump();
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const shutdown = toolError('MODEL_UNAVAILABLE', 'OCR engine is shut down');
    for (const job of this.#queue.splice(0)) this.#settle(job, shutdown);
    const slots = [...this.#slots];
    this.#slots.clear();
    this.#idle.length = 0;
    for (const s of slots) {
      s.dead = true;
      if (s.job) this.#settle(s.job, shutdown);
    }
    await Promise.allSettled(slots.map((s) => s.worker.terminate()));
    await this.#startChain.catch(() => undefined);
  }

  #pump(): void {
    while (this.#queue.length > 0 && !this.#closed) {
      const slot = this.#idle.pop();
      if (slot) {
        this.#run(slot, this.#queue.shift()!);
        continue;
      }
      if (this.#slots.size + this.#starting < this.#size && this.#starting < this.#queue.length) {
        this.#startWorker();
        continue;
      }
      break;
    }
  }

  #startWorker(): void {
    this.#starting++;
    const start = this.#startChain.then(() => this.#spawn());
    this.#startChain = start.catch(() => undefined);
    start.then(
      (worker) => {
        this.#starting--;
        if (this.#closed) {
          void worker.terminate();
          return;
        }
        this.#started++;
        const slot: Slot = { worker, job: null, dead: false, psm: '3' };
        this.#slots.add(slot);
        // A crashed worker thread would leave its job pending forever; fail it and drop the slot.
        const thread = (worker as unknown as { worker?: { on?: (ev: string, fn: () => void) => void } }).worker;
        thread?.on?.('exit', () => {
          if (slot.dead) return;
          this.#discard(slot, toolError('PROCESSING_ERROR', 'OCR worker stopped unexpectedly'));
          this.#pump();
        });
        this.#idle.push(slot);
        this.#pump();
      },
      (err) => {
        this.#starting--;
        // Nothing can run without a worker: fail what is waiting rather than letting it hang.
        const e = toolError('MODEL_UNAVAILABLE', `OCR engine failed to start: ${errorText(err)}`, err);
        if (this.#slots.size + this.#starting === 0) for (const job of this.#queue.splice(0)) this.#settle(job, e);
      },
    );
  }

  /**
   * The model is gunzipped once into cacheDir through a temp file and a rename, so a crash or a
   * second process can never leave a half-written model that a worker would then fail to load.
   */
  async #modelDir(): Promise<string> {
    const target = path.join(this.#cacheDir, 'eng.traineddata');
    try {
      if ((await fs.stat(target)).size > 0) return this.#cacheDir;
    } catch {
      // not cached yet
    }
    const source = path.join(this.#langPath, 'eng.traineddata.gz');
    const gz = await fs.readFile(source).catch((err) => {
      throw new Error(`OCR model not found at ${source}`, { cause: err });
    });
    await fs.mkdir(this.#cacheDir, { recursive: true });
    const tmp = `${target}.${process.pid}.${Date.now()}.tmp`;
    await fs.writeFile(tmp, gunzipSync(gz));
    await fs.rename(tmp, target);
    return this.#cacheDir;
  }

  async #spawn(): Promise<Worker> {
    const modelDir = await this.#modelDir();
    // tesseract.js loads with the first worker, not at server start.
    const { createWorker } = await import('tesseract.js');
    return new Promise<Worker>((resolve, reject) => {
      let pending = true;
      const fail = (err: unknown) => {
        if (!pending) return;
        pending = false;
        clearTimeout(timer);
        reject(err instanceof Error ? err : new Error(String(err)));
      };
      // tesseract.js swallows language/initialisation failures and never settles createWorker;
      // its error handler and a deadline turn those into a failed start instead of a hang.
      const timer = setTimeout(() => fail(new Error('worker start timed out')), WORKER_START_TIMEOUT_MS);
      timer.unref?.();
      createWorker('eng', 1, {
        langPath: modelDir,
        gzip: false,
        cachePath: this.#cacheDir,
        cacheMethod: 'none',
        // Without an error handler tesseract.js rethrows job failures asynchronously and crashes
        // the process; with it the job's promise rejects and we turn that into a coded error.
        errorHandler: (e: unknown) => fail(e),
        logger: () => undefined,
      }).then((worker) => {
        if (!pending) {
          void worker.terminate();
          return;
        }
        pending = false;
        clearTimeout(timer);
        resolve(worker);
      }, fail);
    });
  }

  #run(slot: Slot, job: Job): void {
    if (job.settled) {
      this.#idle.push(slot);
      return;
    }
    slot.job = job;
    const timer = setTimeout(() => {
      if (slot.job === job) {
        this.#discard(slot, toolError('TIMEOUT', `OCR took longer than ${Math.round(this.#jobTimeoutMs / 1000)} s`));
        this.#pump();
      }
    }, this.#jobTimeoutMs);
    timer.unref?.();
    const psm = job.options.psm ?? '3';
    const ready =
      psm === slot.psm
        ? Promise.resolve()
        : slot.worker.setParameters({ tessedit_pageseg_mode: psm } as Parameters<Worker['setParameters']>[0]).then(() => {
            slot.psm = psm;
          });
    const output = job.mode === 'normalize' ? { text: false, blocks: false, imageColor: true } : { text: true, blocks: true };
    ready
      .then(() => slot.worker.recognize(job.image, {}, output))
      .then(
        (res) => {
          clearTimeout(timer);
          if (slot.dead) return;
          slot.job = null;
          const data = res.data as unknown as TesseractPage & { imageColor?: string | null };
          if (job.mode === 'normalize') {
            const png = typeof data.imageColor === 'string' ? Buffer.from(data.imageColor.replace(/^data:image\/png;base64,/, ''), 'base64') : null;
            if (png?.length) this.#settleOk(job, png);
            else this.#settle(job, toolError('PROCESSING_ERROR', 'The image could not be decoded'));
          } else {
            this.#settleOk(job, toOcrResult(data));
          }
          this.#idle.push(slot);
          this.#pump();
        },
        (err) => {
          clearTimeout(timer);
          if (slot.dead) return;
          slot.job = null;
          this.#settle(job, toolError('PROCESSING_ERROR', `OCR failed: ${errorText(err)}`, err));
          this.#idle.push(slot);
          this.#pump();
        },
      );
  }

  #abortJob(job: Job, err: ToolError): void {
    if (job.settled) return;
    const queued = this.#queue.indexOf(job);
    if (queued >= 0) {
      this.#queue.splice(queued, 1);
      this.#settle(job, err);
      return;
    }
    for (const slot of this.#slots) {
      if (slot.job === job) {
        // tesseract cannot cancel a running recognition: replace the worker instead.
        this.#discard(slot, err);
        this.#pump();
        return;
      }
    }
    this.#settle(job, err);
  }

  #discard(slot: Slot, err: unknown): void {
    slot.dead = true;
    this.#slots.delete(slot);
    const i = this.#idle.indexOf(slot);
    if (i >= 0) this.#idle.splice(i, 1);
    if (slot.job) this.#settle(slot.job, err);
    slot.job = null;
    void slot.worker.terminate().catch(() => undefined);
  }

  #settleOk(job: Job, result: OcrResult | Buffer): void {
    if (job.settled) return;
    job.settled = true;
    if (job.onAbort) job.signal?.removeEventListener('abort', job.onAbort);
    job.resolve(result);
  }

  #settle(job: Job, err: unknown): void {
    if (job.settled) return;
    job.settled = true;
    if (job.onAbort) job.signal?.removeEventListener('abort', job.onAbort);
    job.reject(err);
  }
}

const abortError = (signal: AbortSignal) => cancelled(signal, 'OCR');

/** Tesseract's messages often repeat "Error:"; drop it. */
const errorText = (err: unknown) => errorMessage(err, 200).replace(/^Error:\s*/i, '');

interface TesseractWord { text: string; confidence: number }
interface TesseractPage {
  text?: string;
  confidence?: number;
  blocks?: Array<{ paragraphs?: Array<{ lines?: Array<{ words?: TesseractWord[] }> }> }> | null;
}

/** Words with confidence > 0 (tesseract's 0 marks non-text noise) and their mean confidence. */
export function toOcrResult(page: TesseractPage): OcrResult {
  const words: OcrWord[] = [];
  for (const block of page.blocks ?? []) {
    for (const para of block.paragraphs ?? []) {
      for (const line of para.lines ?? []) {
        for (const w of line.words ?? []) {
          const text = w.text.trim();
          if (text && w.confidence > 0) words.push({ text, confidence: Math.round(w.confidence * 100) / 100 });
        }
      }
    }
  }
  const confidence = words.length ? words.reduce((a, w) => a + w.confidence, 0) / words.length : 0;
  const text = (page.text ?? '')
    .split('\n')
    .map((l) => l.trimEnd())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  return { text, confidence: Math.round(confidence * 100) / 100, words };
}
