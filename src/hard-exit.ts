/**
 * The last word of a shutdown: once a stop has begun, the process is gone by a deadline, whatever
 * is still running. Graceful steps come first (src/server.ts: app.close(), then at SHUTDOWN_TIMEOUT
 * in-flight calls cut with 503 and connections closed); this is for what those cannot end - a
 * close hook that never resolves, a handler that ignores its signal, a main thread stuck in
 * synchronous work. Two timers, because a timer on the main thread cannot fire while that thread
 * is blocked:
 * - on the main thread: logs and exits with status 1 (the normal case of a stuck await);
 * - in a worker thread, BACKSTOP_MS later: SIGKILL to the process, which needs nothing from the
 *   main thread (a worker's timers run on their own event loop).
 * Both are unref'ed: a shutdown that finishes in time exits as usual.
 */
import { Worker } from 'node:worker_threads';

/** How long after the main thread's exit the worker's SIGKILL follows. */
export const BACKSTOP_MS = 1_000;

const BACKSTOP_SOURCE = `
const { workerData } = require('node:worker_threads');
setTimeout(() => process.kill(workerData.pid, 'SIGKILL'), workerData.ms);
`;

export interface HardExit {
  /** Stops both timers (tests; a process that exits normally need not call it). */
  cancel(): void;
}

/** Arms both timers: exit(1) at `ms`, SIGKILL at `ms + BACKSTOP_MS`. */
export function armHardExit(ms: number, onExpire: () => void = () => {}): HardExit {
  const timer = setTimeout(() => {
    try {
      onExpire();
    } finally {
      process.exit(1);
    }
  }, ms);
  timer.unref();
  let worker: Worker | null = null;
  try {
    // No inherited execArgv: a loader such as tsx would make the worker's start wait on the main thread.
    worker = new Worker(BACKSTOP_SOURCE, { eval: true, execArgv: [], workerData: { pid: process.pid, ms: ms + BACKSTOP_MS } });
    worker.unref();
    // A worker that cannot start leaves the main-thread timer; that is no reason to fail a stop.
    worker.on('error', () => {});
  } catch {
    worker = null;
  }
  return {
    cancel() {
      clearTimeout(timer);
      void worker?.terminate();
    },
  };
}
