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
