/**
 * GET /health: liveness and readiness, cheap enough for a probe every few seconds. Ready means the
 * data folder is writable; 503 otherwise. Models load in the background and never hold readiness
 * back (retrieval is lexical meanwhile); `checks.models` says whether they are loading, ready (at
 * least one embedder) or unavailable. Open without an API key and never rate limited.
 */
import { access, constants } from 'node:fs/promises';
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
    checks: Type.Object(
      {
        data_dir_writable: Type.Boolean(),
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
      const writable = await access(app.config.dataDir, constants.W_OK).then(
        () => true,
        () => false,
      );
      reply.code(writable ? 200 : 503);
      return {
        status: writable ? 'ok' : 'unavailable',
        ready: writable,
        version: PACKAGE_INFO.version,
        uptime_seconds: Math.round((Date.now() - app.services.startedAt) / 100) / 10,
        checks: { data_dir_writable: writable, models: modelsState(app) },
      };
    },
  );
}
