/**
 * Rate limits (@fastify/rate-limit stores): RATE_LIMIT_RPM calls per minute per client — its API
 * key when it presents a valid one, else its IP — and a global cap of 5x that for all clients.
 *
 * Counting is explicit rather than per route so that REST and MCP share one budget: REST requests
 * (unknown routes included) count in an onRequest hook; on /mcp only `tools/call` messages count,
 * each one like a REST call (initialize and listings are free). /health, /docs and /openapi.json
 * are not counted: probes and the API description must stay reachable.
 */
import { createHash } from 'node:crypto';
import fp from 'fastify-plugin';
import rateLimit from '@fastify/rate-limit';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { toolError } from '../src/errors.ts';
import { isOpenRoute, isValidApiKey, presentedApiKey } from './auth.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** Counts `count` calls against the caller's budget; throws RATE_LIMITED (429) when over. */
    consumeRateLimit(request: FastifyRequest, reply: FastifyReply, count?: number): Promise<void>;
  }
}

const WINDOW_MS = 60_000;
export const MCP_ROUTE = '/mcp';

const rateLimitPlugin: FastifyPluginAsync = async (app) => {
  const { config } = app;
  // global: false — no per-route hooks; the limiters below are applied by hand.
  await app.register(rateLimit, { global: false, max: config.RATE_LIMIT_RPM, timeWindow: WINDOW_MS });

  const clientKey = (request: FastifyRequest): string => {
    const key = presentedApiKey(request);
    if (key !== undefined && isValidApiKey(config.apiKeys, key)) {
      return `key:${createHash('sha256').update(key).digest('hex').slice(0, 32)}`;
    }
    return `ip:${request.ip}`;
  };
  const perClient = app.createRateLimit({ max: config.RATE_LIMIT_RPM, timeWindow: WINDOW_MS, keyGenerator: clientKey });
  const global = app.createRateLimit({ max: config.RATE_LIMIT_RPM * 5, timeWindow: WINDOW_MS, keyGenerator: () => 'global' });

  app.decorate('consumeRateLimit', async (request: FastifyRequest, reply: FastifyReply, count = 1) => {
    for (let i = 0; i < count; i++) {
      for (const [scope, limiter] of [['client', perClient], ['global', global]] as const) {
        const r = await limiter(request);
        if (r.isAllowed) continue;
        if (scope === 'client' || r.isExceeded) {
          reply.header('x-ratelimit-limit', r.max);
          reply.header('x-ratelimit-remaining', r.isExceeded ? 0 : r.remaining);
          reply.header('x-ratelimit-reset', r.ttlInSeconds);
        }
        if (r.isExceeded) {
          reply.header('retry-after', r.ttlInSeconds);
          throw toolError(
            'RATE_LIMITED',
            scope === 'client'
              ? `Rate limit of ${r.max} calls per minute exceeded; retry in ${r.ttlInSeconds} s`
              : `Server-wide rate limit of ${r.max} calls per minute exceeded; retry in ${r.ttlInSeconds} s`,
          );
        }
      }
    }
  });

  app.addHook('onRequest', async (request, reply) => {
    const route = request.routeOptions.url;
    if (route === MCP_ROUTE || isOpenRoute(route)) return;
    await app.consumeRateLimit(request, reply);
  });
};

export default fp(rateLimitPlugin, { name: 'rate-limit', fastify: '5.x', dependencies: ['services'] });
