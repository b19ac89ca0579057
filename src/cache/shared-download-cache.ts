/**
 * The second tier of the download cache, in Redis (REDIS_URL set, REDIS_CACHE_MAX_BYTES > 0): a
 * document one replica or worker downloaded is served to the others without asking the origin
 * again. Keyed by normalised URL (-> content sha256 and the response metadata extraction needs)
 * and by content hash (-> the bytes, one copy per content). Bounded by Redis itself: every write
 * runs a script that sweeps expired entries and evicts the least recently used ones until the new
 * entry fits under REDIS_CACHE_MAX_BYTES (src/cache/shared-download-scripts.ts); files over
 * REDIS_CACHE_MAX_ENTRY_BYTES are not stored. TTL: CACHE_TTL_SECONDS, as the memory tier.
 *
 * A cache must never cost a request more than it saves: Redis failing, slow or unreachable is a
 * miss (the caller downloads), never an error. Reads wait at most getTimeoutMs (1 s); after a
 * failure Redis is skipped for backoffMs (5 s); writes run in the background, the caller does not
 * wait, within a byte budget (beyond it they are skipped). Its own connection (createClient), so
 * multi-megabyte values never queue in front of the rate limiter's commands.
 *
 * Not shared: responses marked Cache-Control no-store or private (a shared cache must not keep
 * them, RFC 9111 section 3), and nothing is shared between deployments whose address rules differ
 * (ALLOW_PRIVATE_NETWORKS, ALLOWED_HOSTS): the URL key carries a fingerprint of them, so a URL
 * only one deployment may fetch is never served to another from the cache.
 */
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { DownloadedFile } from './cache-registry.ts';
import type { CacheLayerStats } from './ttl-cache.ts';
import type { RedisConnection } from '../redis/connection.ts';
import { BOOKKEEPING, CLEAR_SCRIPT, FORGET_SCRIPT, GET_SCRIPT, PUT_SCRIPT, STATS_SCRIPT } from './shared-download-scripts.ts';

export const SHARED_DOWNLOAD_LAYER = 'download_shared';
/** Bytes charged per entry on top of its value: the key names, sorted-set and hash members Redis keeps for it. */
export const ENTRY_OVERHEAD_BYTES = 256;

export interface SharedDownloadCacheOptions {
  redis: RedisConnection;
  ttlMs: number;
  /** REDIS_CACHE_MAX_BYTES: bytes held in Redis by all processes together. */
  maxBytes: number;
  /** REDIS_CACHE_MAX_ENTRY_BYTES: larger files are not stored. */
  maxEntryBytes: number;
  /** MAX_DOWNLOAD_BYTES: a cached file larger than this deployment would download is not served. */
  maxDownloadBytes: number;
  /** What decides which URLs may be fetched (address rules); part of every URL key. */
  policy: { allowPrivateNetworks: boolean; allowedHosts: readonly string[] };
  log: Logger;
  /** Longest wait for a read before it counts as a miss (default 1000 ms, as the rate limiter's command timeout). */
  getTimeoutMs?: number;
  /** Longest a background write may take (default 5000 ms). */
  putTimeoutMs?: number;
  /** After a failure, Redis is not asked for this long (default 5000 ms). */
  backoffMs?: number;
  /** Bytes of writes in flight at once; more are skipped (default 4 x maxEntryBytes). */
  maxPendingPutBytes?: number;
}

/** What get_system_health shows of this tier (this process's view; no Redis call). */
export interface SharedDownloadCacheHealth {
  available: boolean;
  reason?: string;
  max_bytes: number;
  max_entry_bytes: number;
  ttl_seconds: number;
  hits: number;
  misses: number;
  stored: number;
  /** Files not stored because they are larger than max_entry_bytes. */
  skipped_too_large: number;
  /** Responses not stored because of Cache-Control no-store or private. */
  skipped_not_shareable: number;
  /** Writes skipped because earlier ones were still in flight (the byte budget). */
  skipped_busy: number;
  /** Reads or writes that failed or timed out (each one a miss or a skipped write). */
  errors: number;
  /** Bytes whose hash did not match their key (dropped, downloaded again). */
  corrupt: number;
}

interface Meta {
  sha256: string;
  size: number;
  contentType?: string;
  contentDisposition?: string;
  filename?: string;
  finalUrl?: string;
}

const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');
const scriptShas = new Map<string, string>();
const sha1 = (s: string) => {
  let h = scriptShas.get(s);
  if (!h) scriptShas.set(s, (h = createHash('sha1').update(s).digest('hex')));
  return h;
};

class Timeout extends Error {}

/** Whether a response's Cache-Control lets a shared cache keep it. */
export function shareable(cacheControl: string | undefined): boolean {
  if (!cacheControl) return true;
  return !/(?:^|[,\s])(?:no-store|private)(?:\s*=|\s*(?:,|$))/i.test(cacheControl);
}

export class SharedDownloadCache {
  readonly name = SHARED_DOWNLOAD_LAYER;
  readonly #redis: RedisConnection;
  readonly #opts: Required<Omit<SharedDownloadCacheOptions, 'redis' | 'log' | 'policy'>>;
  readonly #log: Logger;
  readonly #keys: { bookkeeping: string[]; url: string; blob: string };
  #client: Redis | null = null;
  #everReady = false;
  #skipUntil = 0;
  #pendingPutBytes = 0;
  readonly #pending = new Set<Promise<unknown>>();
  #closed = false;
  #lastReason = '';
  /** The last figures Redis gave, shown while it does not answer. */
  #last = { bytes: 0, urls: 0, evictions: 0 };
  #counts = { hits: 0, misses: 0, stored: 0, skipped_too_large: 0, skipped_not_shareable: 0, skipped_busy: 0, errors: 0, corrupt: 0 };

  constructor(opts: SharedDownloadCacheOptions) {
    this.#redis = opts.redis;
    this.#log = opts.log;
    this.#opts = {
      ttlMs: opts.ttlMs,
      maxBytes: opts.maxBytes,
      maxEntryBytes: opts.maxEntryBytes,
      maxDownloadBytes: opts.maxDownloadBytes,
      getTimeoutMs: opts.getTimeoutMs ?? 1_000,
      putTimeoutMs: opts.putTimeoutMs ?? 5_000,
      backoffMs: opts.backoffMs ?? 5_000,
      maxPendingPutBytes: opts.maxPendingPutBytes ?? 4 * opts.maxEntryBytes,
    };
    const p = `${opts.redis.keyPrefix}dl:`;
    const policy = sha256(JSON.stringify([opts.policy.allowPrivateNetworks, [...opts.policy.allowedHosts].sort()])).slice(0, 12);
    this.#keys = { bookkeeping: BOOKKEEPING.map((k) => `${p}${k}`), url: `${p}u:${policy}:`, blob: `${p}b:` };
  }

  /** The file cached for this (normalised) URL, or undefined: a miss, whatever went wrong. */
  async get(url: string): Promise<DownloadedFile | undefined> {
    const reply = await this.#guard('get', this.#opts.getTimeoutMs, (c) =>
      this.#eval(c, GET_SCRIPT, [this.#urlKey(url)], [String(Date.now())], true),
    );
    if (!Array.isArray(reply) || !Buffer.isBuffer(reply[0]) || !Buffer.isBuffer(reply[1])) {
      this.#counts.misses++;
      return undefined;
    }
    const bytes = reply[1];
    let meta: Meta;
    try {
      meta = JSON.parse(reply[0].toString('utf8')) as Meta;
    } catch {
      meta = { sha256: '', size: -1 };
    }
    if (bytes.length > this.#opts.maxDownloadBytes) {
      this.#counts.misses++;
      return undefined;
    }
    // Whoever can write to Redis could put anything there: the bytes must be the content named.
    if (meta.size !== bytes.length || sha256(bytes) !== meta.sha256) {
      this.#counts.corrupt++;
      this.#counts.misses++;
      this.#log.warn({ event: 'download_cache.corrupt', sha256: meta.sha256 }, 'shared download cache entry does not match its hash: dropped');
      const blobKey = `${this.#keys.blob}${/^[0-9a-f]{64}$/.test(meta.sha256) ? meta.sha256 : '-'}`;
      void this.#guard('forget', this.#opts.putTimeoutMs, (c) => this.#eval(c, FORGET_SCRIPT, [this.#urlKey(url), blobKey]));
      return undefined;
    }
    this.#counts.hits++;
    return {
      bytes,
      sha256: meta.sha256,
      ...(meta.contentType ? { contentType: meta.contentType } : {}),
      ...(meta.contentDisposition ? { contentDisposition: meta.contentDisposition } : {}),
      ...(meta.filename ? { filename: meta.filename } : {}),
      ...(meta.finalUrl ? { finalUrl: meta.finalUrl } : {}),
    };
  }

  /**
   * Stores a file just downloaded, in the background: the caller does not wait. Resolves to
   * whether it was stored (tests and benchmarks wait on it; it never rejects).
   */
  put(url: string, file: DownloadedFile): Promise<boolean> {
    if (this.#closed) return Promise.resolve(false);
    if (!shareable(file.cacheControl)) {
      this.#counts.skipped_not_shareable++;
      return Promise.resolve(false);
    }
    const size = file.bytes.length;
    if (size > this.#opts.maxEntryBytes || size + 2 * ENTRY_OVERHEAD_BYTES > this.#opts.maxBytes) {
      this.#counts.skipped_too_large++;
      return Promise.resolve(false);
    }
    if (this.#pendingPutBytes + size > this.#opts.maxPendingPutBytes) {
      this.#counts.skipped_busy++;
      return Promise.resolve(false);
    }
    const meta: Meta = {
      sha256: file.sha256,
      size,
      ...(file.contentType ? { contentType: file.contentType } : {}),
      ...(file.contentDisposition ? { contentDisposition: file.contentDisposition } : {}),
      ...(file.filename ? { filename: file.filename } : {}),
      ...(file.finalUrl ? { finalUrl: file.finalUrl } : {}),
    };
    this.#pendingPutBytes += size;
    const args = [String(Date.now()), String(this.#opts.ttlMs), String(this.#opts.maxBytes), String(ENTRY_OVERHEAD_BYTES), JSON.stringify(meta)];
    const run = this.#guard('put', this.#opts.putTimeoutMs, (c) =>
      this.#eval(c, PUT_SCRIPT, [this.#urlKey(url), `${this.#keys.blob}${file.sha256}`], [...args, file.bytes]),
    )
      .then((reply) => {
        const stored = Array.isArray(reply) && reply[0] === 1;
        if (stored) this.#counts.stored++;
        return stored;
      })
      .finally(() => {
        this.#pendingPutBytes -= size;
        this.#pending.delete(run);
      });
    this.#pending.add(run);
    return run;
  }

  /** manage_cache statistics: entries and bytes as Redis holds them for all processes; hits and misses of this process. */
  async stats(): Promise<CacheLayerStats> {
    const reply = await this.#guard('stats', this.#opts.getTimeoutMs, (c) => this.#eval(c, STATS_SCRIPT, [], [String(Date.now())]));
    if (Array.isArray(reply)) this.#last = { bytes: Number(reply[0]) || 0, urls: Number(reply[1]) || 0, evictions: Number(reply[2]) || 0 };
    const { hits, misses } = this.#counts;
    const total = hits + misses;
    return {
      name: this.name,
      entries: Math.max(0, this.#last.urls),
      bytes: Math.max(0, this.#last.bytes),
      // Each entry is charged at least the overhead, so this many fit at most.
      max_entries: Math.floor(this.#opts.maxBytes / ENTRY_OVERHEAD_BYTES),
      max_bytes: this.#opts.maxBytes,
      ttl_seconds: Math.round(this.#opts.ttlMs / 1000),
      hits,
      misses,
      hit_rate: total === 0 ? 0 : Math.round((hits / total) * 10_000) / 10_000,
      evictions: Math.max(0, this.#last.evictions),
    };
  }

  /** Empties the tier for every process; resolves to the URL entries removed (0 when Redis does not answer). */
  async clear(): Promise<number> {
    let removed = 0;
    for (let round = 0; round < 10_000; round++) {
      const reply = await this.#guard('clear', this.#opts.putTimeoutMs, (c) => this.#eval(c, CLEAR_SCRIPT, [], ['500']));
      if (!Array.isArray(reply)) break;
      removed += Number(reply[0]) || 0;
      if (Number(reply[1]) === 0) {
        this.#last = { ...this.#last, bytes: 0, urls: 0 };
        break;
      }
    }
    return removed;
  }

  health(): SharedDownloadCacheHealth {
    // Not used yet counts as available: the connection is made on the first lookup.
    const down = this.#client !== null && (this.#client.status !== 'ready' || this.#lastReason !== '');
    return {
      available: !down,
      ...(down ? { reason: `download_shared: Redis unreachable (${this.#lastReason || this.#client?.status}); downloads use the memory tier and the origin` } : {}),
      max_bytes: this.#opts.maxBytes,
      max_entry_bytes: this.#opts.maxEntryBytes,
      ttl_seconds: Math.round(this.#opts.ttlMs / 1000),
      ...this.#counts,
    };
  }

  /** Waits (bounded) for background writes, then stops using Redis; the connection is RedisConnection's to end. */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.allSettled([...this.#pending]);
  }

  #urlKey(url: string): string {
    return `${this.#keys.url}${sha256(url)}`;
  }

  /** Runs a script (EVALSHA, EVAL once Redis lacks it) with the bookkeeping keys first. */
  #eval(client: Redis, script: string, keys: string[], args: (string | Buffer)[] = [], buffers = false): Promise<unknown> {
    const allKeys = [...this.#keys.bookkeeping, ...keys];
    const rest = [allKeys.length, ...allKeys, ...args];
    const call = (cmd: 'EVALSHA' | 'EVAL', first: string) =>
      buffers ? client.callBuffer(cmd, first, ...rest) : client.call(cmd, first, ...rest);
    return call('EVALSHA', sha1(script)).catch((err: Error) => {
      if (!/NOSCRIPT/.test(String(err?.message))) throw err;
      return call('EVAL', script);
    });
  }

  /** Runs one Redis operation within ms; undefined when Redis is skipped, fails or is late. */
  async #guard<T>(what: string, ms: number, op: (c: Redis) => Promise<T>): Promise<T | undefined> {
    if (this.#closed && what !== 'put' && what !== 'forget') return undefined;
    if (Date.now() < this.#skipUntil) return undefined;
    let timer: NodeJS.Timeout | undefined;
    try {
      const client = await this.#connected(ms);
      const result = await Promise.race([
        op(client),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Timeout(`no answer within ${ms} ms`)), ms);
          timer.unref?.();
        }),
      ]);
      this.#lastReason = '';
      return result;
    } catch (err) {
      this.#counts.errors++;
      const reason = String((err as Error)?.message ?? err);
      if (reason !== this.#lastReason) {
        this.#log.warn({ event: 'download_cache.unavailable', op: what, err: reason, retry_in_ms: this.#opts.backoffMs }, 'shared download cache not reachable: downloading instead');
      }
      this.#lastReason = reason;
      this.#skipUntil = Date.now() + this.#opts.backoffMs;
      return undefined;
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * The cache's own client, made on first use (the connection has started by then: the services
   * plugin awaits it before any route). Until it first connects a use waits (bounded) for it;
   * once it has been up, a use while it is down fails at once (no offline queue) and it
   * reconnects on its own.
   */
  async #connected(ms: number): Promise<Redis> {
    if (!this.#client) {
      const client = this.#redis.createClient({
        enableOfflineQueue: false,
        maxRetriesPerRequest: 1,
        connectionName: 'rag-document-server:download-cache',
        commandTimeout: this.#opts.putTimeoutMs,
      });
      client.on('ready', () => (this.#everReady = true));
      this.#client = client;
    }
    const client = this.#client;
    if (client.status === 'ready') return client;
    if (this.#everReady || (client.status !== 'connecting' && client.status !== 'connect' && client.status !== 'wait')) {
      throw new Error(`connection ${client.status}`);
    }
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        client.off('ready', onReady);
        reject(new Timeout(`not connected within ${ms} ms`));
      }, ms);
      timer.unref?.();
      const onReady = () => {
        clearTimeout(timer);
        resolve();
      };
      client.once('ready', onReady);
    });
    return client;
  }
}
