/**
 * A bounded pool of reused tesseract.js workers. Workers start lazily (at most `size`), jobs wait
 * in a bounded FIFO queue, and a worker is only thrown away when a job running on it is aborted,
 * times out or its thread dies — then it is terminated and replaced on demand, so one stuck
 * recognition can never block the pool.
 *
 * Fully offline: languages come from the npm data packages or TESSDATA_DIR (ocr-languages.ts) and
 * are copied into cacheDir, the one folder workers load from; without an explicit langPath
 * tesseract.js would fetch from a CDN. Workers start in the default languages and are switched
 * (reinitialised) when a job asks for others. Page segmentation is always set explicitly: tesseract.js
 * starts in mode 6 (one uniform block), which interleaves columns and drops table rows.
 * Orientation and script detection (osd) runs on a separate legacy-engine worker, when installed.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { createRequire } from 'node:module';
import { gunzipSync } from 'node:zlib';
import type { Worker } from 'tesseract.js';
import { isToolError, toolError, type ToolError } from '../../errors.ts';
import { checkTessdataDir, installedLanguages, OSD, parseLanguages, resolveLanguages, findLanguage, type LanguageSource } from './ocr-languages.ts';
import type { OcrWord } from '../shared/types.ts';
import { readImageInfo } from '../shared/image-info.ts';
import { abortError as cancelled } from '../../util/abort.ts';
import { errorText as errorMessage } from '../../util/error-text.ts';
import { withTimeout } from '../../util/timeout.ts';
import { writeFileAtomic } from '../../util/atomic-file.ts';

export interface OcrResult {
  text: string;
  /** Mean confidence (0-100) of the words kept. */
  confidence: number;
  words: OcrWord[];
  /** Median pixel height of the confident words (0 when none): how large the text is in this image. */
  textHeight?: number;
}

export interface OcrPoolOptions {
  size: number;
  cacheDir: string;
  /** Folder holding <lang>.traineddata.gz for every language (tests); default: ocr-languages.ts lookup. */
  langPath?: string;
  /** Languages used when a job names none (OCR_LANGUAGES); default ['eng']. Checked in the constructor. */
  languages?: readonly string[];
  /** Folder of extra .traineddata files (TESSDATA_DIR). */
  tessdataDir?: string;
  /** Jobs allowed to wait for a worker; beyond this recognize() fails fast with RATE_LIMITED. */
  maxQueue?: number;
  /** Hard cap on one recognition, independent of the caller's signal. */
  jobTimeoutMs?: number;
  /**
   * false: never use orientation detection, even where osd data is installed (the npm package
   * @tesseract.js-data/osd, a dependency, or TESSDATA_DIR); sideways images are then found by
   * reading small turned copies (ocr-upright.ts). Default true.
   */
  orientationDetection?: boolean;
}

export interface OcrRecognizeOptions {
  /** Tesseract page segmentation mode; default '3' (fully automatic layout, reading order by blocks). */
  psm?: string;
  /** Tesseract language codes for this job (e.g. ['jpn', 'jpn_vert']); default: the pool's languages. */
  languages?: readonly string[];
}

/** Orientation and script of an image (tesseract OSD). */
export interface OcrOrientation {
  /** Clockwise degrees that turn the image upright. */
  rotate: 0 | 90 | 180 | 270;
  orientationConfidence: number;
  script: string | null;
  scriptConfidence: number;
}

/** What the pool can read, for get_system_health and messages. */
export interface OcrLanguageInfo {
  default_languages: string[];
  installed_languages: string[];
  orientation_detection: boolean;
  tessdata_dir: boolean;
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
  /** Page segmentation mode currently set on the worker (null: not set yet, tesseract.js's 6 applies). */
  psm: string | null;
  /** Languages the worker is initialised with, '+' joined. */
  langs: string;
  /** Pixels of the images it has read (the engine's memory grows with them). */
  pixels: number;
  /** Past RECYCLE_AFTER_PIXELS: a replacement is starting; this worker serves jobs until it is ready. */
  retiring: boolean;
  /** The replacement is ready: this worker is terminated as soon as it is idle. */
  replaced: boolean;
}

const requireHere = createRequire(import.meta.url);

export function defaultLangPath(): string {
  return path.join(path.dirname(requireHere.resolve('@tesseract.js-data/eng/package.json')), '4.0.0_best_int');
}

export const DEFAULT_PSM = '3';
/**
 * Image pixels a worker reads before it is replaced (about six 300-dpi Letter pages). The
 * replacement starts beside it and the old worker keeps serving jobs until the new one is ready,
 * so no job waits for a worker start because of recycling (one extra worker's memory, briefly).
 */
export const RECYCLE_AFTER_PIXELS = 50_000_000;

/** Pixels of an encoded image from its header; 0 when unknown. */
function imagePixels(image: Buffer): number {
  const info = readImageInfo(image);
  return info?.width && info.height ? info.width * info.height : 0;
}

export const DEFAULT_OCR_JOB_TIMEOUT_MS = 120_000;
const WORKER_START_TIMEOUT_MS = 60_000;

export class OcrPool {
  readonly #size: number;
  readonly #cacheDir: string;
  readonly #langPath: string | undefined;
  readonly #languages: string[];
  readonly #tessdataDir: string | undefined;
  readonly #osdSource: LanguageSource | null;
  #osdWorker: Promise<Worker> | null = null;
  #osdChain: Promise<unknown> = Promise.resolve();
  /** Languages already copied into cacheDir (once per pool). */
  readonly #prepared = new Map<string, Promise<void>>();
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
    this.#langPath = opts.langPath;
    this.#tessdataDir = opts.tessdataDir || undefined;
    this.#languages = parseLanguages(opts.languages ?? ['eng']);
    // Start-up check: a wrong OCR_LANGUAGES or TESSDATA_DIR stops the server with a clear message.
    if (!this.#langPath) {
      checkTessdataDir(this.#tessdataDir);
      resolveLanguages(this.#languages, this.#tessdataDir, 'OCR_LANGUAGES');
    }
    this.#osdSource = this.#langPath || opts.orientationDetection === false ? null : findLanguage(OSD, this.#tessdataDir);
    this.#maxQueue = opts.maxQueue ?? Math.max(32, this.#size * 16);
    this.#jobTimeoutMs = opts.jobTimeoutMs ?? DEFAULT_OCR_JOB_TIMEOUT_MS;
  }

  stats(): { size: number; busy: number; queued: number; started: number } {
    let busy = 0;
    for (const s of this.#slots) if (s.job) busy++;
    return { size: this.#size, busy, queued: this.#queue.length, started: this.#started };
  }

  recognize(image: Buffer, signal?: AbortSignal, options: OcrRecognizeOptions = {}): Promise<OcrResult> {
    try {
      const languages = this.resolveJobLanguages(options.languages);
      return this.#submit<OcrResult>(image, 'recognize', signal, { ...options, languages });
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /** The languages a job will use; throws VALIDATION_ERROR naming any that is not installed. */
  resolveJobLanguages(requested?: readonly string[]): string[] {
    if (!requested?.length) return this.#languages;
    const langs = parseLanguages(requested);
    if (!this.#langPath) resolveLanguages(langs, this.#tessdataDir, 'ocr_languages');
    return langs;
  }

  languageInfo(): OcrLanguageInfo {
    return {
      default_languages: [...this.#languages],
      installed_languages: this.#langPath ? [...this.#languages] : installedLanguages(this.#tessdataDir),
      orientation_detection: this.#osdSource !== null,
      tessdata_dir: this.#tessdataDir !== undefined,
    };
  }

  /**
   * Orientation and script by tesseract OSD on a separate legacy-engine worker; null when osd data
   * is not installed or the image shows too little text to tell. Jobs run one at a time.
   */
  detectOrientation(image: Buffer, signal?: AbortSignal): Promise<OcrOrientation | null> {
    if (!this.#osdSource || this.#closed) return Promise.resolve(null);
    if (signal?.aborted) return Promise.reject(abortError(signal));
    const run = this.#osdChain.then(async () => {
      if (signal?.aborted) throw abortError(signal);
      const worker = await this.#osd();
      const res = await withTimeout(worker.detect(image), this.#jobTimeoutMs, timedOut('Orientation detection', this.#jobTimeoutMs));
      const d = res.data as { orientation_degrees: number | null; orientation_confidence: number | null; script: string | null; script_confidence: number | null };
      if (d.orientation_degrees === null) return null;
      const rotate = ([0, 90, 180, 270] as const).find((r) => r === d.orientation_degrees) ?? 0;
      return { rotate, orientationConfidence: d.orientation_confidence ?? 0, script: d.script, scriptConfidence: d.script_confidence ?? 0 };
    });
    this.#osdChain = run.catch(() => undefined);
    return run.catch((err) => {
      if (signal?.aborted) throw abortError(signal);
      if (isToolError(err)) throw err;
      // A page OSD cannot analyse is not an error: the caller falls back to reading it as is.
      return null;
    });
  }

  #osd(): Promise<Worker> {
    if (!this.#osdWorker) {
      const src = this.#osdSource!;
      this.#osdWorker = import('tesseract.js').then(({ createWorker }) =>
        withTimeout(createWorker(OSD, 0, {
          langPath: path.dirname(src.file),
          gzip: src.gzip,
          cacheMethod: 'none',
          legacyCore: true,
          legacyLang: true,
          errorHandler: () => undefined,
          logger: () => undefined,
        }), WORKER_START_TIMEOUT_MS, timedOut('Starting orientation detection', WORKER_START_TIMEOUT_MS)),
      );
      this.#osdWorker.catch(() => {
        this.#osdWorker = null;
      });
    }
    return this.#osdWorker;
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
    const osd = this.#osdWorker;
    this.#osdWorker = null;
    if (osd) await osd.then((w) => w.terminate()).catch(() => undefined);
  }

  #pump(): void {
    while (this.#queue.length > 0 && !this.#closed) {
      const next = this.#queue[0];
      const wanted = (next.options.languages ?? this.#languages).join('+');
      // Prefer a worker already set up for the job's languages: switching costs a model load.
      const match = this.#idle.findIndex((s) => s.langs === wanted);
      const slot = match >= 0 ? this.#idle.splice(match, 1)[0] : this.#idle.pop();
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

  /** Starts a worker; with `replacing`, the worker it takes over from once it is ready. */
  #startWorker(replacing?: Slot): void {
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
        if (replacing && !replacing.dead) {
          replacing.replaced = true;
          if (!replacing.job) this.#discard(replacing, null);
        }
        const slot: Slot = { worker, job: null, dead: false, psm: null, langs: this.#languages.join('+'), pixels: 0, retiring: false, replaced: false };
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
        // The worker it was to replace carries on (and tries again after its next job).
        if (replacing) replacing.retiring = false;
        // Nothing can run without a worker: fail what is waiting rather than letting it hang.
        const e = toolError('MODEL_UNAVAILABLE', `OCR engine failed to start: ${errorText(err)}`, err);
        if (this.#slots.size + this.#starting === 0) for (const job of this.#queue.splice(0)) this.#settle(job, e);
      },
    );
  }

  /**
   * Each language is copied (gunzipped) once into cacheDir through a temp file and a rename, so a
   * crash or a second process can never leave a half-written model that a worker would then fail
   * to load.
   */
  async #modelDir(langs: readonly string[]): Promise<string> {
    await Promise.all(
      langs.map((code) => {
        let p = this.#prepared.get(code);
        if (!p) {
          p = this.#prepareLanguage(code);
          this.#prepared.set(code, p);
          p.catch(() => this.#prepared.delete(code));
        }
        return p;
      }),
    );
    return this.#cacheDir;
  }

  async #prepareLanguage(code: string): Promise<void> {
    const src: LanguageSource = this.#langPath
      ? { code, file: path.join(this.#langPath, `${code}.traineddata.gz`), gzip: true, origin: 'npm' }
      : resolveLanguages([code], this.#tessdataDir, 'ocr_languages')[0];
    const target = path.join(this.#cacheDir, `${code}.traineddata`);
    try {
      const have = (await fs.stat(target)).size;
      // An uncompressed source must match in size (TESSDATA_DIR may have been updated).
      if (have > 0 && (src.gzip || have === (await fs.stat(src.file)).size)) return;
    } catch {
      // not cached yet
    }
    const data = await fs.readFile(src.file).catch((err) => {
      throw new Error(`OCR model for ${code} could not be read`, { cause: err });
    });
    await writeFileAtomic(target, src.gzip ? gunzipSync(data) : data);
  }

  async #spawn(): Promise<Worker> {
    const modelDir = await this.#modelDir(this.#languages);
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
      createWorker(this.#languages.join('+'), 1, {
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
    const psm = job.options.psm ?? DEFAULT_PSM;
    const langs = job.options.languages ?? this.#languages;
    const key = langs.join('+');
    // Every step first asks whether the slot is still alive: a job aborted meanwhile has had its
    // worker terminated, and a call into a terminated tesseract.js worker throws inside the
    // library's own promise (an unhandled rejection), not into this chain.
    const switchLangs =
      job.mode === 'normalize' || key === slot.langs
        ? Promise.resolve()
        : this.#modelDir(langs)
            .then(() => (slot.dead ? undefined : slot.worker.reinitialize(key, 1)))
            .then(() => {
              slot.langs = key;
              // Initialising resets every parameter.
              slot.psm = null;
            });
    const ready = switchLangs.then(() =>
      slot.dead || psm === slot.psm
        ? undefined
        : slot.worker.setParameters({ tessedit_pageseg_mode: psm } as Parameters<Worker['setParameters']>[0]).then(() => {
            slot.psm = psm;
          }),
    );
    // Words come from the TSV (one line per word with its box and confidence): the blocks tree
    // would carry every symbol and its choices too, serialised to JSON and parsed per page.
    const output = job.mode === 'normalize' ? { text: false, blocks: false, imageColor: true } : { text: true, tsv: true };
    ready
      .then(() => (slot.dead ? null : slot.worker.recognize(job.image, {}, output)))
      .then(
        (res) => {
          clearTimeout(timer);
          if (slot.dead || res === null) return;
          slot.job = null;
          const data = res.data as unknown as TesseractPage & { imageColor?: string | null };
          if (job.mode === 'normalize') {
            const png = typeof data.imageColor === 'string' ? Buffer.from(data.imageColor.replace(/^data:image\/png;base64,/, ''), 'base64') : null;
            if (png?.length) this.#settleOk(job, png);
            else this.#settle(job, toolError('PROCESSING_ERROR', 'The image could not be decoded'));
          } else {
            this.#settleOk(job, toOcrResult(data));
          }
          slot.pixels += imagePixels(job.image);
          // The engine's WebAssembly memory only grows: a worker that has read many large pages
          // is replaced to keep memory bounded, its replacement started while it keeps working.
          if (slot.pixels > RECYCLE_AFTER_PIXELS && !slot.retiring && !this.#closed) {
            slot.retiring = true;
            this.#startWorker(slot);
          }
          if (slot.replaced) this.#discard(slot, null);
          else this.#idle.push(slot);
          this.#pump();
        },
        (err) => {
          clearTimeout(timer);
          if (slot.dead) return;
          slot.job = null;
          this.#settle(job, toolError('PROCESSING_ERROR', `OCR failed: ${errorText(err)}`, err));
          if (slot.replaced) this.#discard(slot, null);
          else this.#idle.push(slot);
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

const timedOut = (what: string, ms: number) => () => toolError('TIMEOUT', `${what} took longer than ${Math.round(ms / 1000)} s`);

/** Tesseract's messages often repeat "Error:"; drop it. */
const errorText = (err: unknown) => errorMessage(err, 200).replace(/^Error:\s*/i, '');

interface TesseractWord { text: string; confidence: number; bbox?: { y0: number; y1: number } }
interface TesseractPage {
  text?: string;
  confidence?: number;
  blocks?: Array<{ paragraphs?: Array<{ lines?: Array<{ words?: TesseractWord[] }> }> }> | null;
  /** Tesseract's TSV: level, page, block, paragraph, line, word, left, top, width, height, conf, text. */
  tsv?: string | null;
}

/** The words of a TSV reading (level 5 rows), in reading order. */
function tsvWords(tsv: string): TesseractWord[] {
  const out: TesseractWord[] = [];
  for (const row of tsv.split('\n')) {
    if (!row.startsWith('5\t')) continue;
    const f = row.split('\t');
    if (f.length < 12) continue;
    const top = Number(f[7]);
    // Whole-number confidences, as the blocks tree reports them (the TSV has the decimals too).
    out.push({ text: f.slice(11).join('\t'), confidence: Math.trunc(Number(f[10])), bbox: { y0: top, y1: top + Number(f[9]) } });
  }
  return out;
}

/** Words with confidence > 0 (tesseract's 0 marks non-text noise) and their mean confidence. */
export function toOcrResult(page: TesseractPage): OcrResult {
  const words: OcrWord[] = [];
  const heights: number[] = [];
  const add = (w: TesseractWord) => {
    const text = w.text.trim();
    if (text && w.confidence > 0) words.push({ text, confidence: Math.round(w.confidence * 100) / 100 });
    if (text && w.confidence > 50 && w.bbox) heights.push(w.bbox.y1 - w.bbox.y0);
  };
  if (typeof page.tsv === 'string') for (const w of tsvWords(page.tsv)) add(w);
  for (const block of page.blocks ?? []) {
    for (const para of block.paragraphs ?? []) {
      for (const line of para.lines ?? []) {
        for (const w of line.words ?? []) add(w);
      }
    }
  }
  heights.sort((a, b) => a - b);
  const confidence = words.length ? words.reduce((a, w) => a + w.confidence, 0) / words.length : 0;
  const text = (page.text ?? '')
    .split('\n')
    .map((l) => l.trimEnd())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  return { text, confidence: Math.round(confidence * 100) / 100, words, ...(heights.length ? { textHeight: heights[heights.length >> 1] } : {}) };
}
