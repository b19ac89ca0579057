/**
 * The child's stand-in for the server's OcrPool. Every asynchronous method call is forwarded by
 * name with its arguments (AbortSignals replaced by a marker), so options added to OcrPool later
 * pass through unchanged. Synchronous methods (stats, language resolution) answer from the results
 * the server computed for this job, because their callers cannot wait for IPC.
 */
import { toolError } from '../errors.ts';
import type { OcrPool } from '../extractors/ocr/ocr-pool.ts';
import { abortError } from '../util/abort.ts';
import { SIGNAL_ARG, syncKey, type FromChild, type OcrReply, type SyncCall } from './protocol.ts';

interface PendingCall {
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
}

export class OcrProxyChannel {
  private readonly pending = new Map<number, PendingCall>();
  private nextCallId = 1;

  constructor(private readonly send: (msg: FromChild) => void) {}

  /** An OcrPool look-alike for one job. */
  forJob(jobId: number, sync: readonly SyncCall[]): OcrPool {
    const answers = new Map(sync.map((c) => [syncKey(c.method, c.args), c]));
    const syncMethods = new Set(sync.map((c) => c.method));
    return new Proxy({}, {
      get: (_t, prop) => {
        if (typeof prop !== 'string' || prop === 'then') return undefined;
        if (syncMethods.has(prop)) return (...args: unknown[]) => answerSync(answers.get(syncKey(prop, args)), prop);
        return (...args: unknown[]) => this.call(jobId, prop, args);
      },
    }) as OcrPool;
  }

  onReply(msg: OcrReply): void {
    const p = this.pending.get(msg.callId);
    if (!p) return;
    this.pending.delete(msg.callId);
    if (msg.ok) p.resolve(msg.value);
    else p.reject(msg.error?.code ? toolError(msg.error.code, msg.error.message) : new Error(msg.error?.message ?? 'OCR failed'));
  }

  private call(jobId: number, method: string, args: unknown[]): Promise<unknown> {
    const signals = args.filter((a): a is AbortSignal => a instanceof AbortSignal);
    const aborted = signals.find((s) => s.aborted);
    if (aborted) return Promise.reject(abortError(aborted, 'OCR'));
    const callId = this.nextCallId++;
    const wire = args.map((a) => (a instanceof AbortSignal ? SIGNAL_ARG : a));
    return new Promise((resolve, reject) => {
      const onAbort = (e: Event) => {
        if (!this.pending.delete(callId)) return;
        this.send({ type: 'ocr-cancel', callId });
        reject(abortError(e.target as AbortSignal, 'OCR'));
      };
      const done = () => signals.forEach((s) => s.removeEventListener('abort', onAbort));
      signals.forEach((s) => s.addEventListener('abort', onAbort, { once: true }));
      this.pending.set(callId, {
        resolve: (v) => (done(), resolve(v)),
        reject: (e) => (done(), reject(e)),
      });
      this.send({ type: 'ocr', id: jobId, callId, method, args: wire });
    });
  }
}

function answerSync(call: SyncCall | undefined, method: string): unknown {
  if (!call) throw new Error(`OCR ${method}() was called with arguments the server did not prepare for this job`);
  if (call.error) throw call.error.code ? toolError(call.error.code, call.error.message) : new Error(call.error.message);
  return structuredClone(call.value);
}
