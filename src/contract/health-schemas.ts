/**
 * What get_system_health (GET /v1/system/health) and manage_cache (POST /v1/cache) answer: the
 * tools publish these schemas, the console's Overview, Search and Evaluate pages read the same
 * types. No Node imports: the console imports this file (types only).
 */
import Type, { type Static } from 'typebox';

/** One cache layer's statistics as manage_cache and get_system_health report them. */
export const CacheLayerStatsSchema = Type.Object(
  {
    name: Type.String({ description: 'Layer name: download, document, retriever, a disk layer (indexes), or download_shared (the Redis tier with REDIS_URL: entries and bytes of all processes)' }),
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
export type CacheLayerStats = Static<typeof CacheLayerStatsSchema>;

export const FeatureSchema = Type.Object(
  {
    available: Type.Boolean(),
    reason: Type.Optional(Type.String({ description: 'Why the capability is off or limited' })),
  },
  { additionalProperties: true },
);
/** A capability and why it is off, with details of its own (rpm, directory, storage...). */
export type FeatureStatus = Static<typeof FeatureSchema> & { [detail: string]: unknown };

export const FormatSchema = Type.Object(
  {
    format: Type.String(),
    description: Type.String(),
    extensions: Type.Array(Type.String()),
    media_types: Type.Array(Type.String()),
    tools: Type.Array(Type.String()),
  },
  { additionalProperties: false },
);

export const ModelSchema = Type.Object(
  {
    name: Type.String(),
    role: Type.String(),
    state: Type.String(),
    id: Type.Optional(Type.String({ description: 'The model id collections record as their embedder (the same as name for the models the server loads)' })),
    kind: Type.Optional(Type.String({ description: 'embedder or reranker' })),
    reason: Type.Optional(Type.String({ description: 'Why it is not ready' })),
  },
  { additionalProperties: true },
);
/** A model with details of its own (path, dimension, load time). */
export type ModelStatus = Static<typeof ModelSchema> & { [detail: string]: unknown };

export const SystemHealthSchema = Type.Object(
  {
    status: Type.Union([Type.Literal('ok'), Type.Literal('degraded')], {
      description:
        '"degraded" when a part of the server could not report its state, DATA_DIR takes no writes (features.disk says why), or the knowledge base storage cannot be opened or written (features.knowledge_base.storage_reason or reason)',
    }),
    name: Type.String(),
    version: Type.String(),
    uptime_seconds: Type.Number({ minimum: 0 }),
    // Unsafe only for the static type (a record of features; Type.Object({}) reads as an empty object type).
    features: Type.Unsafe<Record<string, FeatureStatus>>(
      Type.Object({}, { additionalProperties: FeatureSchema, description: 'Optional capabilities by name: available, and why not' }),
    ),
    security: Type.Object(
      {
        auth_enabled: Type.Boolean(),
        api_keys: Type.Integer({ minimum: 0, description: 'How many API keys are accepted' }),
        rate_limit_rpm: Type.Integer({ description: 'Calls per minute per client (API key, else IP)' }),
        global_rate_limit_rpm: Type.Integer({ description: 'Calls per minute for all clients together' }),
        request_timeout_seconds: Type.Number({ description: 'REQUEST_TIMEOUT: caps every timeout class' }),
        timeouts_seconds: Type.Object(
          { document: Type.Number(), extraction: Type.Number(), utility: Type.Number() },
          { additionalProperties: false, description: 'Effective timeout per tool class' },
        ),
        max_upload_bytes: Type.Integer(),
        max_download_bytes: Type.Integer(),
        private_networks_allowed: Type.Boolean({ description: 'Whether URLs may point at private addresses' }),
        dns_rebinding_protection: Type.Boolean({ description: 'Host/Origin checks, on when bound to loopback' }),
      },
      { additionalProperties: false },
    ),
    models: Type.Array(Type.Unsafe<ModelStatus>(ModelSchema)),
    formats: Type.Array(FormatSchema, { description: 'Document formats the registered tools read' }),
    device: Type.Object(
      {
        cpu_model: Type.String(),
        cpu_cores: Type.Integer(),
        total_memory_bytes: Type.Integer(),
        free_memory_bytes: Type.Integer(),
        process_rss_bytes: Type.Integer(),
        load_average: Type.Array(Type.Number()),
        platform: Type.String(),
        arch: Type.String(),
        node_version: Type.String(),
      },
      { additionalProperties: false },
    ),
    cache: Type.Object({ layers: Type.Array(CacheLayerStatsSchema) }, { additionalProperties: false }),
    timestamp: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: false },
);
export type SystemHealth = Static<typeof SystemHealthSchema>;

/** manage_cache's answer. */
export const CacheReportSchema = Type.Object(
  {
    action: Type.Union([Type.Literal('stats'), Type.Literal('clear')]),
    layers: Type.Array(CacheLayerStatsSchema, { description: 'Statistics per layer (after clearing, for "clear")' }),
    totals: Type.Object({ entries: Type.Integer({ minimum: 0 }), bytes: Type.Integer({ minimum: 0 }) }, { additionalProperties: false }),
    evicted: Type.Optional(
      Type.Unsafe<Record<string, number>>(
        Type.Object({}, { additionalProperties: Type.Integer({ minimum: 0 }), description: 'Entries removed per layer ("clear" only)' }),
      ),
    ),
    total_evicted: Type.Optional(Type.Integer({ minimum: 0 })),
  },
  { additionalProperties: false },
);
export type CacheReport = Static<typeof CacheReportSchema>;
