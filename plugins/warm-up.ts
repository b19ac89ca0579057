/**
 * Work that makes later calls faster but that no call needs yet (loading the MCP SDK, parsing the
 * language model): `app.afterStart(name, task)` runs it once the server has answered its first
 * request, or WARM_UP_DELAY_MS after the port opened, whichever comes first; one task at a time,
 * each on a later turn of the event loop.
 *
 * Why not at once when the port opens: those tasks are synchronous module compilation and JSON
 * parsing (~100 ms and ~70 ms on this machine), and the first /health a process manager sends right
 * after the port opens would wait behind them. A call that needs one of them before it ran loads
 * it itself (routes/mcp.ts, src/language/eld-model.ts), so nothing waits on this ordering.
 * Without a listen (tests through app.inject) the tasks never run, as before.
 */
import fp from 'fastify-plugin';
import type { FastifyPluginAsync } from 'fastify';

export const WARM_UP_DELAY_MS = 1000;

declare module 'fastify' {
  interface FastifyInstance {
    /** Queues a warm-up task (see plugins/warm-up.ts); a failure is logged, never thrown. */
    afterStart(name: string, task: () => Promise<unknown>): void;
  }
}

const warmUpPlugin: FastifyPluginAsync<{ delayMs?: number }> = async (app, opts) => {
  const tasks: Array<{ name: string; task: () => Promise<unknown> }> = [];
  let started = false;
  const runAll = async () => {
    for (const { name, task } of tasks.splice(0)) {
      await new Promise((resolve) => setImmediate(resolve));
      await task().catch((err: unknown) => app.log.error({ err, event: 'warm_up.failed', task: name }, `warm-up ${name} failed`));
    }
  };
  const start = () => {
    if (started) return;
    started = true;
    void runAll();
  };
  app.decorate('afterStart', (name: string, task: () => Promise<unknown>) => {
    tasks.push({ name, task });
    if (started) void runAll();
  });
  app.addHook('onListen', async () => {
    // The raw server's first request, not an onResponse hook: nothing is added to every call.
    app.server.once('request', (_req, res) => res.once('close', start));
    setTimeout(start, opts.delayMs ?? WARM_UP_DELAY_MS).unref();
  });
};

export default fp(warmUpPlugin, { name: 'warm-up', fastify: '5.x' });
