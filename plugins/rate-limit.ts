/**
 * Rate limits (@fastify/rate-limit stores): RATE_LIMIT_RPM tool calls per minute per client — its
 * API key when it presents a valid one, else its IP — and a global cap of 5x that for all clients.
 * RATE_LIMIT_RPM=0 turns them off (with a warning when bound to a non-loopback address).
 *
 * Counting is explicit rather than per route so that REST and MCP share one budget: REST tool calls
 * (/v1/*, and unknown routes, so probing is not free) count in an onRequest hook; on /mcp only
 * `tools/call` messages count, each one like a REST call (initialize and listings are free).
 * /health, /info, /docs (with Swagger UI's assets) and /openapi.json are not counted: probes and
 * the API description must stay reachable. A request to one of them that fails authentication
 * does count (plugins/auth.ts), so guessing keys is never free.
 */
import { createHash } from 'node:crypto';
import fp from 'fastify-plugin';
import rateLimit from '@fastify/rate-limit';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { toolError } from '../src/errors.ts';
import { isLoopbackHost } from '../src/loopback.ts';
import { isValidApiKey, presentedApiKey } from './auth.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** Counts `count` calls against the caller's budget; throws RATE_LIMITED (429) when over. */
    consumeRateLimit(request: FastifyRequest, reply: FastifyReply, count?: number): Promise<void>;
  }
  interface FastifyRequest {
    /** True once this request has been counted against its caller's budget. */
    rateLimitCounted: boolean;
  }
}

const WINDOW_MS = 60_000;
export const MCP_ROUTE = '/mcp';

/** Routes whose requests count as one tool call each: /v1/* and unknown routes (no route url). */
export function isCountedRoute(routeUrl: string | undefined): boolean {
  return routeUrl === undefined || routeUrl.startsWith('/v1/');
}

const rateLimitPlugin: FastifyPluginAsync = async (app) => {
  const { config } = app;
  app.decorateRequest('rateLimitCounted', false);
  if (config.RATE_LIMIT_RPM === 0) {
    app.decorate('consumeRateLimit', async () => {});
    if (!isLoopbackHost(config.HOST)) {
      app.log.warn(
        { event: 'rate_limit.off', host: config.HOST },
        `RATE_LIMIT_RPM=0: rate limiting is off while bound to ${config.HOST}; any client that reaches this address can make unlimited calls`,
      );
    }
    return;
  }
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
    request.rateLimitCounted = true;
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
    if (!isCountedRoute(request.routeOptions.url)) return;
    await app.consumeRateLimit(request, reply);
  });
};

export default fp(rateLimitPlugin, { name: 'rate-limit', fastify: '5.x', dependencies: ['services'] });
