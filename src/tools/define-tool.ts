/**
 * A tool is declared once: name, schemas, timeout class, REST binding and handler. The REST routes
 * (routes/tools.ts) and the MCP server (src/mcp/) are both generated from the registry.
 */
import type { Static, TObject, TSchema } from 'typebox';
import type { Logger } from 'pino';
import type { Services } from '../services.ts';
import type { DocumentKind } from '../extractors/types.ts';
import type { CallContext, UploadedFile } from '../call-context.ts';

export type TimeoutClass = 'document' | 'extraction' | 'utility';

export const TIMEOUT_SECONDS: Record<TimeoutClass, number> = {
  document: 300,
  extraction: 120,
  utility: 30,
};

export type ToolGroup = 'documents' | 'extraction' | 'utility';

export interface ToolContext extends CallContext {
  log: Logger;
  requestId: string;
  services: Services;
  /** Present when the caller uploaded the document instead of naming a URL. */
  upload?: UploadedFile;
  /** The registry serving this call (get_system_health and the MCP resources describe it). */
  tools?: readonly AnyTool[];
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
 * (the default address policy refuses private and loopback addresses) and stable.
 */
export interface ToolExample<T = unknown> {
  /** Key in the OpenAPI `examples` map: letters, digits, `_` and `-`. */
  name: string;
  summary: string;
  description?: string;
  value: T;
}

export interface ToolDefinition<I extends TObject = TObject, O extends TSchema = TSchema> {
  name: string;
  title: string;
  description: string;
  group: ToolGroup;
  input: I;
  output: O;
  timeoutClass: TimeoutClass;
  rest: { method: 'GET' | 'POST'; path: string };
  annotations: ToolAnnotations;
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
  upload?: { urlField: 'document_url' | 'image_url'; alsoUrlFields?: readonly string[] };
  /**
   * Document kinds this tool reads (see src/tools/formats.ts). The supported-formats list of
   * get_system_health and the rag://supported-formats resource are generated from these.
   */
  formats?: readonly DocumentKind[];
  handler(input: Static<I>, ctx: ToolContext): Promise<Static<O>>;
}

export function defineTool<I extends TObject, O extends TSchema>(def: ToolDefinition<I, O>): ToolDefinition<I, O> {
  return def;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyTool = ToolDefinition<any, any>;
