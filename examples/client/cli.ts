/** Small helpers the examples' command lines share. */
import { realpathSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** True when the module at `moduleUrl` is the script node (or tsx) was started with, not an import. */
export function isMain(moduleUrl: string): boolean {
  const script = process.argv[1];
  if (!script) return false;
  const real = (p: string) => {
    try {
      return realpathSync(p);
    } catch {
      return path.resolve(p);
    }
  };
  return real(fileURLToPath(moduleUrl)) === real(script);
}

/** Runs a CLI's main, printing a failure to stderr with exit status 1 instead of a stack trace. */
export function runCli(main: () => Promise<unknown>): void {
  main().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  });
}

/** Waits `ms` (for polling a job between calls), ending early when `signal` aborts. */
export function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(done, ms);
    function done() {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }
    function onAbort() {
      clearTimeout(timer);
      reject(signal!.reason);
    }
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** A collection name (lowercase letters, digits, "-", "_"; 1-64) made from a folder's name. */
export function collectionNameFor(folder: string): string {
  const name = path
    .basename(path.resolve(folder))
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, '-')
    .replace(/^[^a-z0-9]+/, '')
    .slice(0, 64)
    .replace(/-+$/, '');
  return name || 'documents';
}
