/**
 * buildApp: the Fastify application with every plugin and route, ready to listen or to inject.
 * Order matters: services first (everything reads config/services/tools), then the hooks that
 * guard each request in the order they run (request id -> shutdown -> host guard -> auth, all
 * onRequest; then the rate limit, in preParsing, so budgets are counted only for authenticated
 * requests), the error handler, the JSON body parser, the OpenAPI generator (which must see every
 * route), then the routes and the web console's static files (plugins/console.ts).
 */
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifySchemaCompiler, type FastifySerializerCompiler } from 'fastify';
import pino, { type Logger } from 'pino';
import type { TSchema } from 'typebox';
import { loadConfig, type Config } from './config.ts';
import type { Services } from './services.ts';
import type { AnyTool } from './tools/define-tool.ts';
import { tools as registry } from './tools/index.ts';
import { checkInput } from './tools/validate-input.ts';
import { MAX_JSON_BODY_BYTES } from './json-limits.ts';
import { lazyRequestLogger } from './request-logger.ts';
import { fixedCompilers } from './fastify-compilers.ts';
import servicesPlugin from '../plugins/services.ts';
import requestIdPlugin, { genRequestId } from '../plugins/request-id.ts';
import shutdownPlugin from '../plugins/shutdown.ts';
import hostGuardPlugin from '../plugins/host-guard.ts';
import rateLimitPlugin from '../plugins/rate-limit.ts';
import authPlugin from '../plugins/auth.ts';
import streamsPlugin from '../plugins/streams.ts';
import errorHandlerPlugin, { sendError } from '../plugins/error-handler.ts';
import jsonBodyPlugin from '../plugins/json-body.ts';
import swaggerPlugin from '../plugins/swagger.ts';
import healthRoutes from '../routes/health.ts';
import infoRoutes from '../routes/info.ts';
import toolRoutes from '../routes/tools.ts';
import mcpRoutes from '../routes/mcp.ts';
import kbEventsRoutes from '../routes/kb-events.ts';
import whoamiRoutes from '../routes/whoami.ts';
import consolePlugin from '../plugins/console.ts';
import warmUpPlugin from '../plugins/warm-up.ts';

export interface BuildAppOptions {
  /** Defaults to loadConfig() from the environment. */
  config?: Readonly<Config>;
  /** Replaces the production registry (src/tools/index.ts). */
  tools?: readonly AnyTool[];
  /** Added after the registry's tools (tests add test-only tools this way). */
  extraTools?: readonly AnyTool[];
  /** Use these services instead of creating them; the caller then closes them. */
  services?: Services;
  /** The pino logger; by default a silent one. src/server.ts passes the configured logger. */
  logger?: Logger;
}

/** REST validation uses the same rules as MCP (src/tools/validate-input.ts). */
const validatorCompiler: FastifySchemaCompiler<TSchema> = ({ schema, httpPart }) => {
  const convert = httpPart === 'querystring' || httpPart === 'params' || httpPart === 'headers';
  return (data: unknown) => {
    const r = checkInput(schema, data, { convert });
    return r.ok ? { value: r.value } : { error: [r.issue] };
  };
};

const serializerCompiler: FastifySerializerCompiler<TSchema> = () => (data) => JSON.stringify(data);


export async function buildApp(opts: BuildAppOptions = {}): Promise<FastifyInstance> {
  const config = opts.config ?? loadConfig();
  const tools = [...(opts.tools ?? registry), ...(opts.extraTools ?? [])];
  const names = new Set<string>();
  const routes = new Set<string>();
  for (const t of tools) {
    if (names.has(t.name)) throw new Error(`Duplicate tool name: ${t.name}`);
    const route = `${t.rest.method} ${t.rest.path}`;
    if (routes.has(route)) throw new Error(`Duplicate tool route: ${route}`);
    // MCP hints and the documented error statuses come from the declaration (src/tools/define-tool.ts).
    if (!t.annotations) throw new Error(`Tool ${t.name} declares no annotations`);
    names.add(t.name);
    routes.add(route);
  }

  const app = Fastify({
    loggerInstance: (opts.logger ?? pino({ level: 'silent' })) as FastifyBaseLogger,
    genReqId: genRequestId,
    // Each request's logger is made when a line is first written through it (src/request-logger.ts).
    childLoggerFactory: lazyRequestLogger,
    // Every log line of a request carries request_id; health probes are not worth a line each.
    logController: new LogController({ requestIdLogLabel: 'request_id', disableRequestLogging: (req) => req.url === '/health' }),
    // JSON bodies (src/json-limits.ts). Uploads have their own limit.
    bodyLimit: MAX_JSON_BODY_BYTES,
    // Our compilers from the start, as factories: Fastify then never builds its default ones (Ajv
    // and fast-json-stringify with their meta-schemas, ~10 ms of every start). Responses are plain
    // JSON.stringify: the output schemas document the answers (OpenAPI, MCP outputSchema), but
    // compiling a fast-json-stringify serializer for each cost most of a second at every start,
    // and handlers already return exactly the documented shape.
    schemaController: { compilersFactory: fixedCompilers(validatorCompiler, serializerCompiler) },
    trustProxy: config.TRUST_PROXY,
    forceCloseConnections: 'idle',
    // plugins/shutdown.ts answers requests that arrive while closing, with the coded error body.
    return503OnClosing: false,
    // URLs the router cannot read never reach the error handler; they get the coded body too.
    frameworkErrors: (err, request, reply) => {
      const path = JSON.stringify(request.raw.url?.split('?')[0].slice(0, 200) ?? '');
      // sendError sends the reply; the reply object it returns is thenable, and nothing awaits it here.
      if (err.code === 'FST_ERR_BAD_URL') return void sendError(request, reply, 'VALIDATION_ERROR', `URL path ${path} is not valid (malformed percent-encoding)`);
      if (err.code === 'FST_ERR_MAX_PARAM_LENGTH') return void sendError(request, reply, 'VALIDATION_ERROR', `URL path ${path} has a segment longer than 100 characters`);
      request.log.error({ err }, 'request failed');
      void sendError(request, reply, 'INTERNAL_ERROR', 'Internal server error');
    },
  });

  await app.register(servicesPlugin, { config, tools, services: opts.services });
  await app.register(requestIdPlugin);
  await app.register(shutdownPlugin);
  await app.register(hostGuardPlugin);
  await app.register(rateLimitPlugin);
  await app.register(streamsPlugin);
  await app.register(authPlugin);
  await app.register(errorHandlerPlugin);
  await app.register(jsonBodyPlugin);
  await app.register(swaggerPlugin);
  await app.register(warmUpPlugin);

  await app.register(healthRoutes);
  await app.register(infoRoutes);
  await app.register(toolRoutes);
  await app.register(kbEventsRoutes);
  await app.register(whoamiRoutes);
  await app.register(mcpRoutes);
  await app.register(consolePlugin);
  return app;
}
