/**
 * The long-lived streams of this process (SSE job streams, MCP progress streams): their slots per
 * client (its API key when it presents a valid one, else its IP, as for rate limits) and in all,
 * the send-buffer cap each one gets, and the shared job subscriptions of the SSE streams.
 * `app.streams.stats()` says how many are open, which is how tests see that a dropped or closed
 * reader gave its slot back.
 */
import { createHash } from 'node:crypto';
import fp from 'fastify-plugin';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { JobEventFanout } from '../src/kb/job-event-fanout.ts';
import { StreamSlots } from '../src/util/stream-slots.ts';
import { isValidApiKey, presentedApiKey } from './auth.ts';

export interface StreamsApi {
  /** Takes a stream slot for the caller (throws RATE_LIMITED); given back when the reply's socket closes. */
  acquire(request: FastifyRequest, reply: FastifyReply): () => void;
  stats: StreamSlots['stats'];
  /** STREAM_BUFFER_BYTES: bytes that may wait for one reader before it is dropped. */
  bufferBytes: number;
  /** The job subscriptions behind the SSE job streams: one per followed job, shared by its readers. */
  jobEvents: JobEventFanout;
}

declare module 'fastify' {
  interface FastifyInstance {
    streams: StreamsApi;
  }
}

/** Seconds a client refused a stream slot is told to wait (Retry-After): streams end, they do not refill by time. */
const RETRY_AFTER_S = 5;

const streamsPlugin: FastifyPluginAsync = async (app) => {
  const config = app.config;
  const slots = new StreamSlots({ perClient: config.STREAM_MAX_PER_CLIENT, total: config.STREAM_MAX_TOTAL });
  const clientOf = (request: FastifyRequest): string => {
    const key = presentedApiKey(request);
    if (key !== undefined && isValidApiKey(config.apiKeys, key)) return `key:${createHash('sha256').update(key).digest('hex').slice(0, 32)}`;
    return `ip:${request.ip}`;
  };
  app.decorate('streams', {
    acquire(request: FastifyRequest, reply: FastifyReply) {
      let release: () => void;
      try {
        release = slots.acquire(clientOf(request));
      } catch (err) {
        reply.header('retry-after', RETRY_AFTER_S);
        throw err;
      }
      // 'close' comes however the connection ends: finished, dropped, reset by the client.
      reply.raw.once('close', release);
      return release;
    },
    stats: () => slots.stats(),
    bufferBytes: config.STREAM_BUFFER_BYTES,
    jobEvents: new JobEventFanout(() => app.services.kb),
  } satisfies StreamsApi);
};

export default fp(streamsPlugin, { name: 'streams' });
