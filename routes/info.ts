/** GET /info: what this server is and what it serves, for people and client setup scripts. */
import type { FastifyInstance } from 'fastify';
import Type from 'typebox';
import { PACKAGE_INFO } from '../src/package-info.ts';
import { mayListTool } from '../src/auth/tool-access.ts';
import { errorResponseSchemas, GUARD_ERRORS } from '../src/error-responses.ts';

const InfoSchema = Type.Object(
  {
    name: Type.String(),
    version: Type.String(),
    description: Type.String(),
    tools: Type.Array(
      Type.Object(
        {
          name: Type.String(),
          title: Type.String(),
          group: Type.String(),
          method: Type.String(),
          path: Type.String(),
          accepts_upload: Type.Boolean(),
        },
        { additionalProperties: false },
      ),
    ),
    transports: Type.Array(
      Type.Object({ name: Type.String(), endpoint: Type.String() }, { additionalProperties: false }),
    ),
    docs: Type.String(),
    openapi: Type.String(),
  },
  { additionalProperties: false },
);

export default async function infoRoutes(app: FastifyInstance): Promise<void> {
  app.get(
    '/info',
    {
      schema: {
        operationId: 'info',
        summary: 'Server information',
        description: 'Name, version, the tools with their REST routes, and the transports they are served on.',
        tags: ['meta'],
        response: { 200: InfoSchema, ...errorResponseSchemas(GUARD_ERRORS) },
      },
    },
    async (request) => ({
      name: PACKAGE_INFO.name,
      version: PACKAGE_INFO.version,
      description: PACKAGE_INFO.description,
      // Only the tools the caller's key may call, as MCP tools/list shows them.
      tools: app.tools.filter((t) => mayListTool(t, request.principal)).map((t) => ({
        name: t.name,
        title: t.title,
        group: t.group,
        method: t.rest.method,
        path: t.rest.path,
        accepts_upload: Boolean(t.upload),
      })),
      transports: [
        { name: 'rest', endpoint: '/v1' },
        { name: 'mcp-streamable-http', endpoint: '/mcp' },
        { name: 'mcp-stdio', endpoint: 'rag-document-server --transport stdio' },
      ],
      docs: '/docs',
      openapi: '/openapi.json',
    }),
  );
}
