/**
 * A bounded TTL + LRU cache layer with the statistics manage_cache reports. Bounded by entry count
 * and, when sizeOf is given, by total bytes. Backed by lru-cache.
 */
import { LRUCache } from 'lru-cache';
import type { CacheLayerStats } from '../contract/health-schemas.ts';

export interface CacheLayerOptions<V> {
  name: string;
  maxEntries: number;
  ttlMs: number;
  maxBytes?: number;
  sizeOf?: (value: V) => number;
  /** Called when an entry leaves the cache (eviction, expiry, clear) — e.g. to close an index. */
  onDispose?: (value: V, key: string) => void;
}

// One layer's statistics: the wire contract's (the console reads them); re-exported for the caches.
export { CacheLayerStatsSchema, type CacheLayerStats } from '../contract/health-schemas.ts';

// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- lru-cache's own bound on values (any non-nullish value)
export class TtlCache<V extends {}> {
  readonly name: string;
  private readonly lru: LRUCache<string, V>;
  private readonly opts: CacheLayerOptions<V>;
  private hits = 0;
  private misses = 0;
  private evictions = 0;

  constructor(opts: CacheLayerOptions<V>) {
    this.name = opts.name;
    this.opts = opts;
    this.lru = new LRUCache<string, V>({
      max: opts.maxEntries,
      ttl: opts.ttlMs,
      ...(opts.maxBytes && opts.sizeOf
        ? { maxSize: opts.maxBytes, sizeCalculation: (v: V) => Math.max(1, opts.sizeOf!(v)) }
        : {}),
      dispose: (value, key, reason) => {
        if (reason === 'evict' || reason === 'expire') this.evictions++;
        opts.onDispose?.(value, key);
      },
    });
  }

  get(key: string): V | undefined {
    const v = this.lru.get(key);
    if (v === undefined) this.misses++;
    else this.hits++;
    return v;
  }

  /** Like get, without touching statistics or recency. */
  peek(key: string): V | undefined {
    return this.lru.peek(key);
  }

  set(key: string, value: V): void {
    this.lru.set(key, value);
  }

  has(key: string): boolean {
    return this.lru.has(key);
  }

  delete(key: string): boolean {
    return this.lru.delete(key);
  }

  /** Empties the layer and returns how many entries were evicted. */
  clear(): number {
    const n = this.lru.size;
    this.lru.clear();
    return n;
  }

  stats(): CacheLayerStats {
    const total = this.hits + this.misses;
    return {
      name: this.name,
      entries: this.lru.size,
      bytes: this.opts.sizeOf ? this.lru.calculatedSize ?? 0 : 0,
      max_entries: this.opts.maxEntries,
      max_bytes: this.opts.maxBytes ?? null,
      ttl_seconds: Math.round(this.opts.ttlMs / 1000),
      hits: this.hits,
      misses: this.misses,
      hit_rate: total === 0 ? 0 : Math.round((this.hits / total) * 10_000) / 10_000,
      evictions: this.evictions,
    };
  }
}
