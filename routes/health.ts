/**
 * GET /health: liveness and readiness, cheap enough for a probe every few seconds. Ready means the
 * data folder takes writes (src/util/disk-health.ts: free space >= MIN_FREE_DISK_MB and a write
 * probe, reused for 5 s); 503 otherwise, with `reason` ("disk: read-only", "disk: full (N MB free,
 * need M)"). Models load in the background and never hold readiness
 * back (retrieval is lexical meanwhile); `checks.models` says whether they are loading, ready (at
 * least one embedder) or unavailable. Open without an API key and never rate limited.
 */
import type { FastifyInstance } from 'fastify';
import Type from 'typebox';
import { PACKAGE_INFO } from '../src/package-info.ts';
import { errorResponseSchemas } from '../src/error-responses.ts';
import { ErrorBodySchema } from '../src/tools/schemas.ts';

const HealthSchema = Type.Object(
  {
    status: Type.Union([Type.Literal('ok'), Type.Literal('unavailable')]),
    ready: Type.Boolean(),
    version: Type.String(),
    uptime_seconds: Type.Number(),
    reason: Type.Optional(Type.String({ description: 'Why not ready, e.g. "disk: read-only" or "disk: full (12 MB free, need 100)"' })),
    checks: Type.Object(
      {
        data_dir_writable: Type.Boolean(),
        disk: Type.Union([Type.Literal('ok'), Type.Literal('full'), Type.Literal('read-only'), Type.Literal('permission-denied'), Type.Literal('unavailable')]),
        disk_free_mb: Type.Union([Type.Integer(), Type.Null()]),
        models: Type.Union([Type.Literal('loading'), Type.Literal('ready'), Type.Literal('unavailable')]),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

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
      const disk = await app.services.disk.check();
      const writable = disk.writable;
      reply.code(writable ? 200 : 503);
      return {
        status: writable ? 'ok' : 'unavailable',
        ready: writable,
        version: PACKAGE_INFO.version,
        uptime_seconds: Math.round((Date.now() - app.services.startedAt) / 100) / 10,
        ...(disk.reason ? { reason: disk.reason } : {}),
        checks: { data_dir_writable: writable, disk: disk.state, disk_free_mb: disk.free_mb, models: modelsState(app) },
      };
    },
  );
}
