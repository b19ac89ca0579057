/**
 * What both queues do after a document's run (document-executor.ts nextStep): the in-process runner
 * and the Redis worker take this one decision, so retries by error class, cancellation and a stop
 * behave the same in both modes.
 */
import t from 'tap';
import { toolError } from '../../src/errors.ts';
import { isTransient, nextStep, retryDelayMs, type DocumentOutcome } from '../../src/kb/document-executor.ts';

const item = { document_id: 'doc_1', note: null };
const ctx = (over: Partial<{ cancelled: boolean; stopping: boolean; tries: number; attempts: number }> = {}) => ({
  cancelled: () => over.cancelled ?? false,
  stopping: over.stopping ?? false,
  tries: over.tries ?? 1,
  attempts: over.attempts ?? 3,
});
const failed = (err: unknown): DocumentOutcome => ({
  kind: 'failed',
  error: { code: (err as { code?: string }).code ?? 'PROCESSING_ERROR', message: (err as Error).message },
  transient: isTransient(err),
  cause: err,
});

t.test('an ended run ends the item as it came', async (t) => {
  const end = { stage: 'done' as const, document_id: 'doc_1', note: null, error: null };
  t.same(nextStep({ kind: 'ended', end }, item, ctx()), { step: 'end', end, cancelled: false });
});

t.test('an aborted run: cancelled wins over a stop; neither is the document failing', async (t) => {
  const aborted: DocumentOutcome = { kind: 'aborted', reason: toolError('CONFLICT', 'Job x was cancelled') };
  t.match(nextStep(aborted, item, ctx({ cancelled: true, stopping: true })), { step: 'end', cancelled: true, end: { stage: 'cancelled', document_id: 'doc_1' } });
  t.same(nextStep(aborted, item, ctx({ stopping: true })), { step: 'stopped' }, 'stopping: left for the next start or put back, no try spent');
  t.match(nextStep(aborted, item, ctx()), { step: 'end', cancelled: false, end: { stage: 'failed', error: { code: 'PROCESSING_ERROR' } } });
});

t.test('a transient failure is retried with the backoff until the tries are spent', async (t) => {
  const err = toolError('DOWNLOAD_ERROR', 'HTTP 503 Service Unavailable from 127.0.0.1:1 (after 3 attempts)');
  t.same(nextStep(failed(err), item, ctx({ tries: 1 })), { step: 'retry', delayMs: retryDelayMs(1), code: 'DOWNLOAD_ERROR', note: `try 1 of 3 failed (DOWNLOAD_ERROR: ${err.message}); retrying` });
  t.equal(retryDelayMs(1), 2_000);
  t.equal(retryDelayMs(2), 4_000, 'doubled per try, as BullMQ exponential backoff from RETRY_FIRST_MS');
  t.match(nextStep(failed(err), item, ctx({ tries: 3 })), { step: 'end', end: { stage: 'failed', note: 'failed after 3 tries', error: { code: 'DOWNLOAD_ERROR' } } });
});

t.test("a failure of the document's own is not retried", async (t) => {
  for (const err of [toolError('DOWNLOAD_ERROR', 'HTTP 404 Not Found from 127.0.0.1:1'), toolError('UNSUPPORTED_FORMAT', 'no'), toolError('DOWNLOAD_ERROR', 'too many redirects')]) {
    t.match(nextStep(failed(err), item, ctx()), { step: 'end', cancelled: false, end: { stage: 'failed', note: null } }, err.message);
  }
});
