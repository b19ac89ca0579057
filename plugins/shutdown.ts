/**
 * Shutdown answers. While the app closes (src/server.ts calls app.close() on SIGTERM/SIGINT), a
 * request that still arrives on an open connection gets 503 SHUTTING_DOWN. When SHUTDOWN_TIMEOUT
 * runs out, cutInFlight() stops the calls still running with the same coded 503: every tool call
 * follows `shutdownSignal` (REST and MCP), and a request whose response has not started by then
 * (its body still arriving, say) is answered directly. Only then are the connections closed.
 */
import fp from 'fastify-plugin';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { ERROR_STATUS, toolError } from '../src/errors.ts';
import type { ErrorBody } from './error-handler.ts';
import { REQUEST_ID_HEADER } from './request-id.ts';
import { ChurnList } from '../src/util/churn-list.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** Aborted, with a SHUTTING_DOWN ToolError as its reason, when cutInFlight() runs. */
    shutdownSignal: AbortSignal;
    /**
     * Answers every request still in flight with 503 SHUTTING_DOWN (where its response has not
     * started) and resolves once they are written, or after graceMs per step at most.
     */
    cutInFlight(graceMs?: number): Promise<void>;
  }
}

const CUT_MESSAGE = 'The server is shutting down: the call was stopped before it finished; retry it';
const CLOSING_MESSAGE = 'The server is shutting down; retry the call';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const shutdownPlugin: FastifyPluginAsync = async (app) => {
  const controller = new AbortController();
  // Not a Set: see src/util/churn-list.ts (a Set here kept every request's reply alive past its end).
  const inFlight = new ChurnList<FastifyReply>();
  let closing = false;

  app.decorate('shutdownSignal', controller.signal);
  app.addHook('preClose', async () => {
    closing = true;
  });
  // Callback hooks: nothing to wait for, so no promise per call.
  app.addHook('onRequest', (_request, reply, done) => {
    if (closing) {
      reply.header('connection', 'close');
      return done(toolError('SHUTTING_DOWN', CLOSING_MESSAGE));
    }
    // 'close' covers finished, hijacked (MCP) and abandoned responses alike.
    reply.raw.once('close', inFlight.add(reply));
    done();
  });

  const settle = async (graceMs: number) => {
    const until = Date.now() + graceMs;
    while (inFlight.size > 0 && Date.now() < until) await sleep(20);
  };

  app.decorate('cutInFlight', async (graceMs = 1000) => {
    if (!controller.signal.aborted) controller.abort(toolError('SHUTTING_DOWN', CUT_MESSAGE));
    // Tool calls answer the abort at once (run-tool rejects with the reason).
    await settle(graceMs);
    inFlight.forEach((reply) => {
      const raw = reply.raw;
      if (raw.headersSent || raw.writableEnded) return;
      const body: ErrorBody = { error: CUT_MESSAGE, code: 'SHUTTING_DOWN', request_id: reply.request.id };
      raw.writeHead(ERROR_STATUS.SHUTTING_DOWN, {
        'content-type': 'application/json; charset=utf-8',
        connection: 'close',
        [REQUEST_ID_HEADER]: reply.request.id,
      });
      raw.end(JSON.stringify(body));
      reply.request.log.warn({ code: 'SHUTTING_DOWN' }, 'request cut at shutdown');
    });
    await settle(graceMs);
  });
};

export default fp(shutdownPlugin, { name: 'shutdown', fastify: '5.x' });
