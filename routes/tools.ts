/**
 * One REST route per registered tool, generated from the registry: path and method from `rest`,
 * operationId = tool name, tag = group, request and response schemas from the tool's TypeBox
 * schemas. Tools that accept uploads are registered in their own scope, where multipart and raw
 * bodies (up to MAX_UPLOAD_BYTES) are parsed; every other route keeps the small JSON body limit.
 * Path parameters (`:name`) are input fields: validated as Fastify params with their own property
 * schemas, the other fields as the body (POST) or querystring (GET, DELETE), then merged. Tools
 * declared `mcp: false` are REST-only and are served here all the same.
 */
import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema, RouteOptions } from 'fastify';
import type { Logger } from 'pino';
import Type, { type TObject } from 'typebox';
import { pathParams, type AnyTool } from '../src/tools/define-tool.ts';
import { runTool } from '../src/tools/run-tool.ts';
import { errorResponseSchemas, toolErrorCodes } from '../src/error-responses.ts';
import { readUploadCall, UPLOAD_FIELD, type ToolCallInput } from '../src/tools/upload-input.ts';
import { RawUpload, readHashed, UploadTooLarge } from '../src/tools/upload-read.ts';
import { toolError } from '../src/errors.ts';
import type { Readable } from 'node:stream';
import { omitProperty } from '../src/tools/validate-input.ts';

/** The input split by where it travels: path parameters, and the rest (body or querystring). */
interface InputParts {
  params: TObject | null;
  rest: TObject;
}

const partsCache = new WeakMap<AnyTool, InputParts>();

export function inputParts(tool: AnyTool): InputParts {
  let parts = partsCache.get(tool);
  if (parts) return parts;
  const names = pathParams(tool.rest.path);
  const input = tool.input as TObject;
  for (const n of names) {
    if (!(n in input.properties) || !(input.required ?? []).includes(n)) throw new Error(`Tool ${tool.name}: path parameter ${n} must be a required input field`);
  }
  const params = names.length === 0 ? null : Type.Object(Object.fromEntries(names.map((n) => [n, input.properties[n]!])), { additionalProperties: false });
  parts = { params, rest: names.reduce((schema, n) => omitProperty(schema, n), input) };
  partsCache.set(tool, parts);
  return parts;
}

function baseSchema(tool: AnyTool) {
  const { params } = inputParts(tool);
  return {
    operationId: tool.name,
    summary: tool.title,
    description: tool.description,
    tags: [tool.group],
    ...(params ? { params } : {}),
    response: { [tool.rest.status ?? 200]: tool.output, ...errorResponseSchemas(toolErrorCodes(tool)) },
  };
}

/** A schema as plain JSON (TypeBox keeps its bookkeeping in non-enumerable keys). */
const plain = <T>(schema: T): T => JSON.parse(JSON.stringify(schema)) as T;

/** The tool's examples as an OpenAPI `examples` map (@fastify/swagger moves x-examples there). */
function namedExamples(tool: AnyTool): Record<string, { summary: string; description?: string; value: unknown }> {
  return Object.fromEntries(
    (tool.examples ?? []).map((e) => [e.name, { summary: e.summary, ...(e.description ? { description: e.description } : {}), value: e.value }]),
  );
}

/** The JSON request body as documented: the input schema with the tool's examples. */
function jsonBodyDocs(tool: AnyTool): Record<string, unknown> {
  return { ...plain(inputParts(tool).rest), ...(tool.examples?.length ? { 'x-examples': namedExamples(tool) } : {}) };
}

function handlerFor(app: FastifyInstance, tool: AnyTool, read: (request: FastifyRequest) => ToolCallInput | Promise<ToolCallInput>) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    // A JSON route's input is at hand: awaited only where it is read from an upload.
    const call = read(request);
    const { input, upload } = call instanceof Promise ? await call : call;
    const params = (request.params ?? {}) as Record<string, unknown>;
    const merged = inputParts(tool).params ? { ...(input as Record<string, unknown>), ...params } : input;
    const output = await runTool(tool, merged, {
      services: app.services,
      tools: app.tools,
      // Fastify's logger is the pino instance given to buildApp.
      log: request.log as unknown as Logger,
      requestId: request.id,
      // The client going away before the answer is written cancels the call (run-tool follows the response).
      response: reply.raw,
      // Shutdown past SHUTDOWN_TIMEOUT answers the call 503 SHUTTING_DOWN (plugins/shutdown.ts).
      shutdownSignal: app.shutdownSignal,
      upload,
      transport: 'rest',
      // Set by plugins/auth.ts: the key's scopes, checked by run-tool before the handler.
      principal: request.principal,
    });
    if (tool.rest.status) reply.code(tool.rest.status);
    return output;
  };
}

function jsonRoute(app: FastifyInstance, tool: AnyTool): RouteOptions {
  const part = tool.rest.method === 'POST' || tool.rest.method === 'PATCH' ? 'body' : 'querystring';
  return {
    method: tool.rest.method,
    url: tool.rest.path,
    schema: { ...baseSchema(tool), [part]: inputParts(tool).rest },
    // Validation uses the input schema (path parameters apart); the document adds the examples.
    // A POST whose fields all travel in the path (cancel_job) is documented without a body.
    config:
      part === 'body'
        ? {
            swaggerTransform: ({ schema, url }: { schema: FastifySchema; url: string }) => {
              const { body: _body, ...rest } = schema as Record<string, unknown>;
              return { url, schema: Object.keys(inputParts(tool).rest.properties).length === 0 ? rest : { ...rest, body: jsonBodyDocs(tool) } };
            },
          }
        : {},
    handler: handlerFor(app, tool, (request) => ({ input: part === 'body' ? request.body : request.query })),
  };
}

/**
 * The OpenAPI view of an upload route: JSON with the URL, a multipart form, or the raw bytes. The
 * form and the querystring offer the fields that go with a file: all but the URL field and other
 * ways of naming documents (retrieve_chunks' document_urls). Swagger UI fills every form field,
 * from its example when it has one, so the first example's values are the form's examples.
 */
function uploadDocs(tool: AnyTool, urlField: string) {
  const withoutUrls = [urlField, ...(tool.upload?.alsoUrlFields ?? [])];
  const rest = withoutUrls.reduce((schema, field) => omitProperty(schema, field), inputParts(tool).rest);
  const formExample = (tool.examples?.[0]?.value ?? {}) as Record<string, unknown>;
  const formFields = Object.fromEntries(
    Object.entries(plain(rest.properties)).map(([name, schema]) => [name, name in formExample ? { ...schema, examples: [formExample[name]] } : schema]),
  );
  const multipartSchema = {
    type: 'object',
    required: [UPLOAD_FIELD, ...(rest.required ?? [])],
    properties: {
      [UPLOAD_FIELD]: { type: 'string', format: 'binary', description: `The document itself (instead of ${urlField})` },
      ...formFields,
    },
    additionalProperties: false,
    description: `Upload the document as the form field "${UPLOAD_FIELD}"; other fields as form fields.`,
  };
  const querystring = Type.Object(
    Object.fromEntries(Object.entries(rest.properties).map(([k, v]) => [k, Type.Optional(v)])),
    { description: 'Only with a raw upload body: the other input fields.' },
  );
  return ({ schema, url }: { schema: FastifySchema; url: string }) => ({
    url,
    schema: {
      ...schema,
      querystring,
      body: {
        description: `JSON with ${urlField}, a multipart form with the file, or the raw file bytes with its Content-Type.`,
        content: {
          'application/json': { schema: jsonBodyDocs(tool) },
          'multipart/form-data': { schema: multipartSchema },
          'application/octet-stream': { schema: Type.String({ format: 'binary', description: 'Raw document bytes (any non-JSON Content-Type)' }) },
        },
      },
    },
  });
}

function uploadRoute(app: FastifyInstance, tool: AnyTool, urlField: string, maxBytes: number): RouteOptions {
  return {
    method: 'POST',
    url: tool.rest.path,
    schema: baseSchema(tool),
    config: { swaggerTransform: uploadDocs(tool, urlField) },
    handler: handlerFor(app, tool, (request) => readUploadCall(request, inputParts(tool).rest, urlField, { maxBytes })),
  };
}

export default async function toolRoutes(app: FastifyInstance): Promise<void> {
  for (const tool of app.tools) if (!tool.upload) app.route(jsonRoute(app, tool));

  const uploadTools = app.tools.filter((t) => t.upload);
  if (uploadTools.length === 0) return;
  await app.register(async (scope) => {
    const maxBytes = app.config.MAX_UPLOAD_BYTES;
    await scope.register(multipart, { limits: { fileSize: maxBytes, files: 1 } });
    // Any other body is the document itself, up to MAX_UPLOAD_BYTES.
    scope.removeContentTypeParser(['text/plain']);
    // Read as a stream, hashed chunk by chunk (src/tools/upload-read.ts): no pause of the loop to hash it whole.
    scope.addContentTypeParser('*', { bodyLimit: maxBytes }, async (_req: FastifyRequest, payload: NodeJS.ReadableStream) => {
      try {
        const read = await readHashed(payload as Readable, maxBytes);
        return new RawUpload(read.bytes, read.sha256);
      } catch (err) {
        if (err instanceof UploadTooLarge) throw toolError('PAYLOAD_TOO_LARGE', `The request body is larger than MAX_UPLOAD_BYTES (${maxBytes} bytes)`);
        throw err;
      }
    });
    for (const tool of uploadTools) scope.route(uploadRoute(scope, tool, tool.upload!.urlField, maxBytes));
  });
}
