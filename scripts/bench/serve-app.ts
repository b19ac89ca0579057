/**
 * The app in its own process for the load benchmark, so the load generator does not share its
 * event loop. Prints {"base": "...", "pid": N} once listening and ready; on SIGUSR2 prints its memory
 * after a full GC (when started with --expose-gc) as one JSON line; closes on SIGTERM.
 *
 *   npx tsx scripts/bench/serve-app.ts '{"modelsDir": null}'
 */
import { startApp } from './servers.ts';

const opts = JSON.parse(process.argv[2] ?? '{}') as { modelsDir?: string | null; env?: Record<string, string> };
const app = await startApp({ modelsDir: opts.modelsDir ?? null, env: opts.env });
process.stdout.write(JSON.stringify({ base: app.base, pid: process.pid }) + '\n');
process.on('SIGUSR2', () => {
  (globalThis as { gc?: () => void }).gc?.();
  const m = process.memoryUsage();
  const mb = (n: number) => n / 1048576;
  process.stdout.write(JSON.stringify({ rss_mb: mb(m.rss), heap_used_mb: mb(m.heapUsed), external_mb: mb(m.external), gc: typeof (globalThis as { gc?: unknown }).gc === 'function' }) + '\n');
});
const stop = async () => {
  await app.close();
  process.exit(0);
};
process.once('SIGTERM', () => void stop());
process.once('SIGINT', () => void stop());
