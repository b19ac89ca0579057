/**
 * The error an aborted call ends with: the signal's own coded reason (a timeout or shutdown set by
 * the tool guard), else TIMEOUT naming the work that stopped.
 */
import { isToolError, toolError, type ToolError } from '../errors.ts';

export function abortError(signal: AbortSignal, what = 'Processing'): ToolError {
  if (isToolError(signal.reason)) return signal.reason;
  return toolError('TIMEOUT', `${what} cancelled: the request was aborted or timed out`);
}

/** Throws abortError when the signal has fired. */
export function throwIfAborted(signal: AbortSignal | undefined, what?: string): void {
  if (signal?.aborted) throw abortError(signal, what);
}

const followers = new WeakMap<AbortSignal, Set<() => void>>();

/**
 * Calls `fn` once when `signal` aborts (at once when it already has); returns the function that forgets it. For a signal that
 * lives long and is followed by many short calls (the server's shutdown signal, followed by every
 * tool call): they share one listener on the signal and each adds itself to a set, where adding and
 * removing an EventTarget listener per call cost a few microseconds of a small call.
 */
export function onAbort(signal: AbortSignal, fn: () => void): () => void {
  if (signal.aborted) {
    fn();
    return () => {};
  }
  let set = followers.get(signal);
  if (set === undefined) {
    const created = new Set<() => void>();
    followers.set(signal, created);
    signal.addEventListener(
      'abort',
      () => {
        // Live iteration: one forgotten during the dispatch is not called (as with EventTarget).
        for (const f of created) f();
        created.clear();
      },
      { once: true },
    );
    set = created;
  }
  const own = set;
  own.add(fn);
  return () => void own.delete(fn);
}
