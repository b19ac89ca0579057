/**
 * One document of a job, run the same way by both queues: the in-process runner (job-runner.ts)
 * and the Redis workers (ingest-worker.ts). It reads a spooled upload, runs the ingestion
 * (download or read -> extract -> chunk -> embed -> commit, in ingest-document.ts through
 * `runItem`) under INGEST_DOCUMENT_TIMEOUT, applies its progress to the item, and classes a
 * failure as transient (a retry may cure it) or the document's own. What the queues add is only
 * scheduling and transport: where the item's record lives, how its progress is published and how
 * a retry is delayed (a timer in process, BullMQ's backoff in Redis), both at retryDelayMs.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { isToolError, toolError, type ErrorCode } from '../errors.ts';
import { errorText } from '../util/error-text.ts';
import { applyProgress, LOST_UPLOAD_REASON, type ItemEnd } from './job-state.ts';
import type { ItemProgress, ItemStage, JobItem, JobRecord } from './types.ts';

/** What a job was asked for beyond its items, kept beside its spool so a resumed job runs the same way. */
export interface JobOptions {
  force: boolean;
  ocr?: { mode?: 'auto' | 'always' | 'never'; languages?: string[] };
  /** Allowed folders for its local paths when they came with the request (MCP roots). */
  allowedDirs?: string[];
  allowedOrigin?: string;
  /** Content types of spooled uploads, by item index. */
  contentTypes?: Record<number, string>;
  /** The upload's read sequence number, taken when it was received (the newest read wins: ingest-document.ts). */
  uploadReadSeq?: number;
  /** The API key that submitted the job (tenant-share.ts); absent: DEFAULT_TENANT. */
  tenant?: string;
}

export interface ItemRun {
  job: Readonly<JobRecord>;
  item: Readonly<JobItem>;
  options: Readonly<JobOptions>;
  /** Upload items: the spooled bytes. */
  upload?: Buffer;
  signal: AbortSignal;
  /** Stage changes are saved at once; progress within a stage is throttled. */
  progress(stage: ItemStage, p: Partial<ItemProgress>, documentId: string | null): void;
}

export interface ItemResult {
  stage: 'done' | 'skipped';
  documentId: string;
  note: string | null;
}

/** Progress within a stage is written at most this often per job (in process) or per document (Redis); stage changes at once. */
export const PROGRESS_SAVE_MS = 1_000;
/** Progress notices per document per second at most over the bus (stage changes always go). */
export const PROGRESS_EVENT_MS = 100;
/** The wait before the second try of a document; doubled for each further try (2 s, 4 s, 8 s ...). */
export const RETRY_FIRST_MS = 2_000;

/** The wait after the `tries`-th failed try (1-based). BullMQ's exponential backoff with RETRY_FIRST_MS computes the same. */
export function retryDelayMs(tries: number): number {
  return RETRY_FIRST_MS * 2 ** Math.max(0, tries - 1);
}

/** Codes a retry may cure: an outage or a bug somewhere below, not the document. */
const TRANSIENT_CODES: ReadonlySet<ErrorCode> = new Set(['OVERLOADED', 'SHUTTING_DOWN', 'STORAGE_UNAVAILABLE', 'INTERNAL_ERROR', 'QUEUE_UNAVAILABLE']);

/**
 * Transient: timeouts and network errors of the download, HTTP 5xx, 408 and 429 (the downloader
 * has retried those already, but the origin may be back in seconds), an outage of the server
 * itself, an extraction process that crashed, and any error that is not coded. The document's
 * own: unsupported, too large, no text, a refused URL, HTTP 4xx, broken redirects, and a
 * document over INGEST_DOCUMENT_TIMEOUT (it would be over it again).
 */
export function isTransient(err: unknown): boolean {
  if (!isToolError(err)) return true;
  if (TRANSIENT_CODES.has(err.code)) return true;
  if (err.code === 'DOWNLOAD_ERROR') {
    const status = /^HTTP (\d{3})\b/.exec(err.message)?.[1];
    if (status) return status === '408' || status === '429' || status.startsWith('5');
    return !/redirect/i.test(err.message);
  }
  // The extraction pool's crashed child (extraction-pool.ts): a retry runs it in a fresh process.
  return err.code === 'PROCESSING_ERROR' && /extraction process crashed/.test(err.message);
}

export type DocumentOutcome =
  | { kind: 'ended'; end: ItemEnd }
  /** Aborted from outside (a cancel, the process stopping): the queue decides which it was. */
  | { kind: 'aborted'; reason: unknown }
  | { kind: 'failed'; error: { code: string; message: string }; transient: boolean; cause: unknown };

export interface DocumentExecutorDeps {
  /** DATA_DIR/kb/uploads: `<job>/<index>` holds an upload's bytes. */
  spoolDir: string;
  /** Seconds per document (INGEST_DOCUMENT_TIMEOUT). */
  documentTimeoutS: number;
  runItem(run: ItemRun): Promise<ItemResult>;
}

export interface DocumentTask {
  job: Readonly<JobRecord>;
  /** The item's record as its queue holds it; progress is applied to it here. */
  item: JobItem;
  options: Readonly<JobOptions>;
  /** Aborting it (a cancel, a stop) ends the run as `aborted`. */
  ctrl: AbortController;
  /** After each progress the ingestion reports: `changed` when its stage did. */
  onProgress(changed: boolean): void;
}

/** Runs one document to its outcome; never throws. */
export async function executeDocument(deps: DocumentExecutorDeps, task: DocumentTask): Promise<DocumentOutcome> {
  const { job, item, ctrl } = task;
  const timeout = toolError('TIMEOUT', `The document took longer than INGEST_DOCUMENT_TIMEOUT (${deps.documentTimeoutS} s)`);
  const timer = setTimeout(() => ctrl.abort(timeout), Math.min(deps.documentTimeoutS * 1000, 2 ** 31 - 1));
  try {
    let upload: Buffer | undefined;
    if (item.source_kind === 'upload') {
      upload = await fs.readFile(path.join(deps.spoolDir, job.id, String(item.index))).catch(() => {
        throw toolError('PROCESSING_ERROR', LOST_UPLOAD_REASON);
      });
    }
    const result = await deps.runItem({
      job,
      item,
      options: task.options,
      ...(upload ? { upload } : {}),
      signal: ctrl.signal,
      progress: (stage, p, documentId) => {
        if (ctrl.signal.aborted) return;
        task.onProgress(applyProgress(item, stage, p, documentId));
      },
    });
    return { kind: 'ended', end: { stage: result.stage, document_id: result.documentId, note: result.note, error: null } };
  } catch (err) {
    if (ctrl.signal.aborted && ctrl.signal.reason !== timeout) return { kind: 'aborted', reason: ctrl.signal.reason };
    const cause = ctrl.signal.reason === timeout ? timeout : err;
    const error = isToolError(cause) ? { code: cause.code, message: cause.message } : { code: 'PROCESSING_ERROR', message: errorText(cause) };
    return { kind: 'failed', error, transient: ctrl.signal.reason !== timeout && isTransient(cause), cause };
  } finally {
    clearTimeout(timer);
  }
}

export type RetryDecision = { retry: true; delayMs: number; note: string } | { retry: false; end: ItemEnd };

/** After a failed try (`tries` made so far, this one included): another try, or the item's end. */
export function afterFailure(outcome: Extract<DocumentOutcome, { kind: 'failed' }>, item: Pick<JobItem, 'document_id' | 'note'>, tries: number, attempts: number): RetryDecision {
  const e = outcome.error;
  if (outcome.transient && tries < attempts) {
    return { retry: true, delayMs: retryDelayMs(tries), note: `try ${tries} of ${attempts} failed (${e.code}: ${e.message}); retrying` };
  }
  return { retry: false, end: { stage: 'failed', document_id: item.document_id, note: tries > 1 ? `failed after ${tries} tries` : item.note, error: e } };
}

/** What a queue does with a document after its run: the same decision in both queues. */
export type NextStep =
  | { step: 'end'; end: ItemEnd; cancelled: boolean }
  | { step: 'retry'; delayMs: number; note: string; code: string }
  /** Stopped with its process: left for the next start (in process) or put back in the queue (Redis), no try spent. */
  | { step: 'stopped' };

export interface StepContext {
  /** Its job's cancel was asked (read only when the run was aborted). */
  cancelled(): boolean;
  /** The queue is stopping (close, SIGTERM). */
  stopping: boolean;
  /** Tries made so far, this one included. */
  tries: number;
  /** INGEST_ATTEMPTS. */
  attempts: number;
}

/**
 * The outcome of one run turned into the queue's next move. A cancel wins over a stop (the job
 * ends rather than waiting for a restart); an abort that is neither counts as the document's own
 * failure; a failure is retried by its class (afterFailure).
 */
export function nextStep(outcome: DocumentOutcome, item: Pick<JobItem, 'document_id' | 'note'>, ctx: StepContext): NextStep {
  if (outcome.kind === 'ended') return { step: 'end', end: outcome.end, cancelled: false };
  if (outcome.kind === 'aborted') {
    if (ctx.cancelled()) return { step: 'end', end: { stage: 'cancelled', document_id: item.document_id, note: null, error: null }, cancelled: true };
    if (ctx.stopping) return { step: 'stopped' };
  }
  const failed: Extract<DocumentOutcome, { kind: 'failed' }> =
    outcome.kind === 'failed' ? outcome : { kind: 'failed', error: { code: 'PROCESSING_ERROR', message: errorText(outcome.reason) }, transient: false, cause: outcome.reason };
  const next = afterFailure(failed, item, ctx.tries, ctx.attempts);
  return next.retry ? { step: 'retry', delayMs: next.delayMs, note: next.note, code: failed.error.code } : { step: 'end', end: next.end, cancelled: false };
}

/** True at most once per `ms` (and always when `force`): throttles progress writes and notices. */
export function throttle(ms: number, last = Date.now()): (force: boolean) => boolean {
  return (force) => {
    const t = Date.now();
    if (!force && t - last < ms) return false;
    last = t;
    return true;
  };
}
