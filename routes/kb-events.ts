/**
 * GET /v1/jobs/:job_id/events: an ingestion job's progress as Server-Sent Events, for `curl -N` and
 * EventSource. The first event (`state`) is the whole job as it stands; then its live JobEvents
 * as `event: progress | item | job`, each with an increasing `id:`; a comment every 15 s keeps
 * proxies from closing an idle stream; the stream ends after the final `job` event. An unknown job
 * is a 404 JSON error before anything streams. The request guards (auth, Host/Origin, rate limit)
 * run first as for every route; a client that goes away is unsubscribed at once.
 */
import type { FastifyInstance, FastifySchema } from 'fastify';
import Type from 'typebox';
import { errorResponseSchemas, GUARD_ERRORS } from '../src/error-responses.ts';
import type { KnowledgeBaseApi } from '../src/kb/types.ts';
import { JobEventSchema, JobId, JobSchema } from '../src/tools/kb/kb-schemas.ts';

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
    ...errorResponseSchemas(['VALIDATION_ERROR', 'NOT_FOUND', ...GUARD_ERRORS]),
  };
}

export default async function kbEventsRoutes(app: FastifyInstance): Promise<void> {
  const open = new Set<() => void>();
  // Streams would keep the server from closing: they end (without a final event) when it stops.
  app.addHook('preClose', async () => {
    for (const end of [...open]) end();
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
        response: errorResponseSchemas(['VALIDATION_ERROR', 'NOT_FOUND', ...GUARD_ERRORS]),
      },
      config: { swaggerTransform: ({ schema, url }: { schema: FastifySchema; url: string }) => ({ url, schema: { ...schema, response: eventsDocs() } }) },
    },
    async (request, reply) => {
      const kb: KnowledgeBaseApi = app.services.kb;
      const { job_id: jobId } = request.params as { job_id: string };
      // NOT_FOUND leaves as the JSON error body: nothing has been written yet.
      const job = kb.getJob(jobId);

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
      let id = 0;
      let ended = false;
      let unsubscribe: (() => void) | null = null;
      const send = (event: string, data: unknown) => {
        if (!ended) raw.write(`id: ${++id}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
      };
      const heartbeat = setInterval(() => {
        if (!ended) raw.write(': heartbeat\n\n');
      }, HEARTBEAT_MS);
      heartbeat.unref();
      const end = () => {
        if (ended) return;
        ended = true;
        clearInterval(heartbeat);
        open.delete(end);
        unsubscribe?.();
        if (!raw.writableEnded) raw.end();
      };
      open.add(end);
      raw.once('close', end);

      send('state', job);
      const off = kb.subscribe(job.id, (e) => {
        send(e.type, e);
        if (e.type === 'job') end();
      });
      // An ended job's final event may come during subscribe itself.
      if (ended) off();
      else unsubscribe = off;
    },
  );
}
