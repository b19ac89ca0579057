/**
 * The service container (caches, and later OCR workers, models, indexes) and the tool registry,
 * decorated on the app. Services created here are closed when the app closes; services passed in
 * by the caller belong to the caller.
 */
import { mkdir } from 'node:fs/promises';
import fp from 'fastify-plugin';
import type { FastifyPluginAsync } from 'fastify';
import { createServices, type Services } from '../src/services.ts';
import type { Config } from '../src/config.ts';
import type { AnyTool } from '../src/tools/define-tool.ts';

declare module 'fastify' {
  interface FastifyInstance {
    config: Readonly<Config>;
    services: Services;
    /** The registry served by this app (production tools plus any extraTools). */
    tools: readonly AnyTool[];
  }
}

export interface ServicesPluginOptions {
  config: Readonly<Config>;
  tools: readonly AnyTool[];
  services?: Services;
}

const servicesPlugin: FastifyPluginAsync<ServicesPluginOptions> = async (app, opts) => {
  await mkdir(opts.config.dataDir, { recursive: true });
  const owned = !opts.services;
  const services = opts.services ?? createServices(opts.config, { log: app.log as never });
  // REDIS_URL set: connected before any route exists; unreachable, the app does not build
  // (RedisStartupError, which src/server.ts prints), and what was started here is closed again.
  try {
    await services.redis?.start();
    // Jobs, their progress and collection notices go through Redis too (src/kb/redis-job-queue.ts).
    if (services.redis) await services.kb.attachDistributed?.(services.redis);
  } catch (err) {
    if (owned) await services.close();
    throw err;
  }
  app.decorate('config', opts.config);
  app.decorate('services', services);
  app.decorate('tools', opts.tools);
  if (owned) app.addHook('onClose', async () => services.close());
};

export default fp(servicesPlugin, { name: 'services', fastify: '5.x' });
