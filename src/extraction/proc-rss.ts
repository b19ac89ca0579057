/**
 * Resident memory of another process, read from /proc/<pid>/status (VmRSS). process.memoryUsage()
 * only sees the caller; the pool needs the children's, including native memory (canvas, wasm).
 */
import { readFileSync } from 'node:fs';

export const RSS_WATCH_SUPPORTED = process.platform === 'linux';

/** Bytes, or null when the process is gone or /proc is not there. */
export function readRssBytes(pid: number): number | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'latin1');
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
    return m ? Number(m[1]) * 1024 : null;
  } catch {
    return null;
  }
}
