/**
 * A cooperative time slicer: call the returned function in a loop; once `sliceMs` of work has
 * passed it yields to the event loop (setImmediate) and resolves true, otherwise false at once.
 */
export function yieldToEventLoopEvery(sliceMs: number): () => Promise<boolean> {
  let sliceStart = performance.now();
  return async () => {
    if (performance.now() - sliceStart < sliceMs) return false;
    await new Promise<void>((resolve) => setImmediate(resolve));
    sliceStart = performance.now();
    return true;
  };
}
