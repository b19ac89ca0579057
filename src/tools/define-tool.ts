/**
 * A tool is declared once: name, schemas, timeout class, REST binding and handler. The REST routes
 * (routes/tools.ts) and the MCP server (src/mcp/) are both generated from the registry.
 */
import type { Static, TObject, TSchema } from 'typebox';
import type { Logger } from 'pino';
import type { Services } from '../services.ts';
import type { DocumentKind } from '../extractors/shared/types.ts';
import type { CallContext, UploadedFile } from '../call-context.ts';
import type { ErrorCode } from '../errors.ts';
import type { Action } from '../auth/actions.ts';
import type { Principal } from '../auth/principal.ts';

export type TimeoutClass = 'document' | 'extraction' | 'utility';

export const TIMEOUT_SECONDS: Record<TimeoutClass, number> = {
  document: 300,
  extraction: 120,
  utility: 30,
};

export type ToolGroup = 'documents' | 'extraction' | 'utility' | 'knowledge_base';

export interface ToolContext extends CallContext {
  log: Logger;
  requestId: string;
  services: Services;
  /** Present when the caller uploaded the document instead of naming a URL. */
  upload?: UploadedFile;
  /** The registry serving this call (get_system_health and the MCP resources describe it). */
  tools?: readonly AnyTool[];
  /**
   * MCP only, when the client sent a progressToken: relays progress as notifications/progress.
   * Absent over REST and when the client asked for none.
   */
  progress?: (p: { progress: number; total?: number; message?: string }) => void;
  /** MCP over stdio, when the client supports roots: its root folders as local paths. */
  roots?: () => Promise<string[]>;
  /** How the call arrived: rest, mcp (Streamable HTTP) or stdio (tools whose defaults differ per transport). */
  transport?: string;
  /**
   * The key making the call (src/auth/principal.ts); full access when no keys are configured.
   * Tools that list or look up collections and jobs filter by it.
   */
  principal: Principal;
}

/**
 * What a key must be allowed to do to call the tool (src/auth/tool-access.ts checks it before the
 * handler runs, on every transport; MCP tools/list shows only the tools a key may call).
 */
export interface ToolAccess<I = unknown> {
  /** The action a call needs; a list: any one of them suffices. */
  action: Action | readonly Action[];
  /** Calls that need another action than `action` (manage_cache "clear" needs admin). */
  actionFor?(input: I): Action | readonly Action[];
  /**
   * The input field naming the collection the call acts on: a key that may not see it gets
   * NOT_FOUND before the handler runs. Tools naming jobs check the job's collection themselves.
   */
  collection?: string;
  /** What the call does, for the FORBIDDEN message ("delete documents"). */
  what: string;
}

/**
 * What a call does to the world, for MCP clients deciding whether to ask the user first (the MCP
 * ToolAnnotations). Declared by each tool, never guessed from its name or group.
 */
export interface ToolAnnotations {
  /** Never changes anything a caller can observe (caching does not count). */
  readOnlyHint: boolean;
  /** May destroy state (only meaningful when not read-only): manage_cache can clear every cache. */
  destructiveHint: boolean;
  /** Calling again with the same input has no further effect. */
  idempotentHint: boolean;
  /** Reaches outside the server: tools that fetch the URLs they are given. */
  openWorldHint: boolean;
  /** For people; defaults to the tool's title. */
  title?: string;
}

/**
 * A request that works as is on a fresh server (published in the OpenAPI document, where Swagger
 * UI offers it for "Try it out"). The value must be valid for the input schema; URLs must be public
 * (the default address policy refuses private and loopback addresses) and stable. The one
 * exception are the `*_offline` twins from withOfflineTwins (src/tools/examples.ts): the same
 * request on the files `npm run demo` serves over loopback, for machines without internet.
 */
export interface ToolExample<T = unknown> {
  /** Key in the OpenAPI `examples` map: letters, digits, `_` and `-`. */
  name: string;
  summary: string;
  description?: string;
  value: T;
}

/**
 * How a tool is served over REST. Path parameters (`/v1/collections/:name/search`) are fields of the
 * input schema: they are validated with the same property schemas and merged into the input. GET
 * and DELETE take the other fields from the querystring (types coerced), POST and PATCH from the JSON body.
 */
export interface RestBinding {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  path: string;
  /** The success status: 200 by default, 201 for a creation, 202 for an accepted job. */
  status?: 200 | 201 | 202;
}

/** The path parameters of a REST path, in order: '/v1/jobs/:job_id/events' -> ['job_id']. */
export function pathParams(path: string): string[] {
  return [...path.matchAll(/:([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1]!);
}

/** Whether the tool is listed and callable over MCP. */
export function servedOverMcp(tool: Pick<ToolDefinition, 'mcp'>): boolean {
  return tool.mcp !== false;
}

export interface ToolDefinition<I extends TObject = TObject, O extends TSchema = TSchema> {
  name: string;
  title: string;
  description: string;
  group: ToolGroup;
  input: I;
  output: O;
  timeoutClass: TimeoutClass;
  rest: RestBinding;
  /**
   * false: a REST-only operation (administration the MCP tool list leaves out, e.g. create_collection);
   * it stays out of tools/list and tools/call. Default: served over both.
   */
  mcp?: false;
  annotations: ToolAnnotations;
  access: ToolAccess<Static<I>>;
  /**
   * For a tool annotated destructive: which calls destroy something (default: every call). Over
   * MCP those are confirmed first (src/mcp/confirm-destructive.ts); manage_cache's "stats" is not.
   */
  destructiveCall?(input: Static<I>): boolean;
  /**
   * Requests to publish, the first being the default. For upload tools the first one, without its
   * URL field, also fills the multipart form (Swagger UI pre-fills every form field it can, so set
   * every optional field whose generated sample would change the answer, e.g. a minimum of 1).
   */
  examples?: readonly ToolExample<Static<I>>[];
  /**
   * Document tools accept an uploaded file (REST: multipart field `file`, or a raw body with a
   * Content-Type) in place of their URL field; the REST adapter then validates the other fields
   * against the input schema without `urlField` and passes the file as ctx.upload.
   * `alsoUrlFields` are other fields that name documents (not offered next to a file).
   */
  upload?: { urlField: 'document_url' | 'image_url' | 'urls'; alsoUrlFields?: readonly string[] };
  /**
   * Document kinds this tool reads (see src/tools/formats.ts). The supported-formats list of
   * get_system_health and the rag://supported-formats resource are generated from these.
   */
  formats?: readonly DocumentKind[];
  /**
   * Error codes this tool answers beyond what its declaration implies (src/error-responses.ts
   * toolErrorCodes): the knowledge-base tools' NOT_FOUND, CONFLICT, STORAGE_UNAVAILABLE.
   */
  errors?: readonly ErrorCode[];
  handler(input: Static<I>, ctx: ToolContext): Promise<Static<O>>;
}

export function defineTool<I extends TObject, O extends TSchema>(def: ToolDefinition<I, O>): ToolDefinition<I, O> {
  return def;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyTool = ToolDefinition<any, any>;
