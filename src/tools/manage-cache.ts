/** manage_cache: statistics of every cache layer, or clear them all. */
import Type from 'typebox';
import { defineTool } from './define-tool.ts';
// The answer's schema is the contract's: the console's Overview reads the same type.
import { CacheReportSchema, type CacheLayerStats } from '../contract/health-schemas.ts';
import type { Services } from '../services.ts';
import { CONFIRM_HINT, ConfirmField } from './confirm-field.ts';

const Input = Type.Object(
  {
    action: Type.Optional(
      Type.Union([Type.Literal('stats'), Type.Literal('clear')], {
        default: 'stats',
        description: '"stats" reports every layer; "clear" empties every layer and reports how many entries each lost',
      }),
    ),
    confirm: ConfirmField,
  },
  { additionalProperties: false },
);

/** Statistics of the memory layers followed by any disk layers. */
export async function cacheLayerStats(services: Services): Promise<CacheLayerStats[]> {
  const disk = await Promise.all(services.diskCaches.filter((d) => d.stats).map((d) => d.stats!()));
  return [...services.caches.stats(), ...disk];
}

export const manageCacheTool = defineTool({
  name: 'manage_cache',
  title: 'Manage caches',
  description:
    'Report or clear the server caches (downloaded files, processed documents, search indexes). ' +
    '"stats" returns entries, bytes, hits, misses, hit rate and evictions per layer; "clear" empties every layer and returns how many entries each held. ' +
    'With REDIS_URL the shared download tier (download_shared) is cleared for every process. ' +
    `"clear" needs the admin action. ${CONFIRM_HINT}`,
  group: 'utility',
  input: Input,
  output: CacheReportSchema,
  timeoutClass: 'utility',
  rest: { method: 'POST', path: '/v1/cache' },
  // "clear" empties every cache layer; calling it again changes nothing more.
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  // Statistics are a read; clearing every cache is the server's business, not one collection's.
  access: { action: 'search', actionFor: (input) => (input.action === 'clear' ? 'admin' : 'search'), what: 'manage caches' },
  destructiveCall: (input) => input.action === 'clear',
  examples: [
    { name: 'stats', summary: 'Statistics of every cache layer', value: { action: 'stats' } },
    { name: 'clear', summary: 'Empty every cache layer (downloads, documents, indexes)', value: { action: 'clear' } },
  ],
  async handler(input, { services }) {
    const action = input.action ?? 'stats';
    let evicted: Record<string, number> | undefined;
    if (action === 'clear') {
      evicted = services.caches.clear();
      for (const disk of services.diskCaches) evicted[disk.name] = await disk.clear();
    }
    const layers = await cacheLayerStats(services);
    const totals = {
      entries: layers.reduce((n, l) => n + l.entries, 0),
      bytes: layers.reduce((n, l) => n + l.bytes, 0),
    };
    if (!evicted) return { action, layers, totals };
    const total_evicted = Object.values(evicted).reduce((n, v) => n + v, 0);
    return { action, layers, totals, evicted, total_evicted };
  },
});
