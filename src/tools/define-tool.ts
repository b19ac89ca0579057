/**
 * A tool is declared once: name, schemas, timeout class, REST binding and handler. The REST routes
 * (routes/tools.ts) and the MCP server (src/mcp/) are both generated from the registry.
 */
import type { Static, TObject, TSchema } from 'typebox';
import type { Logger } from 'pino';
import type { Services } from '../services.ts';
import type { DocumentKind } from '../extractors/types.ts';

export type TimeoutClass = 'document' | 'extraction' | 'utility';

export const TIMEOUT_SECONDS: Record<TimeoutClass, number> = {
  document: 300,
  extraction: 120,
  utility: 30,
};

export type ToolGroup = 'documents' | 'extraction' | 'utility';

/** A file sent by the caller instead of a URL (multipart field `file` or a raw body). */
export interface UploadedFile {
  bytes: Buffer;
  filename?: string;
  contentType?: string;
}

export interface ToolContext {
  /** Aborted on timeout or when the client goes away; pass it to every await that can take long. */
  signal: AbortSignal;
  log: Logger;
  requestId: string;
  services: Services;
  /** Present when the caller uploaded the document instead of naming a URL. */
  upload?: UploadedFile;
  /** The registry serving this call (get_system_health and the MCP resources describe it). */
  tools?: readonly AnyTool[];
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
  /**
   * Document tools accept an uploaded file (REST: multipart field `file`, or a raw body with a
   * Content-Type) in place of their URL field; the REST adapter then validates the other fields
   * against the input schema without `urlField` and passes the file as ctx.upload.
   */
  upload?: { urlField: 'document_url' | 'image_url' };
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
