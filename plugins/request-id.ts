/**
 * Request ids: a well-formed incoming x-request-id is kept (so a caller can follow its call through
 * our logs), anything else is replaced by a fresh UUID. The id is echoed in the response header,
 * bound to every log line of the request and put in every error body.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import fp from 'fastify-plugin';
import type { FastifyPluginAsync } from 'fastify';

export const REQUEST_ID_HEADER = 'x-request-id';
const WELL_FORMED = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

export function isWellFormedRequestId(value: unknown): value is string {
  return typeof value === 'string' && WELL_FORMED.test(value);
}

/** Fastify's genReqId: runs before any hook, so even the first log line carries the id. */
export function genRequestId(req: IncomingMessage): string {
  const incoming = req.headers[REQUEST_ID_HEADER];
  return isWellFormedRequestId(incoming) ? incoming : randomUUID();
}

const requestIdPlugin: FastifyPluginAsync = async (app) => {
  // A callback hook, like the other per-request hooks with nothing to wait for: no promise per call.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header(REQUEST_ID_HEADER, request.id);
    done();
  });
};

export default fp(requestIdPlugin, { name: 'request-id', fastify: '5.x' });
