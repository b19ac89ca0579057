/**
 * The service container every tool handler reaches through ctx.services. Stateful resources (OCR
 * workers, ONNX sessions, indexes, caches) live here and are closed by close(), called from the
 * app's onClose hook — never in module globals.
 */
import type { Config } from './config.ts';
import { CacheRegistry } from './cache/cache-registry.ts';

export interface Services {
  config: Readonly<Config>;
  caches: CacheRegistry;
  startedAt: number;
  close(): Promise<void>;
}

export function createServices(config: Readonly<Config>): Services {
  const caches = new CacheRegistry({ ttlMs: config.CACHE_TTL_SECONDS * 1000 });
  return {
    config,
    caches,
    startedAt: Date.now(),
    async close() {
      caches.clear();
    },
  };
}
