/**
 * Yielding to the event loop from long CPU work, so timers, I/O and aborts get their turn. A plain
 * yield is `await setImmediate()` from node:timers/promises; this adds the time-sliced form.
 */
import { setImmediate } from 'node:timers/promises';

/**
 * A cooperative time slicer: call the returned function in a loop; once `sliceMs` of work has
 * passed it yields to the event loop (setImmediate) and resolves true, otherwise false at once.
 */
export function yieldToEventLoopEvery(sliceMs: number): () => Promise<boolean> {
  let sliceStart = performance.now();
  return async () => {
    if (performance.now() - sliceStart < sliceMs) return false;
    await setImmediate();
    sliceStart = performance.now();
    return true;
  };
}
