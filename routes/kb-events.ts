/**
 * GET /v1/jobs/:job_id/events: an ingestion job's progress as Server-Sent Events, for `curl -N` and
 * EventSource. The first event (`state`) is the whole job as it stands; then its live JobEvents
 * as `event: progress | item | job`, each with an increasing `id:`; a comment every 15 s keeps
 * proxies from closing an idle stream; the stream ends after the final `job` event. An unknown job
 * is a 404 JSON error before anything streams. The request guards (auth, Host/Origin, rate limit)
 * run first as for every route; a client that goes away is unsubscribed at once.
 *
 * Bounded: every stream has a send buffer of STREAM_BUFFER_BYTES (src/util/bounded-stream.ts);
 * while its socket is full, progress ticks replace older ones of the same item, and a reader whose
 * backlog still outgrows the buffer gets a final `event: dropped` (with the reason) and is
 * disconnected. Streams per client and in all are capped (STREAM_MAX_PER_CLIENT / _TOTAL: 429
 * RATE_LIMITED as JSON). All streams of one job share one subscription and one serialization of
 * each event (src/kb/job-event-fanout.ts), fanned out in batches at most every 200 ms.
 */
import type { FastifyInstance, FastifySchema } from 'fastify';
import Type from 'typebox';
import { errorResponseSchemas, GUARD_ERRORS } from '../src/error-responses.ts';
import type { KnowledgeBaseApi } from '../src/kb/types.ts';
import { JobEventSchema, JobId, JobSchema } from '../src/tools/kb/kb-schemas.ts';
import { requireAction, requireJobVisible } from '../src/auth/principal.ts';
import { sseFrame } from '../src/kb/job-event-fanout.ts';
import { BoundedWriter, DEFAULT_DROP_GRACE_MS } from '../src/util/bounded-stream.ts';

export const JOB_EVENTS_ROUTE = '/v1/jobs/:job_id/events';
export const HEARTBEAT_MS = 15_000;

const plain = <T>(schema: T): T => JSON.parse(JSON.stringify(schema)) as T;

function eventsDocs() {
  return {
    200: {
      description:
        'text/event-stream. First `event: state` with the job (as GET /v1/jobs/{job_id} answers it), then `event: progress` (a stage change or a progress tick), ' +
        '`event: item` (a document ended) and finally `event: job` (the job ended; the stream closes), each `data:` one JSON JobEvent and each with an `id:`. ' +
        'A comment line (": heartbeat") every 15 s.',
      content: {
        'text/event-stream': {
          schema: { type: 'string', description: 'SSE frames: "id: N", "event: state|progress|item|job", "data: <JSON>"' },
          'x-event-schemas': { state: plain(JobSchema), progress: plain(JobEventSchema), item: plain(JobEventSchema), job: plain(JobEventSchema) },
        },
      },
    },
    ...errorResponseSchemas(['VALIDATION_ERROR', 'NOT_FOUND', 'FORBIDDEN', ...GUARD_ERRORS]),
  };
}

export default async function kbEventsRoutes(app: FastifyInstance): Promise<void> {
  /** Open streams: each one's way to end it when the server stops. */
  const open = new Map<BoundedWriter, () => void>();
  const fanout = app.streams.jobEvents;
  // One timer for every stream's heartbeat (not one per connection); a busy socket skips it.
  const heartbeat = setInterval(() => {
    for (const writer of open.keys()) writer.sendIfIdle(': heartbeat\n\n');
  }, HEARTBEAT_MS);
  heartbeat.unref();
  // Streams would keep the server from closing: they end (without a final event) when it stops.
  app.addHook('preClose', async () => {
    clearInterval(heartbeat);
    for (const end of [...open.values()]) end();
  });

  app.get(
    JOB_EVENTS_ROUTE,
    {
      schema: {
        operationId: 'job_events',
        summary: 'Follow an ingestion job (Server-Sent Events)',
        description:
          'Streams the progress of an ingestion job as Server-Sent Events until it ends: its state first, then progress, item and job events. ' +
          'Use `curl -N` or an EventSource. An unknown job answers 404 NOT_FOUND as JSON.',
        tags: ['knowledge_base'],
        params: Type.Object({ job_id: JobId }, { additionalProperties: false }),
        response: errorResponseSchemas(['VALIDATION_ERROR', 'NOT_FOUND', 'FORBIDDEN', ...GUARD_ERRORS]),
      },
      config: { swaggerTransform: ({ schema, url }: { schema: FastifySchema; url: string }) => ({ url, schema: { ...schema, response: eventsDocs() } }) },
    },
    async (request, reply) => {
      const kb: KnowledgeBaseApi = app.services.kb;
      const { job_id: jobId } = request.params as { job_id: string };
      // NOT_FOUND leaves as the JSON error body: nothing has been written yet.
      // Read once for all the clients joining between two events of the job.
      const job = app.streams.jobEvents.currentJob(jobId, () => kb.getJob(jobId));
      // A job of a collection the API key may not see is as missing as an unknown one.
      requireJobVisible(request.principal, job);
      requireAction(request.principal, ['search', 'ingest'], 'follow jobs');

      // Past the caller's share of streams: 429 as JSON, before anything streams.
      const releaseSlot = app.streams.acquire(request, reply);

      reply.hijack();
      const raw = reply.raw;
      // Headers set by our hooks (request id, rate-limit counters) go out on the raw response.
      for (const [name, value] of Object.entries(reply.getHeaders())) {
        if (value !== undefined) raw.setHeader(name, value as string | number | string[]);
      }
      raw.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache, no-transform',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
      });
      let leave: (() => void) | null = null;
      let gone = false;
      // Everything a stream holds goes when it ends, however it ends (job over, dropped, client gone, server stopping).
      const release = () => {
        if (gone) return;
        gone = true;
        open.delete(writer);
        leave?.();
        leave = null;
        releaseSlot();
      };
      const writer: BoundedWriter = new BoundedWriter(raw, {
        maxBytes: app.streams.bufferBytes,
        // No id: it is not a job event, and a reconnecting client should resume from the last one it got.
        dropFrame: (reason) => `event: dropped\ndata: ${JSON.stringify({ job_id: job.id, reason })}\n\n`,
        onDrop: (reason) => {
          request.log.warn({ event: 'sse.dropped', job: job.id, reason }, 'slow SSE reader dropped');
          release();
        },
      });
      open.set(writer, () => {
        release();
        writer.release();
        if (!raw.writableEnded) raw.end();
        // A reader that never reads would keep its socket open past the server's close.
        setTimeout(() => raw.destroy(), DEFAULT_DROP_GRACE_MS).unref();
      });
      raw.once('close', () => {
        release();
        writer.release();
      });

      leave = fanout.join(
        job.id,
        {
          frames: (frames) => {
            // Progress of an item replaces its older queued tick; its final event keeps its place.
            writer.sendMany(frames.map((f) => (f.type === 'progress' ? { frame: f.frame, replaceKey: f.itemKey } : { frame: f.frame, barrierKey: f.itemKey })));
          },
          end: () => {
            release();
            writer.end();
          },
        },
        (stateId) => writer.send(sseFrame(stateId, 'state', job)),
      );
      if (gone) leave?.();
    },
  );
}
