/**
 * MCP over Streamable HTTP at POST /mcp: stateless (a fresh transport and server per request)
 * with JSON responses (an SSE response for a call that sent a progressToken, so its progress
 * notifications reach the client), so any worker can answer any request. GET and DELETE answer 405: there are
 * no sessions and no server-initiated streams. Auth and the Host/Origin guard apply as for REST;
 * each tools/call message counts against the caller's rate limit like a REST call.
 */
import type { FastifyInstance, FastifySchema } from 'fastify';
import type { Logger } from 'pino';
import { MCP_ROUTE } from '../plugins/rate-limit.ts';
import { mcpResponseDocs } from '../src/error-responses.ts';

/**
 * The MCP SDK (and its zod and ajv) takes most of a second to load, so it is loaded after the server
 * has started answering (plugins/warm-up.ts) or by the first /mcp call, whichever comes first.
 */
function mcpLoader() {
  let loading: ReturnType<typeof load> | undefined;
  async function load() {
    const [{ StreamableHTTPServerTransport }, { connectMcp, createMcpServer, createMcpValidator }] = await Promise.all([
      import('@modelcontextprotocol/sdk/server/streamableHttp.js'),
      import('../src/mcp/server.ts'),
    ]);
    return { StreamableHTTPServerTransport, connectMcp, createMcpServer, validator: createMcpValidator() };
  }
  return () => (loading ??= load());
}

/**
 * A tools/call that asked for progress (params._meta.progressToken): its answer is an SSE stream,
 * so the notifications/progress can travel before the result (JSON responses cannot carry them).
 */
function wantsProgress(body: unknown): boolean {
  const messages = Array.isArray(body) ? body : [body];
  return messages.some((m) => {
    const meta = (m as { params?: { _meta?: { progressToken?: unknown } } } | null)?.params?._meta;
    return meta !== null && typeof meta === 'object' && meta.progressToken !== undefined;
  });
}

function countToolCalls(body: unknown): number {
  const messages = Array.isArray(body) ? body : [body];
  return messages.filter((m) => m !== null && typeof m === 'object' && (m as { method?: unknown }).method === 'tools/call').length;
}

export default async function mcpRoutes(app: FastifyInstance): Promise<void> {
  const loadMcp = mcpLoader();
  app.afterStart('mcp', loadMcp);
  app.post(
    MCP_ROUTE,
    {
      schema: {
        operationId: 'mcp',
        summary: 'MCP (Streamable HTTP, stateless, JSON responses)',
        description:
          'JSON-RPC messages of the Model Context Protocol: initialize, tools/list, tools/call, resources/list, resources/read. ' +
          'Send "Accept: application/json, text/event-stream". Every tool of the REST API is available as an MCP tool with the same schemas.',
        tags: ['meta'],
      },
      // Documented only: the reply is hijacked, so these schemas never serialize anything.
      config: { swaggerTransform: ({ schema, url }: { schema: FastifySchema; url: string }) => ({ url, schema: { ...schema, response: mcpResponseDocs() } }) },
    },
    async (request, reply) => {
      const calls = countToolCalls(request.body);
      if (calls > 0) await app.consumeRateLimit(request, reply, calls);
      // An SSE answer (progress asked for) is a stream like the job events: it takes a slot (429 before anything is written).
      const streamed = wantsProgress(request.body);
      if (streamed) app.streams.acquire(request, reply);
      const raw = reply.raw;
      const cap = app.streams.bufferBytes;

      const log = request.log as unknown as Logger;
      const { StreamableHTTPServerTransport, connectMcp, createMcpServer, validator } = await loadMcp();
      const server = createMcpServer({
        tools: app.tools,
        services: app.services,
        log,
        requestId: request.id,
        transport: 'mcp',
        validator,
        shutdownSignal: app.shutdownSignal,
        // A client that does not read its SSE answer gets fewer progress reports, not a growing queue.
        progressGate: {
          busy: () => raw.writableNeedDrain || raw.writableLength > cap,
          whenFree: (fn) => {
            const free = () => {
              raw.off('drain', free);
              raw.off('close', free);
              fn();
            };
            raw.on('drain', free);
            raw.once('close', free);
          },
        },
        // The key's scopes (plugins/auth.ts): tools/list, tools/call and the resources follow them.
        principal: request.principal,
      });
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: !streamed });
      reply.hijack();
      // Headers set by our hooks (request id, rate-limit counters) go out on the raw response.
      for (const [name, value] of Object.entries(reply.getHeaders())) {
        if (value !== undefined) reply.raw.setHeader(name, value as string | number | string[]);
      }
      reply.raw.once('close', () => {
        void transport.close();
        void server.close();
      });
      try {
        await connectMcp(server, transport);
        await transport.handleRequest(request.raw, reply.raw, request.body);
      } catch (err) {
        log.error({ err }, 'MCP request failed');
        if (!reply.raw.headersSent) {
          reply.raw.writeHead(500, { 'content-type': 'application/json' });
          reply.raw.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal server error' }, id: null }));
        }
      }
    },
  );

  // No sessions, no server-initiated streams: only POST is meaningful.
  for (const method of ['GET', 'DELETE'] as const) {
    app.route({
      method,
      url: MCP_ROUTE,
      schema: { hide: true },
      handler: async (request, reply) => {
        reply.code(405).header('allow', 'POST');
        return {
          jsonrpc: '2.0',
          error: { code: -32000, message: `Method not allowed: ${method} ${MCP_ROUTE} (this server is stateless; use POST)` },
          id: null,
          request_id: request.id,
        };
      },
    });
  }
}
