/**
 * GET /v1/whoami: the key the request is made with and what it may do, for the console (which
 * hides what the key may not do) and for people checking a key. Never the key or its hash.
 */
import type { FastifyInstance } from 'fastify';
import Type from 'typebox';
import { ACTIONS } from '../src/auth/actions.ts';
import { principalView } from '../src/auth/principal.ts';
import { errorResponseSchemas, GUARD_ERRORS } from '../src/error-responses.ts';

export const WhoamiSchema = Type.Object(
  {
    name: Type.String({ description: 'The key\'s name ("local" when auth is off: no API_KEYS nor API_KEYS_FILE)' }),
    auth: Type.Boolean({ description: 'Whether the server requires API keys' }),
    actions: Type.Array(Type.Union(ACTIONS.map((a) => Type.Literal(a))), { description: 'search, ingest, delete, admin' }),
    collections: Type.Array(Type.String(), { description: 'Collection patterns: "*", exact names, or prefixes ending in "*"' }),
    expires_at: Type.Union([Type.String(), Type.Null()], { description: 'When the key stops working (ISO 8601); null: never' }),
  },
  { additionalProperties: false },
);

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
