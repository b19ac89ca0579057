/**
 * The process's one Redis connection (ioredis), made only when REDIS_URL is set: createServices
 * makes this object, the services plugin awaits start() before any route is registered (a server
 * that cannot reach Redis at start does not start: RedisStartupError names REDIS_URL, password
 * hidden), and services.close() ends it. Without REDIS_URL nothing here runs and ioredis is never
 * loaded (it is imported in start()).
 *
 * The client serves the rate limiter, so it must never make a request wait on a dead Redis:
 * no offline queue (a command while disconnected fails at once), one retry per command, a command
 * timeout, and a reconnect loop with capped backoff that runs for as long as the process does.
 * What the limiter does with the failures is REDIS_FAILURE_MODE (plugins/rate-limit.ts).
 *
 * Later users that need other client settings (BullMQ wants maxRetriesPerRequest: null and an
 * offline queue) take their own connection from createClient(), which the close() here ends too.
 */
import type { Redis, RedisOptions } from 'ioredis';
import type { Logger } from 'pino';
import { redactRedisUrl, RedisStartupError } from './redis-errors.ts';
import { withTimeout } from '../util/timeout.ts';

export type RedisFailureMode = 'open' | 'closed';
/** ioredis's status, folded: up (ready), down (connecting again after a loss), or ended. */
export type RedisState = 'starting' | 'ready' | 'reconnecting' | 'closed';

export interface RedisConnectionOptions {
  url: string;
  failureMode: RedisFailureMode;
  keyPrefix: string;
  log: Logger;
  /** Milliseconds the first connection may take before start() fails (default 5000). */
  connectTimeoutMs?: number;
  /** Milliseconds one command may take before it fails (default 1000). */
  commandTimeoutMs?: number;
}

/** Reconnect delays: 100 ms doubling, at most 2 s, forever (a replica outlives a Redis restart). */
export const RECONNECT_MAX_DELAY_MS = 2_000;
export function reconnectDelay(attempt: number): number {
  return Math.min(100 * 2 ** Math.min(attempt - 1, 10), RECONNECT_MAX_DELAY_MS);
}

export interface RedisHealth {
  available: boolean;
  reason?: string;
  state: RedisState;
  url: string;
  failure_mode: RedisFailureMode;
  key_prefix: string;
  /** Round trip of a PING, when it answered. */
  latency_ms: number | null;
  /** Times the connection was lost since start. */
  disconnects: number;
  /** Limiter calls that could not reach Redis since start (let through when open, refused when closed). */
  limiter_errors: number;
}

export class RedisConnection {
  readonly url: string;
  readonly failureMode: RedisFailureMode;
  readonly keyPrefix: string;
  readonly #rawUrl: string;
  readonly #log: Logger;
  readonly #connectTimeoutMs: number;
  readonly #commandTimeoutMs: number;
  #client: Redis | null = null;
  #RedisClass: typeof Redis | null = null;
  readonly #extra = new Set<Redis>();
  #starting: Promise<void> | null = null;
  #closed = false;
  #lastError = '';
  #wasReady = false;
  #disconnects = 0;
  #limiterErrors = 0;
  #pinging: Promise<{ latencyMs: number } | { error: string }> | null = null;

  constructor(opts: RedisConnectionOptions) {
    this.#rawUrl = opts.url;
    this.url = redactRedisUrl(opts.url);
    this.failureMode = opts.failureMode;
    this.keyPrefix = opts.keyPrefix;
    this.#log = opts.log;
    this.#connectTimeoutMs = opts.connectTimeoutMs ?? 5_000;
    this.#commandTimeoutMs = opts.commandTimeoutMs ?? 1_000;
  }

  /** The rate limiter's client; only after start() resolved. */
  get client(): Redis {
    if (!this.#client) throw new Error('RedisConnection.client used before start()');
    return this.#client;
  }

  /** Connects once (later calls share the first); rejects with RedisStartupError when Redis cannot be reached. */
  start(): Promise<void> {
    this.#starting ??= this.#start();
    return this.#starting;
  }

  async #start(): Promise<void> {
    // Node gives the named export; esbuild's bundle (dist/) only `default` (module.exports, the class).
    const mod = (await import('ioredis')) as unknown as { Redis?: typeof Redis; default?: typeof Redis & { Redis?: typeof Redis } };
    const RedisClass = mod.Redis ?? mod.default?.Redis ?? mod.default;
    if (typeof RedisClass !== 'function') throw new Error('ioredis did not load: no Redis class in the module');
    this.#RedisClass = RedisClass;
    const client = new RedisClass(this.#rawUrl, {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      connectTimeout: this.#connectTimeoutMs,
      commandTimeout: this.#commandTimeoutMs,
      retryStrategy: reconnectDelay,
      connectionName: 'rag-document-server',
    });
    this.#client = client;
    client.on('error', (err: Error) => {
      const message = describeError(err);
      // One line per new kind of failure, not one per reconnect attempt.
      if (message !== this.#lastError && this.#wasReady) {
        this.#log.warn({ event: 'redis.error', url: this.url, err: message }, `Redis error: ${message}`);
      }
      this.#lastError = message;
    });
    client.on('ready', () => {
      if (this.#wasReady && this.#disconnects > 0) {
        this.#log.info({ event: 'redis.reconnected', url: this.url }, 'Redis is reachable again: rate limits are shared again');
      }
      this.#wasReady = true;
      this.#lastError = '';
    });
    client.on('close', () => {
      if (!this.#wasReady || this.#closed) return;
      this.#disconnects++;
      this.#log.error(
        { event: 'redis.down', url: this.url, failure_mode: this.failureMode },
        this.failureMode === 'open'
          ? 'Redis connection lost: reconnecting; meanwhile rate limits are not enforced (REDIS_FAILURE_MODE=open)'
          : 'Redis connection lost: reconnecting; meanwhile rate-limited routes answer 503 RATE_LIMIT_UNAVAILABLE (REDIS_FAILURE_MODE=closed)',
      );
    });
    try {
      await withTimeout(client.connect(), this.#connectTimeoutMs + 500, () => new Error(this.#lastError || 'timed out'));
    } catch (err) {
      const detail = this.#lastError || describeError(err);
      client.disconnect();
      this.#client = null;
      throw new RedisStartupError(this.#rawUrl, detail);
    }
    this.#log.info({ event: 'redis.ready', url: this.url, failure_mode: this.failureMode, key_prefix: this.keyPrefix }, 'connected to Redis');
  }

  /** Another client on the same URL (BullMQ and the like need their own); ended by close(). */
  createClient(overrides: RedisOptions = {}): Redis {
    if (!this.#RedisClass) throw new Error('RedisConnection.createClient used before start()');
    const client = new this.#RedisClass(this.#rawUrl, { retryStrategy: reconnectDelay, ...overrides });
    client.on('error', () => undefined); // reported through the main client's events and health
    this.#extra.add(client);
    client.once('end', () => this.#extra.delete(client));
    return client;
  }

  state(): RedisState {
    if (this.#closed) return 'closed';
    const status = this.#client?.status;
    if (status === 'ready') return 'ready';
    if (!this.#wasReady) return 'starting';
    return status === 'end' ? 'closed' : 'reconnecting';
  }

  /** Counted by the rate limiter when a call could not reach Redis (health shows the total). */
  noteLimiterError(err: unknown): void {
    this.#limiterErrors++;
    if (this.#limiterErrors === 1 || this.#limiterErrors % 1000 === 0) {
      this.#log.warn({ event: 'redis.limiter_error', err: describeError(err), failure_mode: this.failureMode, count: this.#limiterErrors }, 'rate limit could not be checked in Redis');
    }
  }

  /** A PING (coalesced: concurrent probes share one); its latency, or why it failed. */
  #ping(): Promise<{ latencyMs: number } | { error: string }> {
    const client = this.#client;
    if (!client || client.status !== 'ready') return Promise.resolve({ error: this.#lastError || `connection ${client?.status ?? 'not started'}` });
    this.#pinging ??= (async () => {
      const t0 = performance.now();
      try {
        await client.ping();
        return { latencyMs: Math.round((performance.now() - t0) * 100) / 100 };
      } catch (err) {
        return { error: describeError(err) };
      } finally {
        this.#pinging = null;
      }
    })();
    return this.#pinging;
  }

  /** For /health and get_system_health: whether Redis answers now, with what the limiter does if not. */
  async health(): Promise<RedisHealth> {
    const ping = await this.#ping();
    const base = {
      state: this.state(),
      url: this.url,
      failure_mode: this.failureMode,
      key_prefix: this.keyPrefix,
      disconnects: this.#disconnects,
      limiter_errors: this.#limiterErrors,
    };
    if ('latencyMs' in ping) return { available: true, ...base, latency_ms: ping.latencyMs };
    const effect = this.failureMode === 'open'
      ? 'rate limits are not enforced (REDIS_FAILURE_MODE=open)'
      : 'rate-limited routes answer 503 RATE_LIMIT_UNAVAILABLE (REDIS_FAILURE_MODE=closed)';
    return { available: false, reason: `redis: unreachable (${ping.error}); ${effect}`, ...base, latency_ms: null };
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#starting?.catch(() => undefined);
    const clients = [...this.#extra, ...(this.#client ? [this.#client] : [])];
    await Promise.all(clients.map(async (c) => {
      // QUIT when connected (pending replies first), else just stop reconnecting.
      if (c.status === 'ready') await c.quit().catch(() => c.disconnect());
      else c.disconnect();
    }));
  }
}

function describeError(err: unknown): string {
  if (err instanceof AggregateError && err.errors.length > 0) return describeError(err.errors[0]);
  const e = err as { code?: string; message?: string };
  const message = String(e?.message ?? err);
  return e?.code && !message.includes(e.code) ? `${e.code}: ${message}` : message;
}
