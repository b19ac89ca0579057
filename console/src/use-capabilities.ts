// What the server can serve, for the pages that pre-select retrieval options: GET
// /v1/system/health once, again every few seconds while a model is still loading (so a variant
// becomes selectable when its model is ready). null until it answers, or when it is refused.
import { useEffect } from 'preact/hooks';
import { get } from './api.ts';
import type { HealthCapabilities } from './search/capabilities.ts';
import { useAsync } from './use-async.ts';

const RELOAD_WHILE_LOADING_MS = 3_000;

export function useCapabilities(): HealthCapabilities | null {
  const health = useAsync((signal) => get<HealthCapabilities>('/v1/system/health', { signal }), []);
  const loading = health.data?.models.some((m) => m.state === 'loading') ?? false;
  useEffect(() => {
    if (!loading) return;
    const timer = setTimeout(health.reload, RELOAD_WHILE_LOADING_MS);
    return () => clearTimeout(timer);
  }, [loading, health.data, health.reload]);
  return health.data;
}
