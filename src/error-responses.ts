/**
 * The error responses of the HTTP routes. A route declares the codes it can really answer and gets
 * one response schema per HTTP status (src/errors.ts maps codes to statuses; 503 has two codes).
 * Each schema is the error body, described by the codes it stands for ("MODEL_UNAVAILABLE or
 * SHUTTING_DOWN"); the OpenAPI document (plugins/swagger.ts) turns each into a shared response
 * with the codes' descriptions and an example body per code.
 */
import { ERROR_STATUS, type ErrorCode } from './errors.ts';
import type { AnyTool } from './tools/define-tool.ts';
import type { DocumentKind } from './extractors/shared/types.ts';
import { ErrorBodySchema } from './tools/schemas.ts';

export interface ErrorDoc {
  /** When a route answers this code (the OpenAPI response description). */
  description: string;
  /** A message as the server words it (the example body). */
  example: string;
}

export const ERROR_DOCS: Readonly<Record<ErrorCode, ErrorDoc>> = {
  VALIDATION_ERROR: {
    description:
      'VALIDATION_ERROR: the input does not match the schema (a missing, malformed or unknown field: the message names it), the body is not valid JSON ' +
      'or nests arrays and objects deeper than 64 levels, or a multipart body is malformed (no boundary, truncated).',
    example: 'body/top_k must be <= 20',
  },
  UNAUTHORIZED: {
    description:
      'UNAUTHORIZED: the server has API_KEYS or API_KEYS_FILE set and the request carries no valid key (Authorization: Bearer <key>, or x-api-key), or the key has expired.',
    example: 'A valid API key is required: send "Authorization: Bearer <key>" or "x-api-key: <key>"',
  },
  URL_NOT_ALLOWED: {
    description:
      'URL_NOT_ALLOWED: the URL points where this server may not fetch (a private, loopback or link-local address, or a scheme other than http(s)), ' +
      'or, on a server bound to loopback, the Host or Origin header is not a loopback one.',
    example: 'URL not allowed: scheme "file" (only http and https)',
  },
  FORBIDDEN: {
    description:
      'FORBIDDEN: the API key (API_KEYS_FILE) may see the collection, or call the tool, but lacks the action the call needs ' +
      '(search, ingest, delete or admin). A collection outside the key\'s collections answers NOT_FOUND instead, as if it did not exist.',
    example: 'The API key "search-bot" may not delete documents: it needs the "delete" action',
  },
  NOT_FOUND: {
    description:
      'NOT_FOUND: no such route, or no such collection, document or job in the knowledge base; also a collection (or its jobs) outside the API key\'s collections.',
    example: 'Route GET /v1/nothing not found',
  },
  CONFLICT: {
    description: 'CONFLICT: the request clashes with what exists: a collection name already taken, or cancelling a job that already ended.',
    example: 'A collection named "papers" already exists',
  },
  CONFIRMATION_REQUIRED: {
    description:
      'CONFIRMATION_REQUIRED (MCP only): a destructive call (delete_document, manage_cache "clear") was not confirmed: the user declined the ' +
      'elicitation/create prompt, or the client cannot be asked and the call lacks confirm: true. Nothing was changed. REST calls are never asked.',
    example: 'delete_document destroys data: the client cannot be asked to confirm, so call it again with "confirm": true',
  },
  PAYLOAD_TOO_LARGE: {
    description:
      'PAYLOAD_TOO_LARGE: the request body, the uploaded file or the downloaded document is over its limit (JSON bodies 2 MiB, MAX_UPLOAD_BYTES, MAX_DOWNLOAD_BYTES; ' +
      'forms at most 32 fields of 1 MiB), ' +
      'or an archive or image in it is too large to open safely, or extracting it needed more than EXTRACT_MEMORY_MB.',
    example: 'The request body is larger than this server accepts',
  },
  UNSUPPORTED_FORMAT: {
    description: 'UNSUPPORTED_FORMAT: a document format this tool does not read, or a request Content-Type this route does not parse.',
    example: 'Unsupported format for this tool: expected a PDF document, but the file is a Word document (DOCX)',
  },
  PROCESSING_ERROR: {
    description: 'PROCESSING_ERROR: the document could not be processed (damaged, encrypted or empty).',
    example: 'The PDF is password-protected; remove the password and try again',
  },
  RATE_LIMITED: {
    description:
      'RATE_LIMITED: over RATE_LIMIT_RPM calls per minute for this client, or over the server-wide limit; with API_KEYS set, too many requests without a valid key ' +
      '(their own budgets, apart from the keys\' ones). Retry-After says when to retry.',
    example: 'Rate limit of 60 calls per minute exceeded; retry in 42 s',
  },
  INTERNAL_ERROR: {
    description: 'INTERNAL_ERROR: a bug. The details are in the server log (find them by request_id), never in the answer.',
    example: 'Internal server error',
  },
  DOWNLOAD_ERROR: {
    description: 'DOWNLOAD_ERROR: the document could not be downloaded (unknown host, refused connection, an HTTP error status, too many redirects).',
    example: 'HTTP 404 Not Found from example.org',
  },
  MODEL_UNAVAILABLE: {
    description: 'MODEL_UNAVAILABLE: a model the call needs is not available (the OCR engine, or an embedding model for mode "dense" or "hybrid").',
    example: 'mode "dense" needs an embedding model: no embedding model is configured',
  },
  STORAGE_UNAVAILABLE: {
    description: 'STORAGE_UNAVAILABLE: the operation needs to write the data folder (DATA_DIR), which is full, read-only or not writable; /health says which.',
    example: 'Could not clear the stored indexes: the data folder is on a read-only file system (DATA_DIR)',
  },
  NATIVE_ADDON_MISMATCH: {
    description:
      'NATIVE_ADDON_MISMATCH: a native addon the call needs (better-sqlite3, for the knowledge base) was built for another Node.js version than the one ' +
      'running the server; the message names both versions and the fix: run `npm rebuild` with the Node.js that starts the server. /health says so.',
    example:
      'better-sqlite3 (needed by the knowledge base) was built for Node.js 20 (NODE_MODULE_VERSION 115), but the server runs on Node.js v22.23.3 (NODE_MODULE_VERSION 127). ' +
      "Fix: run `npm rebuild` in the server's folder with the Node.js that starts the server (v22.23.3 here), or start the server with Node.js 20.",
  },
  OVERLOADED: {
    description:
      'OVERLOADED: every extraction slot is busy (EXTRACT_CONCURRENCY children, or MAX_MEMORY_MB reserved at EXTRACT_MEMORY_MB each) and EXTRACT_QUEUE_MAX calls already wait. Retry later.',
    example: 'Extraction is at capacity (EXTRACT_CONCURRENCY=2 extractions running) and EXTRACT_QUEUE_MAX=32 calls are already waiting; retry later',
  },
  RATE_LIMIT_UNAVAILABLE: {
    description:
      'RATE_LIMIT_UNAVAILABLE: the rate limits are shared through Redis (REDIS_URL), Redis cannot be reached and REDIS_FAILURE_MODE is closed, ' +
      'so calls that count against a budget are refused until it is back; /health says so. Retry-After says when to retry.',
    example: 'Rate limits cannot be checked: Redis (REDIS_URL) is unreachable and REDIS_FAILURE_MODE=closed; retry later',
  },
  QUEUE_UNAVAILABLE: {
    description:
      'QUEUE_UNAVAILABLE: ingestion jobs go through the queue in Redis (REDIS_URL), which cannot be reached, so no job was taken; ' +
      'searches and reads still work. Retry when Redis is back; /health says so.',
    example: 'The ingestion queue in Redis cannot be reached (no answer within 3 s); retry when Redis is back',
  },
  INDEX_LOADING: {
    description:
      "INDEX_LOADING: the collection's index is still loading (reading its snapshot or catching up with the database, after a restart) " +
      'and did not finish within SEARCH_LOAD_WAIT_MS. The load goes on; retry after Retry-After seconds. /ready names the collections still loading.',
    example: 'The index of collection "docs" is still loading (3 s so far); retry in 3 s',
  },
  SHUTTING_DOWN: {
    description:
      'SHUTTING_DOWN: the server is stopping (SIGTERM/SIGINT): the call was still running when SHUTDOWN_TIMEOUT ran out, or arrived while it stopped. Retry it.',
    example: 'The server is shutting down: the call was stopped before it finished; retry it',
  },
  TIMEOUT: {
    description: 'TIMEOUT: the call took longer than its timeout class allows (document 300 s, extraction 120 s, utility 30 s; capped by REQUEST_TIMEOUT).',
    example: 'process_document did not finish within 300 s',
  },
};

/** What every route can answer, /health included: a bug, and a request that meets the shutdown. */
export const ANY_ROUTE_ERRORS: readonly ErrorCode[] = ['INTERNAL_ERROR', 'SHUTTING_DOWN'];

/**
 * What every route behind the request guards can answer (all but /health): a missing API key, a
 * foreign Host/Origin on a loopback bind, the rate limit, plus ANY_ROUTE_ERRORS.
 */
export const GUARD_ERRORS: readonly ErrorCode[] = ['UNAUTHORIZED', 'URL_NOT_ALLOWED', 'RATE_LIMITED', ...ANY_ROUTE_ERRORS];

/** Formats read with OCR (scanned PDF pages, images): the OCR engine may be unavailable. */
const OCR_FORMATS: readonly DocumentKind[] = ['pdf', 'image'];

/** The codes a tool's REST route can answer, from what the tool declares. */
export function toolErrorCodes(tool: AnyTool): ErrorCode[] {
  // RATE_LIMIT_UNAVAILABLE: counted routes only (REDIS_URL set, REDIS_FAILURE_MODE=closed, Redis down).
  // FORBIDDEN: a scoped key (API_KEYS_FILE) without the action the tool needs.
  const codes = new Set<ErrorCode>(['VALIDATION_ERROR', ...GUARD_ERRORS, 'FORBIDDEN', 'RATE_LIMIT_UNAVAILABLE', 'TIMEOUT']);
  // A JSON body over the body limit, or a Content-Type the route does not parse.
  if (tool.rest.method === 'POST') codes.add('PAYLOAD_TOO_LARGE').add('UNSUPPORTED_FORMAT');
  // Tools that read documents: too large, not a format they read, damaged.
  if (tool.upload || tool.formats?.length) codes.add('PAYLOAD_TOO_LARGE').add('UNSUPPORTED_FORMAT').add('PROCESSING_ERROR').add('OVERLOADED');
  // Tools that fetch URLs: refused by the address policy, or the download failed.
  if (tool.annotations.openWorldHint) codes.add('URL_NOT_ALLOWED').add('DOWNLOAD_ERROR');
  // Scanned PDF pages and images need the OCR engine (retrieve_chunks, which also needs an
  // embedding model for dense and hybrid search, reads both).
  if (tool.formats?.some((f) => OCR_FORMATS.includes(f))) codes.add('MODEL_UNAVAILABLE');
  for (const code of tool.errors ?? []) codes.add(code);
  return sortByStatus([...codes]);
}

/** By HTTP status, then by name in code-unit order (not localeCompare: its first call builds an ICU collator, ~8 ms of every start). */
export function sortByStatus(codes: readonly ErrorCode[]): ErrorCode[] {
  return [...new Set(codes)].sort((a, b) => ERROR_STATUS[a] - ERROR_STATUS[b] || (a < b ? -1 : a > b ? 1 : 0));
}

const CODES_SEPARATOR = ' or ';

/** The description of an error response schema: the codes it stands for, "A or B". */
export function describeCodes(codes: readonly ErrorCode[]): string {
  return sortByStatus(codes).join(CODES_SEPARATOR);
}

/** The codes an error response schema stands for (the inverse of describeCodes), or null. */
export function codesFromDescription(description: unknown): ErrorCode[] | null {
  if (typeof description !== 'string' || description === '') return null;
  const codes = description.split(CODES_SEPARATOR);
  return codes.every((c) => Object.hasOwn(ERROR_STATUS, c)) ? (codes as ErrorCode[]) : null;
}

/**
 * Fastify response schemas, one per status: `{ 400: ErrorBody, 401: ErrorBody, ... }`. Each is the
 * whole error body (any code serializes, whatever the route declared), described by its codes.
 */
export function errorResponseSchemas(codes: readonly ErrorCode[]): Record<string, Record<string, unknown>> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of sortByStatus(codes)) byStatus.set(ERROR_STATUS[code], [...(byStatus.get(ERROR_STATUS[code]) ?? []), code]);
  const body = JSON.parse(JSON.stringify(ErrorBodySchema)) as Record<string, unknown>;
  return Object.fromEntries([...byStatus].map(([status, group]) => [String(status), { ...body, description: describeCodes(group) }]));
}

/** A JSON-RPC error as the MCP transport writes it (it answers some failures itself). */
const JsonRpcErrorSchema = {
  type: 'object',
  required: ['jsonrpc', 'error', 'id'],
  properties: {
    jsonrpc: { type: 'string', const: '2.0' },
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: { code: { type: 'integer' }, message: { type: 'string' }, data: {} },
    },
    id: { anyOf: [{ type: 'string' }, { type: 'number' }, { type: 'null' }] },
  },
  description: 'A JSON-RPC error from the MCP transport',
} as const;

const JsonRpcResponseSchema = {
  type: 'object',
  required: ['jsonrpc', 'id'],
  properties: {
    jsonrpc: { type: 'string', const: '2.0' },
    id: { anyOf: [{ type: 'string' }, { type: 'number' }] },
    result: { type: 'object', description: 'The result of the call (tools/call: content, structuredContent, isError)' },
    error: JsonRpcErrorSchema.properties.error,
  },
} as const;

const errorOrJsonRpc = (code: ErrorCode, jsonRpc: string) => ({
  description: `${ERROR_DOCS[code].description} The MCP transport itself answers ${jsonRpc} with a JSON-RPC error.`,
  content: { 'application/json': { schema: { anyOf: [ErrorBodySchema, JsonRpcErrorSchema] } } },
});

/**
 * The responses of POST /mcp, for the OpenAPI document only (the route hijacks the reply, so
 * nothing is serialized with these): the request guards answer with the error body, the MCP
 * transport with JSON-RPC errors. Tool failures are `isError: true` results inside a 200.
 */
export function mcpResponseDocs(): Record<string, unknown> {
  return {
    200: {
      description: 'The JSON-RPC response, or an array of them for a batch. A failed tool call is a result with isError: true and {error, code}.',
      content: { 'application/json': { schema: { anyOf: [JsonRpcResponseSchema, { type: 'array', items: JsonRpcResponseSchema }] } } },
    },
    202: { description: 'Accepted: the body held only notifications or responses.', type: 'null' },
    400: errorOrJsonRpc('VALIDATION_ERROR', 'a body that is not a JSON-RPC message (-32700, -32600)'),
    ...errorResponseSchemas(['UNAUTHORIZED', 'URL_NOT_ALLOWED', 'PAYLOAD_TOO_LARGE', 'RATE_LIMITED', 'RATE_LIMIT_UNAVAILABLE', 'SHUTTING_DOWN']),
    406: {
      description: 'The Accept header must list both application/json and text/event-stream (JSON-RPC error -32000).',
      content: { 'application/json': { schema: JsonRpcErrorSchema } },
    },
    415: errorOrJsonRpc('UNSUPPORTED_FORMAT', 'a text/plain body (-32000: Content-Type must be application/json)'),
    500: errorOrJsonRpc('INTERNAL_ERROR', 'a failure while handling the messages (-32603)'),
  };
}
