/**
 * GET /health: liveness and readiness, cheap enough for a probe every few seconds. Ready means the
 * data folder takes writes (src/util/disk-health.ts: free space >= MIN_FREE_DISK_MB and a write
 * probe, reused for 5 s); 503 otherwise, with `reason` ("disk: read-only", "disk: full (N MB free,
 * need M)"). Models load in the background and never hold readiness
 * back (retrieval is lexical meanwhile); `checks.models` says whether they are loading, ready (at
 * least one embedder) or unavailable. Open without an API key and never rate limited.
 *
 * With REDIS_URL set, `checks.redis` is "ok" or "down" (a PING through the process's connection).
 * Down, `reason` says so and what the rate limiter does meanwhile; readiness then follows
 * REDIS_FAILURE_MODE: open stays 200 and ready (the server serves, limits are not enforced, so a
 * load balancer should keep sending traffic), closed is 503 and not ready (its limited routes
 * refuse every call, so traffic is better sent to a replica that reaches Redis).
 *
 * `checks.kb_storage` is the knowledge base's storage: "degraded" when its database could not be
 * opened (unreadable, corrupt, an empty file where collections existed) or its writes fail (a
 * full disk, seen by the store's last write or its heartbeat), with a `reason` naming the
 * condition, never the path. Like Redis in open mode it is a degraded component, not an
 * unready server: status "degraded", still 200 and ready (every per-document tool works; the
 * knowledge base calls answer STORAGE_UNAVAILABLE with the same reason).
 */
import type { FastifyInstance } from 'fastify';
import Type from 'typebox';
import { PACKAGE_INFO } from '../src/package-info.ts';
import { errorResponseSchemas, GUARD_ERRORS } from '../src/error-responses.ts';
import { ErrorBodySchema } from '../src/tools/schemas.ts';

const HealthSchema = Type.Object(
  {
    status: Type.Union([Type.Literal('ok'), Type.Literal('degraded'), Type.Literal('unavailable')], {
      description: 'unavailable: not ready (503); degraded: ready, but a component (the knowledge base storage) is not working (200, reason says why)',
    }),
    ready: Type.Boolean(),
    version: Type.String(),
    uptime_seconds: Type.Number(),
    reason: Type.Optional(
      Type.String({ description: 'Why not ready, or what is degraded, e.g. "disk: read-only", "disk: full (12 MB free, need 100)" or "redis: unreachable (...)"' }),
    ),
    checks: Type.Object(
      {
        data_dir_writable: Type.Boolean(),
        disk: Type.Union([Type.Literal('ok'), Type.Literal('full'), Type.Literal('read-only'), Type.Literal('permission-denied'), Type.Literal('unavailable')]),
        disk_free_mb: Type.Union([Type.Integer(), Type.Null()]),
        models: Type.Union([Type.Literal('loading'), Type.Literal('ready'), Type.Literal('unavailable')]),
        kb_storage: Type.Union([Type.Literal('ok'), Type.Literal('degraded')], {
          description: 'The knowledge base database: degraded when it cannot be opened, is corrupt or takes no writes (reason says which)',
        }),
        redis: Type.Optional(
          Type.Union([Type.Literal('ok'), Type.Literal('down')], {
            description: 'Only with REDIS_URL set. down: 503 with REDIS_FAILURE_MODE=closed, still 200 (limits not enforced) with open',
          }),
        ),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

const ReadySchema = Type.Object({
  ready: Type.Boolean(),
  loading: Type.Array(Type.Object({ collection: Type.String(), state: Type.Union([Type.Literal('opening'), Type.Literal('catching-up')]), since_ms: Type.Integer() })),
  open: Type.Array(
    Type.Object({
      collection: Type.String(),
      source: Type.String({ description: 'snapshot, snapshot+catch-up or rebuild' }),
      version: Type.Integer(),
      open_ms: Type.Integer(),
      approx_bytes: Type.Integer(),
      opened_by: Type.Union([Type.Literal('search'), Type.Literal('commit')]),
    }),
  ),
});

function modelsState(app: FastifyInstance): 'loading' | 'ready' | 'unavailable' {
  const states = app.services.models.state();
  if (states.some((m) => m.kind === 'embedder' && m.state === 'ready')) return 'ready';
  return states.some((m) => m.state === 'loading') ? 'loading' : 'unavailable';
}

export default async function healthRoutes(app: FastifyInstance): Promise<void> {
  app.get(
    '/health',
    {
      schema: {
        operationId: 'health',
        summary: 'Liveness and readiness',
        description: 'Cheap probe for orchestrators and Docker HEALTHCHECK. 200 when ready, 503 when not.',
        tags: ['meta'],
        security: [],
        // Open (no API key, no rate limit, no Host check): beyond ready / not ready, only a bug and
        // the shutdown (503 SHUTTING_DOWN, with the error body) answer.
        response: {
          200: HealthSchema,
          503: Type.Union([HealthSchema, ErrorBodySchema], {
            description: 'Not ready (the health body, ready: false), or SHUTTING_DOWN while the server stops (the error body)',
          }),
          ...errorResponseSchemas(['INTERNAL_ERROR']),
        },
      },
    },
    async (_request, reply) => {
      const { redis } = app.services;
      const [disk, redisHealth] = await Promise.all([app.services.disk.check(), redis ? redis.health() : null]);
      const writable = disk.writable;
      const redisDown = redisHealth !== null && !redisHealth.available;
      const ready = writable && !(redisDown && redisHealth.failure_mode === 'closed');
      const kb = app.services.kb.storageState?.() ?? { state: 'ok' as const };
      const kbReason = kb.state === 'degraded' ? `kb: ${kb.reason ?? 'storage unavailable'}` : undefined;
      const reasons = [disk.reason, redisDown ? redisHealth.reason : undefined, kbReason].filter(Boolean);
      reply.code(ready ? 200 : 503);
      return {
        status: !ready ? 'unavailable' : kb.state === 'degraded' ? 'degraded' : 'ok',
        ready,
        version: PACKAGE_INFO.version,
        uptime_seconds: Math.round((Date.now() - app.services.startedAt) / 100) / 10,
        ...(reasons.length > 0 ? { reason: reasons.join('; ') } : {}),
        checks: {
          data_dir_writable: writable, disk: disk.state, disk_free_mb: disk.free_mb, models: modelsState(app), kb_storage: kb.state,
          ...(redisHealth ? { redis: redisHealth.available ? 'ok' as const : 'down' as const } : {}),
        },
      };
    },
  );

  // GET /ready: which collection indexes are still loading. 503 while any is (a search of one
  // waits at most SEARCH_LOAD_WAIT_MS, then answers INDEX_LOADING), 200 otherwise. Unlike /health it
  // is behind auth and the rate limit: it names collections, which are a tenant's data.
  app.get(
    '/ready',
    {
      schema: {
        operationId: 'ready',
        summary: 'Collection indexes loaded',
        description: '200 when no collection index is loading; 503 (ready: false) while one is opening or catching up, naming it.',
        tags: ['meta'],
        response: {
          ...errorResponseSchemas(GUARD_ERRORS),
          200: ReadySchema,
          503: Type.Union([ReadySchema, ErrorBodySchema], {
            description: 'A collection index is loading (the ready body, ready: false), or SHUTTING_DOWN while the server stops (the error body)',
          }),
        },
      },
    },
    async (_request, reply) => {
      const r = app.services.kb.indexReadiness?.() ?? { loading: [], open: [] };
      reply.code(r.loading.length === 0 ? 200 : 503);
      return { ready: r.loading.length === 0, loading: r.loading, open: r.open };
    },
  );
}
