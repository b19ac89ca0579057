/**
 * Rate limits (@fastify/rate-limit stores): RATE_LIMIT_RPM tool calls per minute per client — its
 * API key when it presents a valid one, else its IP — and a global cap of 5x that for all clients.
 * RATE_LIMIT_RPM=0 turns them off (with a warning when bound to a non-loopback address). Left
 * unset on a loopback bind without API keys, it is LOOPBACK_RATE_LIMIT_RPM (6,000; src/config.ts
 * decides): one developer's scripts on their own machine should not meet a limit meant for a
 * shared server, and that start says so in the log.
 *
 * Authentication comes before budgets. With API_KEYS set, a request without a valid key is
 * answered 401 by plugins/auth.ts (an onRequest hook) and never reaches the tool-call budgets,
 * which are counted later, in preParsing (so still before any body is read). Failed requests have
 * budgets of their own, kept apart so that a flood of them cannot use up anyone else's: the same
 * RATE_LIMIT_RPM per IP and 5x that in all, past which they get 429 instead of 401. Keys cannot be
 * guessed at full speed, and keyless traffic from any number of addresses can never make a valid
 * key wait.
 *
 * Counting is explicit rather than per route so that REST and MCP share one budget: REST tool calls
 * (/v1/*, and unknown routes, so probing is not free) count before the body is read; on /mcp only
 * `tools/call` messages count, each one like a REST call (initialize and listings are free).
 * /health, /info, /docs (with Swagger UI's assets) and /openapi.json are not counted: probes and
 * the API description must stay reachable. A request that fails authentication counts against the
 * failed-request budgets whatever its route (but the open ones, which need no key).
 *
 * Without REDIS_URL the counters live in this process (so `--workers N` gives each worker its own).
 * With it they live in Redis (the plugin's Redis store, keys under REDIS_KEY_PREFIX + "rl:"), so
 * every budget above — per client, server-wide, failed requests, MCP tools/call — is one budget
 * across all workers and replicas. When Redis cannot be reached for a count, REDIS_FAILURE_MODE
 * decides: open lets the call through uncounted (serving goes on; /health says Redis is down),
 * closed refuses it with 503 RATE_LIMIT_UNAVAILABLE. Either way the server keeps running and
 * counts in Redis again once the connection is back (src/redis/connection.ts reconnects).
 */
import { createHash } from 'node:crypto';
import fp from 'fastify-plugin';
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { toolError } from '../src/errors.ts';
import { isLoopbackHost } from '../src/loopback.ts';
import { isValidApiKey, presentedApiKey } from './auth.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** Counts `count` calls against the caller's budget; throws RATE_LIMITED (429) when over. */
    consumeRateLimit(request: FastifyRequest, reply: FastifyReply, count?: number): Promise<void>;
    /** Counts a request that failed authentication (its own budgets); throws RATE_LIMITED when over. */
    consumeFailedAuth(request: FastifyRequest, reply: FastifyReply): Promise<void>;
  }
}

const WINDOW_MS = 60_000;
export const MCP_ROUTE = '/mcp';

/** Routes whose requests count as one tool call each: /v1/* and unknown routes (no route url). */
export function isCountedRoute(routeUrl: string | undefined): boolean {
  return routeUrl === undefined || routeUrl.startsWith('/v1/');
}

type Limiter = ReturnType<FastifyInstance['createRateLimit']>;

interface Budget {
  limiter: Limiter;
  /** The 429 message: what ran out, with its size and the wait. */
  exceeded(max: number, retryInSeconds: number): string;
  /** Whether the rate-limit headers describe this budget (the caller's own, or any that ran out). */
  own: boolean;
}

/** What to do when the store (Redis) cannot count: resolve to let the call through, or throw. */
type StoreErrorPolicy = (err: unknown, reply: FastifyReply) => void;

/** Seconds a client refused for an unreachable Redis is told to wait (the reconnect backoff's cap, rounded up). */
const UNAVAILABLE_RETRY_AFTER_S = 5;

/** Counts one call against each budget in turn; the first one over answers 429. */
async function consume(request: FastifyRequest, reply: FastifyReply, budgets: readonly Budget[], onStoreError?: StoreErrorPolicy): Promise<void> {
  for (const { limiter, exceeded, own } of budgets) {
    let r: Awaited<ReturnType<Limiter>>;
    try {
      r = await limiter(request);
    } catch (err) {
      if (!onStoreError) throw err;
      // Fail open: the call is not counted against any budget (the others would fail alike).
      onStoreError(err, reply);
      return;
    }
    if (r.isAllowed) continue;
    if (own || r.isExceeded) {
      reply.header('x-ratelimit-limit', r.max);
      reply.header('x-ratelimit-remaining', r.isExceeded ? 0 : r.remaining);
      reply.header('x-ratelimit-reset', r.ttlInSeconds);
    }
    if (r.isExceeded) {
      reply.header('retry-after', r.ttlInSeconds);
      throw toolError('RATE_LIMITED', exceeded(r.max, r.ttlInSeconds));
    }
  }
}

const rateLimitPlugin: FastifyPluginAsync = async (app) => {
  const { config } = app;
  if (config.RATE_LIMIT_RPM === 0) {
    app.decorate('consumeRateLimit', async () => {});
    app.decorate('consumeFailedAuth', async () => {});
    if (!isLoopbackHost(config.HOST)) {
      app.log.warn(
        { event: 'rate_limit.off', host: config.HOST },
        `RATE_LIMIT_RPM=0: rate limiting is off while bound to ${config.HOST}; any client that reaches this address can make unlimited calls`,
      );
    }
    return;
  }
  if (config.rateLimitSource === 'loopback-default') {
    app.log.info(
      { event: 'rate_limit.loopback_default', rpm: config.RATE_LIMIT_RPM },
      `rate limit: ${config.RATE_LIMIT_RPM} calls per minute per client, the default of a loopback bind without API keys (set RATE_LIMIT_RPM to choose another)`,
    );
  }
  // global: false — no per-route hooks; the limiters below are applied by hand. With Redis, its
  // store; skipOnError stays off so that a failure reaches onStoreError (REDIS_FAILURE_MODE).
  const { redis } = app.services;
  await app.register(rateLimit, {
    global: false,
    max: config.RATE_LIMIT_RPM,
    timeWindow: WINDOW_MS,
    ...(redis ? { redis: redis.client, nameSpace: `${redis.keyPrefix}rl:`, skipOnError: false } : {}),
  });
  const onStoreError: StoreErrorPolicy | undefined = redis
    ? (err, reply) => {
        redis.noteLimiterError(err);
        if (redis.failureMode === 'open') return;
        reply.header('retry-after', UNAVAILABLE_RETRY_AFTER_S);
        throw toolError('RATE_LIMIT_UNAVAILABLE', 'Rate limits cannot be checked: Redis (REDIS_URL) is unreachable and REDIS_FAILURE_MODE=closed; retry later', err);
      }
    : undefined;
  const rpm = config.RATE_LIMIT_RPM;
  const limiter = (max: number, keyGenerator: (request: FastifyRequest) => string) => app.createRateLimit({ max, timeWindow: WINDOW_MS, keyGenerator });

  // Reached only by authenticated requests (or any request when API_KEYS is empty).
  const clientKey = (request: FastifyRequest): string => {
    // The key's name as plugins/auth.ts identified it (API_KEYS_FILE keys included); names are unique.
    const name = request.principal?.name;
    if (name !== undefined && name !== 'local' && name !== 'anonymous') return `key:${createHash('sha256').update(name).digest('hex').slice(0, 32)}`;
    const key = presentedApiKey(request);
    if (key !== undefined && isValidApiKey(config.apiKeys, key)) {
      return `key:${createHash('sha256').update(key).digest('hex').slice(0, 32)}`;
    }
    return `ip:${request.ip}`;
  };
  const callBudgets: Budget[] = [
    { limiter: limiter(rpm, clientKey), own: true, exceeded: (max, s) => `Rate limit of ${max} calls per minute exceeded; retry in ${s} s` },
    { limiter: limiter(rpm * 5, () => 'global'), own: false, exceeded: (max, s) => `Server-wide rate limit of ${max} calls per minute exceeded; retry in ${s} s` },
  ];
  const failedAuthBudgets: Budget[] = [
    {
      limiter: limiter(rpm, (request) => `unauthenticated:${request.ip}`),
      own: true,
      exceeded: (max, s) => `Too many requests without a valid API key from this address (limit ${max} per minute); retry in ${s} s`,
    },
    {
      limiter: limiter(rpm * 5, () => 'unauthenticated'),
      own: false,
      exceeded: (max, s) => `Too many requests without a valid API key (server-wide limit ${max} per minute); retry in ${s} s`,
    },
  ];

  app.decorate('consumeRateLimit', async (request: FastifyRequest, reply: FastifyReply, count = 1) => {
    for (let i = 0; i < count; i++) await consume(request, reply, callBudgets, onStoreError);
  });
  app.decorate('consumeFailedAuth', (request: FastifyRequest, reply: FastifyReply) => consume(request, reply, failedAuthBudgets, onStoreError));

  // preParsing, not onRequest: every onRequest hook (authentication among them) has run by then,
  // whatever the order plugins were registered in, and no body has been read yet.
  app.addHook('preParsing', async (request, reply) => {
    if (!isCountedRoute(request.routeOptions.url)) return;
    await app.consumeRateLimit(request, reply);
  });
};

export default fp(rateLimitPlugin, { name: 'rate-limit', fastify: '5.x', dependencies: ['services'] });
