/**
 * The OpenAPI 3.1 document (generated from the registered routes, hence from the tool registry)
 * at /openapi.json, and Swagger UI at /docs. scripts/export-openapi.ts commits the same document
 * as openapi/openapi.json.
 */
import fp from 'fastify-plugin';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyPluginAsync } from 'fastify';
import { PACKAGE_INFO } from '../src/package-info.ts';

export const TAGS = [
  { name: 'documents', description: 'Process, chunk, search and query whole documents' },
  { name: 'extraction', description: 'Text and tables from one format' },
  { name: 'utility', description: 'Language detection, health and caches' },
  { name: 'meta', description: 'Liveness, server information and the MCP endpoint' },
];

const swaggerPlugin: FastifyPluginAsync = async (app) => {
  await app.register(swagger, {
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
      tags: TAGS,
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', description: 'One of API_KEYS (only when the server sets API_KEYS)' },
          apiKeyHeader: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'One of API_KEYS (only when the server sets API_KEYS)' },
        },
      },
      // Auth is optional: it applies only when the server is started with API_KEYS.
      security: [{ bearerAuth: [] }, { apiKeyHeader: [] }, {}],
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: true });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
};

export default fp(swaggerPlugin, { name: 'swagger', fastify: '5.x' });
