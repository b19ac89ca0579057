/**
 * The OpenAPI 3.1 document (generated from the registered routes, hence from the tool registry)
 * at /openapi.json, and Swagger UI at /docs (loaded on its first request). scripts/export-openapi.ts
 * commits the same document as openapi/openapi.json.
 *
 * The document is built on its first request, not at start: this plugin only records the routes
 * (what @fastify/swagger's own onRoute hook records), and the first app.openApiDocument() call
 * registers @fastify/swagger on a small inner Fastify app with those routes (handlers and
 * validation left out) and asks it. Loading and evaluating @fastify/swagger with its YAML and
 * JSON Schema resolver was ~10% of the time to the first /health 200 (`npm run bench:startup`).
 *
 * `servers` is the relative URL "/": clients resolve it against the address they fetched the
 * document from, so Swagger UI's "Try it out" calls the server that serves it, whatever its host,
 * port or proxy name, and the committed document does not depend on where it was generated.
 */
import fp from 'fastify-plugin';
import Fastify, { type FastifyInstance, type FastifyPluginAsync, type RouteOptions } from 'fastify';
import type { FastifyDynamicSwaggerOptions } from '@fastify/swagger';
import { ERROR_STATUS, type ErrorCode } from '../src/errors.ts';
import { codesFromDescription, ERROR_DOCS } from '../src/error-responses.ts';
import { PACKAGE_INFO } from '../src/package-info.ts';
import { fixedCompilers } from '../src/fastify-compilers.ts';
import { ErrorBodySchema } from '../src/tools/schemas.ts';
import { demoFilesAllowed, offlineFirst } from '../src/tools/examples.ts';
import { lazyMount } from './lazy-mount.ts';

export const TAGS = [
  { name: 'documents', description: 'Process, chunk, search and query whole documents' },
  { name: 'extraction', description: 'Text and tables from one format' },
  { name: 'utility', description: 'Language detection, health and caches' },
  { name: 'knowledge_base', description: 'Persistent collections: ingestion jobs (with progress events), documents and search across them' },
  { name: 'meta', description: 'Liveness, server information and the MCP endpoint' },
];

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

const isObject = (v: unknown): v is JsonObject => v !== null && typeof v === 'object' && !Array.isArray(v);

/** JSON with sorted keys and without the top-level description: equal schemas give equal text. */
function schemaKey(schema: JsonObject): string {
  const sorted = (v: Json): Json =>
    Array.isArray(v) ? v.map(sorted) : isObject(v) ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, sorted(v[k]!)])) : v;
  const { description: _d, ...rest } = schema;
  return JSON.stringify(sorted(rest));
}

const ERROR_BODY_REF = '#/components/schemas/ErrorBody';

/** Headers some error responses carry. */
const ERROR_HEADERS: Partial<Record<ErrorCode, JsonObject>> = {
  UNAUTHORIZED: { 'WWW-Authenticate': { description: 'Bearer', schema: { type: 'string' } } },
  RATE_LIMITED: {
    'Retry-After': { description: 'Seconds until the limit resets', schema: { type: 'integer', minimum: 0 } },
    'x-ratelimit-limit': { description: 'Calls allowed per minute', schema: { type: 'integer', minimum: 0 } },
    'x-ratelimit-remaining': { description: 'Calls left in this minute', schema: { type: 'integer', minimum: 0 } },
    'x-ratelimit-reset': { description: 'Seconds until the window resets', schema: { type: 'integer', minimum: 0 } },
  },
  RATE_LIMIT_UNAVAILABLE: { 'Retry-After': { description: 'Seconds to wait before retrying', schema: { type: 'integer', minimum: 0 } } },
  INDEX_LOADING: { 'Retry-After': { description: 'Seconds to wait before retrying (the index goes on loading)', schema: { type: 'integer', minimum: 1 } } },
};

/**
 * Error bodies are declared inline per route (Fastify serializes with them, see
 * src/error-responses.ts); in the document each becomes a reference to the one ErrorBody schema,
 * and each error status of an operation a reference to the shared response of its codes (named
 * after them: "TIMEOUT", "MODEL_UNAVAILABLE_OR_SHUTTING_DOWN"), with their descriptions and an
 * example body per code.
 */
export function shareErrorResponses(doc: JsonObject): JsonObject {
  const errorBody = JSON.parse(JSON.stringify(ErrorBodySchema)) as JsonObject;
  const errorKey = schemaKey(errorBody);
  const used = new Map<string, ErrorCode[]>();
  const refSchemas = (v: Json): Json => {
    if (Array.isArray(v)) return v.map(refSchemas);
    if (!isObject(v)) return v;
    if (v.type === 'object' && schemaKey(v) === errorKey) return { $ref: ERROR_BODY_REF };
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, refSchemas(x)]));
  };
  const paths = (isObject(doc.paths) ? doc.paths : {}) as JsonObject;
  for (const item of Object.values(paths)) {
    if (!isObject(item)) continue;
    for (const op of Object.values(item)) {
      if (!isObject(op) || !isObject(op.responses)) continue;
      for (const [status, response] of Object.entries(op.responses)) {
        if (!isObject(response)) continue;
        const codes = codesFromDescription(response.description);
        const content = isObject(response.content) ? response.content['application/json'] : undefined;
        const schema = isObject(content) ? content.schema : undefined;
        if (codes && codes.every((c) => ERROR_STATUS[c] === Number(status)) && isObject(schema) && schemaKey(schema) === errorKey) {
          const name = codes.join('_OR_');
          op.responses[status] = { $ref: `#/components/responses/${name}` };
          used.set(name, codes);
        }
      }
      // Alternatives that include the error body (/mcp, /health 503) reference it too.
      op.responses = refSchemas(op.responses);
    }
  }
  const responses = Object.fromEntries(
    [...used]
      .sort(([a, x], [b, y]) => ERROR_STATUS[x[0]!] - ERROR_STATUS[y[0]!] || a.localeCompare(b))
      .map(([name, codes]) => {
        const headers = Object.assign({}, ...codes.map((c) => ERROR_HEADERS[c] ?? {})) as JsonObject;
        return [
          name,
          {
            description: codes.map((c) => ERROR_DOCS[c].description).join(' '),
            ...(Object.keys(headers).length > 0 ? { headers } : {}),
            content: {
              'application/json': {
                schema: { $ref: ERROR_BODY_REF },
                examples: Object.fromEntries(
                  codes.map((code) => [
                    code,
                    { summary: code, value: { error: ERROR_DOCS[code].example, code, request_id: '9b2f6c1e-3d4a-4f7b-8e21-5a0c7d9e4b13' } },
                  ]),
                ),
              },
            },
          },
        ];
      }),
  );
  const components = (isObject(doc.components) ? doc.components : {}) as JsonObject;
  const schemas = isObject(components.schemas) ? components.schemas : {};
  return { ...doc, components: { ...components, schemas: { ...schemas, ErrorBody: errorBody }, responses } };
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The OpenAPI document of this app's routes (built on the first call, then cached). */
    openApiDocument(): Promise<Record<string, unknown>>;
  }
}

/** Compilers that compile nothing: the inner app only describes the routes, it never serves them. */
const describeOnly = fixedCompilers(
  () => () => true,
  () => (data: unknown) => JSON.stringify(data),
);

const answerNothing = async () => null;

const swaggerPlugin: FastifyPluginAsync = async (app) => {
  const swaggerOptions: FastifyDynamicSwaggerOptions = {
    // OpenAPI 3.1 has `const`: keep the schemas exactly as declared (and as MCP lists them).
    convertConstToEnum: false,
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'RAG Document Server',
        version: PACKAGE_INFO.version,
        description:
          `${PACKAGE_INFO.description}. Every tool is also served over MCP at POST /mcp and over stdio. ` +
          'Errors have the body {error, code, request_id}; send x-request-id to choose the request id.',
      },
      servers: [{ url: '/', description: 'The server this document is served from (resolved against its address)' }],
      tags: TAGS,
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', description: 'One of API_KEYS (only when the server sets API_KEYS)' },
          apiKeyHeader: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'One of API_KEYS (only when the server sets API_KEYS)' },
        },
      },
      // Auth is optional: it applies only when the server is started with API_KEYS.
      security: [{ bearerAuth: [] as string[] }, { apiKeyHeader: [] as string[] }, {}],
    },
    transformObject: (documents) => {
      const doc = shareErrorResponses((documents as { openapiObject: unknown }).openapiObject as JsonObject);
      // A server that may fetch the demo's loopback files (npm run demo) defaults to the examples that work offline.
      return (demoFilesAllowed(app.config.allowedHosts) ? offlineFirst(doc) : doc) as never;
    },
  };
  // The routes @fastify/swagger would record (it leaves HEAD routes out of the document).
  const routes: RouteOptions[] = [];
  app.addHook('onRoute', (route) => {
    if (route.method !== 'HEAD') routes.push(route);
  });
  const buildDocumentApp = async (): Promise<FastifyInstance> => {
    const { default: swagger } = await import('@fastify/swagger');
    const inner = Fastify({ logger: false, exposeHeadRoutes: false, schemaController: { compilersFactory: describeOnly } });
    await inner.register(swagger, swaggerOptions);
    for (const r of routes) inner.route({ method: r.method, url: r.url, schema: r.schema, config: r.config, handler: answerNothing });
    await inner.ready();
    return inner;
  };
  // Built once, by the first call that asks (a failed build is tried again by the next).
  let documentApp: Promise<FastifyInstance> | undefined;
  const describe = (): Promise<FastifyInstance> =>
    (documentApp ??= buildDocumentApp().catch((err: unknown) => {
      documentApp = undefined;
      throw err;
    }));
  app.decorate('openApiDocument', async () => (await describe()).swagger() as unknown as Record<string, unknown>);
  app.addHook('onClose', async () => {
    if (documentApp) await (await documentApp.catch(() => undefined))?.close();
  });

  // Swagger UI (and @fastify/static, which serves its assets) is loaded on the first /docs request,
  // not at start (plugins/lazy-mount.ts); it reads this app's document.
  lazyMount(app, {
    urls: ['/docs', '/docs/*'],
    setup: async (inner) => {
      const [{ default: swaggerUi }, documents] = await Promise.all([import('@fastify/swagger-ui'), describe()]);
      // Swagger UI requires a plugin named @fastify/swagger: this one lends it the app's document.
      await inner.register(
        fp(async (f) => void f.decorate('swagger', ((opts?: { yaml?: boolean }) => documents.swagger(opts as never)) as typeof documents.swagger), { name: '@fastify/swagger' }),
      );
      await inner.register(swaggerUi, { routePrefix: '/docs', staticCSP: true });
    },
  });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.openApiDocument());
};

export default fp(swaggerPlugin, { name: 'swagger', fastify: '5.x' });
