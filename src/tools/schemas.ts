/** Schemas shared by several tools and by the transports. */
import Type from 'typebox';
import { ERROR_STATUS } from '../errors.ts';

export const CacheLayerStatsSchema = Type.Object(
  {
    name: Type.String({ description: 'Layer name: download, document, retriever, or a disk layer' }),
    entries: Type.Integer({ minimum: 0 }),
    bytes: Type.Integer({ minimum: 0, description: 'Bytes held (0 for layers bounded by entries only)' }),
    max_entries: Type.Integer({ minimum: 0 }),
    max_bytes: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
    ttl_seconds: Type.Integer({ minimum: 0 }),
    hits: Type.Integer({ minimum: 0 }),
    misses: Type.Integer({ minimum: 0 }),
    hit_rate: Type.Number({ minimum: 0, maximum: 1 }),
    evictions: Type.Integer({ minimum: 0, description: 'Entries dropped for size or age since start' }),
  },
  { additionalProperties: false },
);

export const ErrorBodySchema = Type.Object(
  {
    error: Type.String({ description: 'What went wrong, for people' }),
    code: Type.Union(
      Object.keys(ERROR_STATUS).map((c) => Type.Literal(c)),
      { description: 'Stable error code' },
    ),
    request_id: Type.String({ description: 'The x-request-id of the call' }),
  },
  { additionalProperties: false, description: 'Error: a message, a stable code and the request id' },
);
