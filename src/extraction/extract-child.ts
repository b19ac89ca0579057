/**
 * Entry of an extraction child process. It runs one document at a time: the extractor for its
 * kind, then completeDocument (URLs, language), and sends the ProcessedDocument back. Whatever the
 * input does here (endless allocation, a hung native call, a crash) costs only this process; the
 * server kills and replaces it. Nothing is written to stdout (the server may speak MCP on its own).
 */
import { readFile } from 'node:fs/promises';
import { isToolError } from '../errors.ts';
import type { ExtractInput, PageProgress, ProcessedDocument } from '../extractors/shared/types.ts';
import { DEFAULT_EXTRACTORS, type Extractor } from '../documents/extractor-table.ts';
import { errorText } from '../util/error-text.ts';
import { completeDocument, defaultDetectLanguage } from './complete-document.ts';
import { OcrProxyChannel } from './ocr-proxy.ts';
import { CONTENT_CHARS_PER_MESSAGE, ROWS_PER_MESSAGE, type ExtractJob, type FromChild, type SerializedError, type ToChild } from './protocol.ts';

if (!process.send) throw new Error('extract-child must be started by the extraction pool (no IPC channel)');

const send = (msg: FromChild) => {
  process.send!(msg);
};
const ocr = new OcrProxyChannel(send);

function serialize(err: unknown): SerializedError {
  if (isToolError(err)) return { code: err.code, message: err.message };
  // Allocation failures that V8 reports as catchable errors are still the memory ceiling.
  if (err instanceof RangeError && /allocation failed|Invalid array length|Invalid string length/i.test(err.message)) {
    return { code: 'PAYLOAD_TOO_LARGE', message: `The document needs more memory than one extraction may use: ${errorText(err, 120)}` };
  }
  return { message: errorText(err) };
}

async function extractorFor(job: ExtractJob): Promise<Extractor> {
  if (!job.extractorModule) return DEFAULT_EXTRACTORS[job.kind];
  const mod = (await import(job.extractorModule)) as { extract: Extractor };
  return mod.extract;
}

/** Sends big tables' rows ahead of the result in slices (protocol.ts ROWS_PER_MESSAGE) and empties them in `doc`. */
function sendRowsInSlices(id: number, doc: ProcessedDocument): void {
  doc.tables.forEach((t, table) => {
    if (!t.rows || t.rows.length <= ROWS_PER_MESSAGE) return;
    for (let at = 0; at < t.rows.length; at += ROWS_PER_MESSAGE) {
      send({ type: 'rows', id, table, rows: t.rows.slice(at, at + ROWS_PER_MESSAGE), row_numbers: t.row_numbers ? t.row_numbers.slice(at, at + ROWS_PER_MESSAGE) : null });
    }
    t.rows = [];
    if (t.row_numbers) t.row_numbers = [];
  });
}

/** Sends a big content ahead of the result in slices (protocol.ts CONTENT_CHARS_PER_MESSAGE) and empties it in `doc`. */
function sendContentInSlices(id: number, doc: ProcessedDocument): void {
  if (doc.content.length <= CONTENT_CHARS_PER_MESSAGE) return;
  for (let at = 0; at < doc.content.length; at += CONTENT_CHARS_PER_MESSAGE) {
    send({ type: 'content', id, text: doc.content.slice(at, at + CONTENT_CHARS_PER_MESSAGE) });
  }
  doc.content = '';
}

async function run(job: ExtractJob): Promise<void> {
  // The server kills this process to cancel; the signal exists for extractors that pass it on.
  const signal = new AbortController().signal;
  // Progress crosses IPC at most every 250 ms (a 5,000-page text pass reports a few dozen times).
  let lastSent = 0;
  const onProgress = (progress: PageProgress) => {
    const now = Date.now();
    if (now - lastSent < 250 && progress.pages_done < progress.pages_total) return;
    lastSent = now;
    send({ type: 'progress', id: job.id, progress });
  };
  const input: ExtractInput = { ...job.input, signal, onProgress };
  try {
    if (job.bytesFile) input.bytes = await readFile(job.bytesFile);
    const extractor = await extractorFor(job);
    const doc = await extractor(input, { ocr: ocr.forJob(job.id, job.ocrSync) });
    const finished = completeDocument(doc, job.finish, await defaultDetectLanguage());
    sendRowsInSlices(job.id, finished);
    sendContentInSlices(job.id, finished);
    send({ type: 'result', id: job.id, doc: finished });
  } catch (err) {
    send({ type: 'error', id: job.id, error: serialize(err) });
  }
}

process.on('message', (msg: ToChild) => {
  if (msg.type === 'extract') void run(msg);
  else if (msg.type === 'ocr-reply') ocr.onReply(msg);
});
// The server closing the channel (or dying) ends this process.
process.on('disconnect', () => process.exit(0));
send({ type: 'ready' });
