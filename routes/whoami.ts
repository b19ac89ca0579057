/**
 * GET /v1/whoami: the key the request is made with and what it may do, for the console (which
 * hides what the key may not do) and for people checking a key. Never the key or its hash.
 */
import type { FastifyInstance } from 'fastify';
// The answer's schema is the contract's: the console reads the same type.
import { WhoamiSchema } from '../src/contract/whoami-schemas.ts';
import { principalView } from '../src/auth/principal.ts';
import { errorResponseSchemas, GUARD_ERRORS } from '../src/error-responses.ts';

export default async function whoamiRoutes(app: FastifyInstance): Promise<void> {
  app.get(
    '/v1/whoami',
    {
      schema: {
        operationId: 'whoami',
        summary: 'The API key in use and its scopes',
        description: 'The name, actions and collection patterns of the key this request carries (never the key itself).',
        tags: ['meta'],
        response: { 200: WhoamiSchema, ...errorResponseSchemas(GUARD_ERRORS) },
      },
    },
    async (request) => principalView(request.principal, app.keyStore.enabled),
  );
}
