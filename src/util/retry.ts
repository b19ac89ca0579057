/**
 * Retrying an HTTP call: a bounded number of attempts, a backoff between them, and the server's
 * Retry-After honoured (or, past a limit, refused or capped). Shared by the document downloader
 * and the HTTP embedder; each says which failures are transient and what error ends the call.
 */
import { setTimeout as sleepFor } from 'node:timers/promises';

/** Retry-After as milliseconds: delta-seconds or an HTTP date; undefined when absent or invalid. */
export function parseRetryAfter(value: string | string[] | null | undefined, now = Date.now()): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (!v || v.trim() === '') return undefined;
  if (/^\s*\d+\s*$/.test(v)) return Number(v) * 1000;
  // An HTTP date names its day and month; anything else ("1.5", "soon") is invalid.
  if (!/[a-z]/i.test(v)) return undefined;
  const t = Date.parse(v);
  return Number.isNaN(t) ? undefined : Math.max(0, t - now);
}

/** Whether a failure is worth another attempt, with the wait the server asked for. */
export type RetryVerdict = false | { retryAfterMs?: number | undefined };

export interface RetryOptions {
  /** Attempts in all, the first included (at least 1). */
  attempts: number;
  /** The wait before retry n (1 for the first retry) when the server sent no Retry-After. */
  backoffMs(retry: number): number;
  /** Which failures are transient. Anything else ends the call at once. */
  retryable(err: unknown): RetryVerdict;
  /** The longest Retry-After waited for. Default: no limit. */
  maxRetryAfterMs?: number;
  /**
   * What a longer Retry-After does: 'fail' ends the call (with `retryAfterTooLong`'s error),
   * 'cap' waits maxRetryAfterMs. Default 'cap'.
   */
  overLimit?: 'fail' | 'cap';
  retryAfterTooLong?(err: unknown, retryAfterMs: number): unknown;
  /** The error the call ends with: `err` is the last failure, `attempts` how many were made. Default: err. */
  giveUp?(err: unknown, attempts: number): unknown;
  /** Told before each wait. */
  onRetry?(info: { attempt: number; delayMs: number; err: unknown }): void;
  signal?: AbortSignal;
  /** The error when the signal fires. Default: the signal's reason. */
  abortReason?(signal: AbortSignal): unknown;
  /** Injected by tests; default node:timers/promises setTimeout, cancelled by the signal. */
  sleep?(ms: number, signal?: AbortSignal): Promise<void>;
}

const defaultSleep = async (ms: number, signal?: AbortSignal): Promise<void> => {
  await sleepFor(ms, undefined, signal ? { signal } : undefined);
};

/** Runs `attempt` until it succeeds, fails for good, runs out of attempts, or the signal fires. */
export async function withRetries<T>(attempt: (n: number) => Promise<T>, opts: RetryOptions): Promise<T> {
  const { signal } = opts;
  const aborted = () => (opts.abortReason ? opts.abortReason(signal!) : signal!.reason);
  const sleep = opts.sleep ?? defaultSleep;
  for (let n = 1; ; n++) {
    if (signal?.aborted) throw aborted();
    try {
      return await attempt(n);
    } catch (err) {
      if (signal?.aborted) throw aborted();
      const verdict = opts.retryable(err);
      if (verdict === false || n >= opts.attempts) throw opts.giveUp ? opts.giveUp(err, n) : err;
      let delayMs = opts.backoffMs(n);
      const asked = verdict.retryAfterMs;
      if (asked !== undefined) {
        const limit = opts.maxRetryAfterMs ?? Infinity;
        if (asked > limit && opts.overLimit === 'fail') throw opts.retryAfterTooLong ? opts.retryAfterTooLong(err, asked) : err;
        delayMs = Math.min(asked, limit);
      }
      opts.onRetry?.({ attempt: n, delayMs, err });
      try {
        await sleep(delayMs, signal);
      } catch (sleepErr) {
        if (signal?.aborted) throw aborted();
        throw sleepErr;
      }
    }
  }
}
