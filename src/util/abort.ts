/**
 * The error an aborted call ends with: the signal's own coded reason (a timeout or shutdown set by
 * the tool guard), else TIMEOUT naming the work that stopped.
 */
import { isToolError, toolError, type ToolError } from '../errors.ts';
import { ChurnList } from './churn-list.ts';

export function abortError(signal: AbortSignal, what = 'Processing'): ToolError {
  if (isToolError(signal.reason)) return signal.reason;
  return toolError('TIMEOUT', `${what} cancelled: the request was aborted or timed out`);
}

/** Throws abortError when the signal has fired. */
export function throwIfAborted(signal: AbortSignal | undefined, what?: string): void {
  if (signal?.aborted) throw abortError(signal, what);
}

const followers = new WeakMap<AbortSignal, ChurnList<() => void>>();

/**
 * Calls `fn` once when `signal` aborts (at once when it already has); returns the function that forgets it. For a signal that
 * lives long and is followed by many short calls (the server's shutdown signal, followed by every
 * tool call): they share one listener on the signal and each joins a ChurnList (not a Set: see
 * churn-list.ts), where adding and removing an EventTarget listener per call cost a few
 * microseconds of a small call.
 */
export function onAbort(signal: AbortSignal, fn: () => void): () => void {
  if (signal.aborted) {
    fn();
    return () => {};
  }
  let list = followers.get(signal);
  if (list === undefined) {
    const created = new ChurnList<() => void>();
    followers.set(signal, created);
    // One forgotten during the dispatch is not called (as with EventTarget).
    signal.addEventListener('abort', () => created.forEach((f) => f()), { once: true });
    list = created;
  }
  return list.add(fn);
}
