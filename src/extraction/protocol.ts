/**
 * Messages between the server and an extraction child (node:child_process IPC with
 * `serialization: 'advanced'`, so Buffers and typed arrays arrive as themselves). The child never
 * holds the OCR engine: OCR calls travel back to the server as `ocr` requests.
 */
import type { ErrorCode } from '../errors.ts';
import type { DocumentKind, ExtractInput, PageProgress, ProcessedDocument } from '../extractors/shared/types.ts';

/** What finish() needs besides the extractor's output (all plain data). */
export interface FinishInfo {
  kind: DocumentKind;
  format: string;
  mime: string;
  by: string;
  fileSize: number;
  sha256: string;
  filename?: string;
  contentType?: string;
}

export interface ExtractJob {
  type: 'extract';
  id: number;
  kind: DocumentKind;
  input: Omit<ExtractInput, 'signal' | 'onProgress'>;
  /** Big inputs: `input.bytes` is empty and the bytes are in this file (the server removes it after the job). */
  bytesFile?: string;
  finish: FinishInfo;
  /**
   * Answers of the OcrPool's synchronous methods (stats, languages), computed by the server at
   * dispatch: a synchronous call cannot wait for IPC.
   */
  ocrSync: SyncCall[];
  /** Tests only: a module whose `extract` export replaces the extractor of this kind. */
  extractorModule?: string;
}

/** An OCR call reply; the value is whatever the server's OcrPool method resolved to. */
export interface OcrReply {
  type: 'ocr-reply';
  callId: number;
  ok: boolean;
  value?: unknown;
  error?: SerializedError;
}

export interface CancelOcr {
  type: 'ocr-cancel';
  callId: number;
}

export type ToChild = ExtractJob | OcrReply;

export interface SyncCall {
  method: string;
  args: unknown[];
  value?: unknown;
  error?: SerializedError;
}

/** The lookup key of a synchronous call: trailing undefined arguments do not count. */
export function syncKey(method: string, args: readonly unknown[]): string {
  let n = args.length;
  while (n > 0 && args[n - 1] === undefined) n--;
  return `${method}:${JSON.stringify(args.slice(0, n))}`;
}

export interface SerializedError {
  /** Present when the error was a ToolError. */
  code?: ErrorCode;
  message: string;
}

/**
 * Table rows cross in slices of this many, each its own message, before the result. One message
 * holding a 50 MB CSV's million rows would be deserialized on the server's main thread in one
 * piece (about a second with its garbage); slices are read one socket read at a time, so /health
 * and other calls run between them.
 */
export const ROWS_PER_MESSAGE = 2_000;

/**
 * A document's text crosses in slices of this many characters, each its own message, before the
 * result: a 50 MB text in one message is read and deserialized on the server's main thread in one
 * piece (about 100 ms on a loaded machine), slices one read at a time. The server joins them once
 * (join(''): one copy into a flat string; a `+` rope would be flattened later by the first read).
 */
export const CONTENT_CHARS_PER_MESSAGE = 1 << 20;

/** Stands in for an AbortSignal argument: the server substitutes the call's own signal. */
export const SIGNAL_ARG = { __extractionSignal: true } as const;

export type FromChild =
  | { type: 'ready' }
  | { type: 'result'; id: number; doc: ProcessedDocument }
  /** A slice of a table's rows, sent before the result (see ROWS_PER_MESSAGE). */
  | { type: 'rows'; id: number; table: number; rows: NonNullable<ProcessedDocument['tables'][number]['rows']>; row_numbers: number[] | null }
  /** A slice of the document's content, in order, sent before the result (see CONTENT_CHARS_PER_MESSAGE). */
  | { type: 'content'; id: number; text: string }
  | { type: 'error'; id: number; error: SerializedError }
  | { type: 'ocr'; id: number; callId: number; method: string; args: unknown[] }
  | { type: 'progress'; id: number; progress: PageProgress }
  | CancelOcr;

export function isSignalArg(v: unknown): boolean {
  return typeof v === 'object' && v !== null && (v as Record<string, unknown>).__extractionSignal === true;
}
