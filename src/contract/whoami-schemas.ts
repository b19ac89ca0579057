/**
 * GET /v1/whoami's answer: the key a request is made with and what it may do. The route publishes
 * this schema; the console reads the same type to hide what the key may not do. No Node imports.
 */
import Type, { type Static } from 'typebox';
import { ACTIONS, type Action } from './actions.ts';

export const WhoamiSchema = Type.Object(
  {
    name: Type.String({ description: 'The key\'s name ("local" when auth is off: no API_KEYS nor API_KEYS_FILE)' }),
    auth: Type.Boolean({ description: 'Whether the server requires API keys' }),
    // Unsafe only for the static type (a union built from ACTIONS reads as never); the schema is the union's.
    actions: Type.Array(Type.Unsafe<Action>(Type.Union(ACTIONS.map((a) => Type.Literal(a)))), { description: 'search, ingest, delete, admin' }),
    collections: Type.Array(Type.String(), { description: 'Collection patterns: "*", exact names, or prefixes ending in "*"' }),
    expires_at: Type.Union([Type.String(), Type.Null()], { description: 'When the key stops working (ISO 8601); null: never' }),
  },
  { additionalProperties: false },
);

export type Whoami = Static<typeof WhoamiSchema>;
