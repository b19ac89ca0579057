/**
 * Fixed windows counted in this process, as @fastify/rate-limit's LocalStore counts them (the same
 * count, time left and reset; each limiter forgets the least recently used of its 5,000 keys
 * first), but synchronously. Without REDIS_URL every counted call went through that plugin's
 * limiter twice (the caller's budget and the server-wide one), each an async key generator, a
 * promise around the store and an object per answer; counted here, a call's budgets cost two Map
 * lookups, and the plugin (with its IP-address parsing) is loaded only for Redis.
 */

/** What a limiter tells of one count, in @fastify/rate-limit's terms (plugins/rate-limit.ts reads these). */
export type LimitAnswer = { isAllowed: true } | { isAllowed: false; max: number; remaining: number; ttlInSeconds: number; isExceeded: boolean };

interface Window {
  current: number;
  start: number;
}

/** @fastify/rate-limit's default LocalStore size. */
export const DEFAULT_KEYS = 5000;

export class RateWindows {
  private readonly windows = new Map<string, Window>();

  constructor(
    readonly max: number,
    readonly windowMs: number,
    private readonly capacity = DEFAULT_KEYS,
  ) {}

  /** Counts one call for `key` and answers as @fastify/rate-limit's limiter would. */
  count(key: string, now = Date.now()): LimitAnswer & { isAllowed: false } {
    let w = this.windows.get(key);
    if (w === undefined) {
      w = { current: 1, start: now };
    } else {
      // Re-inserted below, so the Map's first key is always the least recently used.
      this.windows.delete(key);
      if (w.start + this.windowMs <= now) {
        w.current = 1;
        w.start = now;
      } else {
        w.current++;
      }
    }
    this.windows.set(key, w);
    if (this.windows.size > this.capacity) this.windows.delete(this.windows.keys().next().value as string);
    const ttl = this.windowMs - (now - w.start);
    return { isAllowed: false, max: this.max, remaining: Math.max(0, this.max - w.current), ttlInSeconds: Math.ceil(ttl / 1000), isExceeded: w.current > this.max };
  }

  /** Keys held (for tests). */
  get size(): number {
    return this.windows.size;
  }
}
