/**
 * get_system_health: what this server is, what it can do here and why not, how it is protected,
 * the machine it runs on and how its caches are doing. Parts of the server add their own sections
 * through services.healthReporters (OCR, models, retrieval).
 */
import os from 'node:os';
import { configuredKeyCount } from '../auth/key-store.ts';
import Type from 'typebox';
import { defineTool, TIMEOUT_SECONDS, type TimeoutClass } from './define-tool.ts';
// The answer's schema is the contract's: the console's pages read the same type.
import { SystemHealthSchema } from '../contract/health-schemas.ts';
import { supportedFormats } from './formats.ts';
import { cacheLayerStats } from './manage-cache.ts';
import { PACKAGE_INFO } from '../package-info.ts';
import { isLoopbackHost } from '../loopback.ts';
import type { FeatureStatus, ModelStatus, Services } from '../services.ts';

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
  output: SystemHealthSchema,
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
