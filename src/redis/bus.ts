/**
 * Notices between processes over Redis pub/sub: job progress relayed from the worker that runs a
 * document to whichever API replica holds the SSE stream or MCP call, cancellation sent from an
 * API to the workers, and collection version changes that tell replicas to catch their indexes up.
 *
 * One subscriber connection per process (a subscribed ioredis client can do nothing else); it
 * resubscribes by itself after a reconnect. Publishing goes through the main client and never
 * waits or throws: a notice lost while Redis is down is covered by each user's fallback (jobs are
 * polled from SQLite, collections compare versions on read), so pub/sub only makes things prompt.
 * Channels are `${REDIS_KEY_PREFIX}bus:${topic}`, so deployments sharing one Redis stay apart.
 */
import type { Redis } from 'ioredis';
import type { RedisConnection } from './connection.ts';

export type BusTopic = 'kb:job' | 'kb:cancel' | 'kb:collection';
export type BusHandler = (message: Record<string, unknown>) => void;

/** What the knowledge base needs of a bus; LocalBus serves a single process (and tests). */
export interface Bus {
  publish(topic: BusTopic, message: Record<string, unknown>): void;
  /** Handler for every message on the topic, from any process including this one; returns an unsubscribe. */
  on(topic: BusTopic, handler: BusHandler): () => void;
  close(): Promise<void>;
}

/** Largest message relayed; a bigger one is dropped (its receiver falls back to polling). */
export const BUS_MAX_MESSAGE_BYTES = 256 * 1024;

export class RedisBus implements Bus {
  readonly #conn: RedisConnection;
  readonly #handlers = new Map<BusTopic, Set<BusHandler>>();
  #sub: Redis | null = null;
  #subscribing: Promise<void> | null = null;
  #closed = false;
  #dropped = 0;

  constructor(conn: RedisConnection) {
    this.#conn = conn;
  }

  #channel(topic: BusTopic): string {
    return `${this.#conn.keyPrefix}bus:${topic}`;
  }

  /** Subscribes the topics; resolves once Redis confirmed them (so a notice sent after it is seen). */
  async start(topics: readonly BusTopic[]): Promise<void> {
    if (!this.#sub) {
      // Its own client: subscribed connections can run no other command. Offline queue on, so the
      // SUBSCRIBE issued before the connection is up (or again after a reconnect) is sent then.
      const sub = this.#conn.createClient({ connectionName: 'rag-document-server:bus', maxRetriesPerRequest: null });
      this.#sub = sub;
      sub.on('message', (channel: string, raw: string) => this.#dispatch(channel, raw));
    }
    const prev = this.#subscribing ?? Promise.resolve();
    this.#subscribing = prev.then(async () => {
      await this.#sub!.subscribe(...topics.map((t) => this.#channel(t)));
    });
    await this.#subscribing;
  }

  publish(topic: BusTopic, message: Record<string, unknown>): void {
    if (this.#closed) return;
    const raw = JSON.stringify(message);
    if (Buffer.byteLength(raw) > BUS_MAX_MESSAGE_BYTES) {
      this.#dropped++;
      return;
    }
    let client: Redis;
    try {
      client = this.#conn.client;
    } catch {
      return;
    }
    if (client.status !== 'ready') return;
    client.publish(this.#channel(topic), raw).catch(() => {
      this.#dropped++;
    });
  }

  on(topic: BusTopic, handler: BusHandler): () => void {
    let set = this.#handlers.get(topic);
    if (!set) this.#handlers.set(topic, (set = new Set()));
    set.add(handler);
    return () => void set.delete(handler);
  }

  stats(): { subscribed: boolean; dropped: number } {
    return { subscribed: this.#sub?.status === 'ready', dropped: this.#dropped };
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#handlers.clear();
    const sub = this.#sub;
    this.#sub = null;
    if (sub) {
      if (sub.status === 'ready') await sub.quit().catch(() => sub.disconnect());
      else sub.disconnect();
    }
  }

  #dispatch(channel: string, raw: string): void {
    const prefix = `${this.#conn.keyPrefix}bus:`;
    if (!channel.startsWith(prefix)) return;
    const handlers = this.#handlers.get(channel.slice(prefix.length) as BusTopic);
    if (!handlers || handlers.size === 0) return;
    let message: unknown;
    try {
      message = JSON.parse(raw);
    } catch {
      return;
    }
    if (typeof message !== 'object' || message === null || Array.isArray(message)) return;
    for (const h of handlers) {
      try {
        h(message as Record<string, unknown>);
      } catch {
        // one handler's failure is its own
      }
    }
  }
}

/** The same contract within one process: delivered on the next turn, like a message from Redis. */
export class LocalBus implements Bus {
  readonly #handlers = new Map<BusTopic, Set<BusHandler>>();

  publish(topic: BusTopic, message: Record<string, unknown>): void {
    const copy = JSON.parse(JSON.stringify(message)) as Record<string, unknown>;
    setImmediate(() => {
      for (const h of this.#handlers.get(topic) ?? []) {
        try {
          h(copy);
        } catch {
          // one handler's failure is its own
        }
      }
    });
  }

  on(topic: BusTopic, handler: BusHandler): () => void {
    let set = this.#handlers.get(topic);
    if (!set) this.#handlers.set(topic, (set = new Set()));
    set.add(handler);
    return () => void set.delete(handler);
  }

  async close(): Promise<void> {
    this.#handlers.clear();
  }
}
