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
 * Without REDIS_URL the counters live in this process (plugins/rate-windows.ts, counted as
 * @fastify/rate-limit's local store counts, synchronously; `--workers N` gives each worker its own).
 * With it they live in Redis (@fastify/rate-limit's Redis store, keys under REDIS_KEY_PREFIX + "rl:"), so
 * every budget above — per client, server-wide, failed requests, MCP tools/call — is one budget
 * across all workers and replicas. When Redis cannot be reached for a count, REDIS_FAILURE_MODE
 * decides: open lets the call through uncounted (serving goes on; /health says Redis is down),
 * closed refuses it with 503 RATE_LIMIT_UNAVAILABLE. Either way the server keeps running and
 * counts in Redis again once the connection is back (src/redis/connection.ts reconnects).
 */
import { createHash } from 'node:crypto';
import fp from 'fastify-plugin';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { toolError } from '../src/errors.ts';
import { isLoopbackHost } from '../src/loopback.ts';
import { isValidApiKey, presentedApiKey } from './auth.ts';
import { RateWindows, type LimitAnswer } from './rate-windows.ts';

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

interface Budget {
  /** Counts one call: synchronously in this process, through a promise with Redis. */
  limiter: (request: FastifyRequest) => LimitAnswer | Promise<LimitAnswer>;
  /** The 429 message: what ran out, with its size and the wait. */
  exceeded(max: number, retryInSeconds: number): string;
  /** Whether the rate-limit headers describe this budget (the caller's own, or any that ran out). */
  own: boolean;
}

/** What to do when the store (Redis) cannot count: resolve to let the call through, or throw. */
type StoreErrorPolicy = (err: unknown, reply: FastifyReply) => void;

/** Seconds a client refused for an unreachable Redis is told to wait (the reconnect backoff's cap, rounded up). */
const UNAVAILABLE_RETRY_AFTER_S = 5;

/** One budget's answer: the headers, and RATE_LIMITED (429) when it ran out. */
function settle(r: LimitAnswer, budget: Budget, reply: FastifyReply): void {
  if (r.isAllowed) return;
  if (budget.own || r.isExceeded) {
    reply.header('x-ratelimit-limit', r.max);
    reply.header('x-ratelimit-remaining', r.isExceeded ? 0 : r.remaining);
    reply.header('x-ratelimit-reset', r.ttlInSeconds);
  }
  if (r.isExceeded) {
    reply.header('retry-after', r.ttlInSeconds);
    throw toolError('RATE_LIMITED', budget.exceeded(r.max, r.ttlInSeconds));
  }
}

/** Counts one call against each budget in turn (counted in this process); the first one over throws the 429. */
function consumeLocal(request: FastifyRequest, reply: FastifyReply, budgets: readonly Budget[]): void {
  for (const budget of budgets) settle(budget.limiter(request) as LimitAnswer, budget, reply);
}

/** The same with Redis: each count is a round trip, and a failed one goes to the store-error policy. */
async function consumeRedis(request: FastifyRequest, reply: FastifyReply, budgets: readonly Budget[], onStoreError: StoreErrorPolicy): Promise<void> {
  for (const budget of budgets) {
    let r: LimitAnswer;
    try {
      r = await budget.limiter(request);
    } catch (err) {
      // Fail open: the call is not counted against any budget (the others would fail alike).
      onStoreError(err, reply);
      return;
    }
    settle(r, budget, reply);
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
  const { redis } = app.services;
  const rpm = config.RATE_LIMIT_RPM;
  let limiter = (max: number, keyGenerator: (request: FastifyRequest) => string): Budget['limiter'] => {
    const windows = new RateWindows(max, WINDOW_MS);
    return (request) => windows.count(keyGenerator(request));
  };
  let consume = (request: FastifyRequest, reply: FastifyReply, budgets: readonly Budget[]): void | Promise<void> => consumeLocal(request, reply, budgets);
  if (redis) {
    // @fastify/rate-limit's Redis store. global: false: no per-route hooks, the limiters below are
    // applied by hand; skipOnError stays off so that a failure reaches onStoreError (REDIS_FAILURE_MODE).
    const { default: rateLimit } = await import('@fastify/rate-limit');
    await app.register(rateLimit, { global: false, max: rpm, timeWindow: WINDOW_MS, redis: redis.client, nameSpace: `${redis.keyPrefix}rl:`, skipOnError: false });
    const onStoreError: StoreErrorPolicy = (err, reply) => {
      redis.noteLimiterError(err);
      if (redis.failureMode === 'open') return;
      reply.header('retry-after', UNAVAILABLE_RETRY_AFTER_S);
      throw toolError('RATE_LIMIT_UNAVAILABLE', 'Rate limits cannot be checked: Redis (REDIS_URL) is unreachable and REDIS_FAILURE_MODE=closed; retry later', err);
    };
    limiter = (max, keyGenerator) => app.createRateLimit({ max, timeWindow: WINDOW_MS, keyGenerator });
    consume = (request, reply, budgets) => consumeRedis(request, reply, budgets, onStoreError);
  }

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
    for (let i = 0; i < count; i++) await consume(request, reply, callBudgets);
  });
  app.decorate('consumeFailedAuth', async (request: FastifyRequest, reply: FastifyReply) => consume(request, reply, failedAuthBudgets));

  // preParsing, not onRequest: every onRequest hook (authentication among them) has run by then,
  // whatever the order plugins were registered in, and no body has been read yet. A callback hook:
  // counted in this process, a call's count needs no promise.
  app.addHook('preParsing', (request, reply, payload, done) => {
    if (!isCountedRoute(request.routeOptions.url)) return done(null, payload);
    let pending: void | Promise<void>;
    try {
      pending = consume(request, reply, callBudgets);
    } catch (err) {
      return done(err as Error);
    }
    if (pending) pending.then(() => done(null, payload), (err: Error) => done(err));
    else done(null, payload);
  });
};

export default fp(rateLimitPlugin, { name: 'rate-limit', fastify: '5.x', dependencies: ['services'] });
