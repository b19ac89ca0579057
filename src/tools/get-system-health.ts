/**
 * get_system_health: what this server is, what it can do here and why not, how it is protected,
 * the machine it runs on and how its caches are doing. Parts of the server add their own sections
 * through services.healthReporters (OCR, models, retrieval).
 */
import os from 'node:os';
import { configuredKeyCount } from '../auth/key-store.ts';
import Type from 'typebox';
import { defineTool, TIMEOUT_SECONDS, type TimeoutClass } from './define-tool.ts';
import { CacheLayerStatsSchema } from '../cache/ttl-cache.ts';
import { supportedFormats } from './formats.ts';
import { cacheLayerStats } from './manage-cache.ts';
import { PACKAGE_INFO } from '../package-info.ts';
import { isLoopbackHost } from '../loopback.ts';
import type { FeatureStatus, ModelStatus, Services } from '../services.ts';

const Feature = Type.Object(
  {
    available: Type.Boolean(),
    reason: Type.Optional(Type.String({ description: 'Why the capability is off or limited' })),
  },
  { additionalProperties: true },
);

const Format = Type.Object(
  {
    format: Type.String(),
    description: Type.String(),
    extensions: Type.Array(Type.String()),
    media_types: Type.Array(Type.String()),
    tools: Type.Array(Type.String()),
  },
  { additionalProperties: false },
);

const Model = Type.Object(
  { name: Type.String(), role: Type.String(), state: Type.String() },
  { additionalProperties: true },
);

const Output = Type.Object(
  {
    status: Type.Union([Type.Literal('ok'), Type.Literal('degraded')], {
      description:
        '"degraded" when a part of the server could not report its state, DATA_DIR takes no writes (features.disk says why), or the knowledge base storage cannot be opened or written (features.knowledge_base.storage_reason or reason)',
    }),
    name: Type.String(),
    version: Type.String(),
    uptime_seconds: Type.Number({ minimum: 0 }),
    features: Type.Object({}, { additionalProperties: Feature, description: 'Optional capabilities by name: available, and why not' }),
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
    models: Type.Array(Model),
    formats: Type.Array(Format, { description: 'Document formats the registered tools read' }),
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

function baseFeatures(services: Services): Record<string, FeatureStatus> {
  const { config } = services;
  return {
    auth: authOn(config) ? { available: true } : { available: false, reason: 'API_KEYS and API_KEYS_FILE are not set: every client is accepted' },
    rate_limit: { available: true, rpm: config.RATE_LIMIT_RPM },
    log_files: config.logDir
      ? { available: true, directory: config.logDir, rotation: 'daily' }
      : { available: false, reason: 'LOG_DIR is not set: logs go to stderr only' },
  };
}

const authOn = (config: { apiKeys: readonly string[]; API_KEYS_FILE: string }) => config.apiKeys.length > 0 || config.API_KEYS_FILE !== '';

export const getSystemHealthTool = defineTool({
  name: 'get_system_health',
  title: 'System health',
  description:
    'Report server status, version, uptime, which optional capabilities are available (and why not), security settings, ' +
    'model states, supported formats, the machine (CPU, memory) and cache statistics.',
  group: 'utility',
  input: Type.Object({}, { additionalProperties: false }),
  output: Output,
  timeoutClass: 'utility',
  rest: { method: 'GET', path: '/v1/system/health' },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  access: { action: 'search', what: 'read the server health' },
  async handler(_input, { services, tools, log }) {
    const { config } = services;
    let status: 'ok' | 'degraded' = 'ok';
    const features = baseFeatures(services);
    const models: ModelStatus[] = [];
    for (const reporter of services.healthReporters) {
      try {
        Object.assign(features, (await reporter.features?.()) ?? {});
        models.push(...((await reporter.models?.()) ?? []));
      } catch (err) {
        status = 'degraded';
        log.warn({ err }, 'a health reporter failed');
      }
    }
    if (features.disk?.available === false) status = 'degraded';
    const kb = features.knowledge_base;
    if (kb && (kb.available === false || kb.storage === 'degraded')) status = 'degraded';
    const timeouts = Object.fromEntries(
      (Object.keys(TIMEOUT_SECONDS) as TimeoutClass[]).map((c) => [c, Math.min(TIMEOUT_SECONDS[c], config.REQUEST_TIMEOUT)]),
    ) as Record<TimeoutClass, number>;
    const cpus = os.cpus();
    return {
      status,
      name: PACKAGE_INFO.name,
      version: PACKAGE_INFO.version,
      uptime_seconds: Math.round((Date.now() - services.startedAt) / 100) / 10,
      features,
      security: {
        auth_enabled: authOn(config),
        api_keys: configuredKeyCount(config),
        rate_limit_rpm: config.RATE_LIMIT_RPM,
        global_rate_limit_rpm: config.RATE_LIMIT_RPM * 5,
        request_timeout_seconds: config.REQUEST_TIMEOUT,
        timeouts_seconds: timeouts,
        max_upload_bytes: config.MAX_UPLOAD_BYTES,
        max_download_bytes: config.MAX_DOWNLOAD_BYTES,
        private_networks_allowed: config.ALLOW_PRIVATE_NETWORKS,
        dns_rebinding_protection: isLoopbackHost(config.HOST),
      },
      models,
      formats: supportedFormats(tools ?? []),
      device: {
        cpu_model: cpus[0]?.model.trim() || 'unknown',
        cpu_cores: os.availableParallelism(),
        total_memory_bytes: os.totalmem(),
        free_memory_bytes: os.freemem(),
        process_rss_bytes: process.memoryUsage.rss(),
        load_average: os.loadavg().map((l) => Math.round(l * 100) / 100),
        platform: process.platform,
        arch: process.arch,
        node_version: process.version,
      },
      cache: { layers: await cacheLayerStats(services) },
      timestamp: new Date().toISOString(),
    };
  },
});
