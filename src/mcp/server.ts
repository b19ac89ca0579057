/**
 * The MCP server, built from the registry with the low-level SDK `Server` so tools keep their
 * TypeBox JSON Schemas verbatim (the same ones REST validates and publishes). tools/call validates
 * with the same rules as REST, runs through run-tool (timeouts, logs, coded errors) and answers
 * with structuredContent plus a text copy; failures are `isError: true` with {error, code}.
 * Tools declared `mcp: false` (REST-only administration) are neither listed nor callable. A call
 * whose request carries a progressToken gets ctx.progress (notifications/progress); over stdio a
 * client that supports roots gets ctx.roots (its folders, for local-file ingestion).
 */
import Value from 'typebox/value';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import { toPublicError, type ErrorCode as ToolErrorCode } from '../errors.ts';
import type { Services } from '../services.ts';
import { servedOverMcp, type AnyTool, type ToolContext } from '../tools/define-tool.ts';
import type { KnowledgeBaseApi } from '../kb/types.ts';
import { collectionTemplate, kbResourceList, readKbResource } from './kb-resources.ts';
import { runTool } from '../tools/run-tool.ts';
import { checkInput, formatIssue } from '../tools/validate-input.ts';
import { PACKAGE_INFO } from '../package-info.ts';
import { jsonSchema, RESOURCES } from './resources.ts';
import { screenRequests } from './screen-requests.ts';
import { isStackOverflow, MAX_JSON_DEPTH } from '../json-limits.ts';
import { FULL_ACCESS, type Principal } from '../auth/principal.ts';
import { authorizeCall, mayListTool } from '../auth/tool-access.ts';
import { confirmDestructive, isDestructiveCall } from './confirm-destructive.ts';

export interface McpServerOptions {
  tools: readonly AnyTool[];
  services: Services;
  /** Logger already bound to the request id when there is one (HTTP). */
  log: Logger;
  /** The id of the HTTP request carrying the call; stdio calls get a fresh id each. */
  requestId?: string;
  transport: 'mcp' | 'stdio';
  /** HTTP: the server's shutdown signal; it stops tool calls, its reason (SHUTTING_DOWN) their error. */
  shutdownSignal?: AbortSignal;
  /**
   * Shared across per-request servers: building a fresh Ajv per HTTP request was most of the
   * /mcp route's CPU (measured by the http-load benchmark).
   */
  validator?: jsonSchemaValidator;
  /** Streamable HTTP: progress goes out only while the SSE response has room (coalescedProgress). */
  progressGate?: ProgressGate;
  /** The key the calls are made with (HTTP: the request's; stdio: RAG_API_KEY's); default full access. */
  principal?: Principal;
}

/**
 * Whether the response carrying a call's progress can take more now (Streamable HTTP: the SSE
 * response's socket). The SDK queues every notification it is given, so the gate is asked first.
 */
export interface ProgressGate {
  busy(): boolean;
  /** Calls `fn` once when the response has room again. */
  whenFree(fn: () => void): void;
}

/**
 * Progress relayed only while the response has room: while it is busy the latest report replaces
 * older ones and goes out when there is room, so a client that reads slowly gets fewer reports,
 * never a growing backlog.
 */
export function coalescedProgress(gate: ProgressGate | undefined, send: (p: ProgressReport) => void): (p: ProgressReport) => void {
  if (!gate) return send;
  let latest: ProgressReport | null = null;
  let waiting = false;
  const flush = () => {
    waiting = false;
    if (latest === null) return;
    if (gate.busy()) return wait();
    const p = latest;
    latest = null;
    send(p);
  };
  const wait = () => {
    if (waiting) return;
    waiting = true;
    gate.whenFree(flush);
  };
  return (p) => {
    latest = p;
    if (waiting) return;
    flush();
  };
}

type ProgressReport = Parameters<NonNullable<ToolContext['progress']>>[0];

/** One validator for a process's MCP servers (HTTP creates a server per request). */
export function createMcpValidator(): jsonSchemaValidator {
  return new AjvJsonSchemaValidator();
}

export function mcpToolListing(tool: AnyTool): Tool {
  const output = jsonSchema(tool.output);
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: jsonSchema(tool.input) as Tool['inputSchema'],
    // MCP output schemas must describe an object.
    ...(output.type === 'object' ? { outputSchema: output as Tool['outputSchema'] } : {}),
    // Declared by each tool (src/tools/define-tool.ts ToolAnnotations), never inferred here.
    annotations: {
      title: tool.annotations.title ?? tool.title,
      readOnlyHint: tool.annotations.readOnlyHint,
      destructiveHint: tool.annotations.destructiveHint,
      idempotentHint: tool.annotations.idempotentHint,
      openWorldHint: tool.annotations.openWorldHint,
    },
  };
}

/** Every transport connects through the params screen, so malformed requests get -32602, not -32603. */
export function connectMcp(server: Server, transport: Transport): Promise<void> {
  return server.connect(screenRequests(transport));
}

/**
 * A handler whose unexpected failures reach the client as -32603 "Internal server error" (the SDK
 * would send the raw message) and the log with the stack. McpErrors are meant for the client.
 */
function guarded<A extends unknown[], R>(log: Logger, method: string, handler: (...args: A) => Promise<R>): (...args: A) => Promise<R> {
  return async (...args) => {
    try {
      return await handler(...args);
    } catch (err) {
      if (err instanceof McpError) throw err;
      if (isStackOverflow(err)) throw new McpError(ErrorCode.InvalidParams, `Invalid params for ${method}: nested too deeply (at most ${MAX_JSON_DEPTH} levels)`);
      log.error({ err, method }, 'MCP request failed');
      throw new McpError(ErrorCode.InternalError, 'Internal server error');
    }
  };
}

function errorResult(code: ToolErrorCode, message: string, requestId: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: JSON.stringify({ error: message, code, request_id: requestId }) }] };
}

/** The client's roots as local folders (file:// URIs only; others are left out). */
async function rootsOf(server: Server): Promise<string[]> {
  const { roots } = await server.listRoots(undefined, { timeout: 10_000 });
  const out: string[] = [];
  for (const r of roots) {
    try {
      if (r.uri.startsWith('file://')) out.push(fileURLToPath(r.uri));
    } catch {
      // Not a local file URI (another host): not a folder of this machine.
    }
  }
  return out;
}

export function createMcpServer(opts: McpServerOptions): Server {
  const principal = opts.principal ?? FULL_ACCESS;
  const served = opts.tools.filter(servedOverMcp);
  // tools/list shows a key only the tools it has the action for; calling another one answers
  // FORBIDDEN (as REST does), not "unknown tool".
  const mcpTools = served.filter((t) => mayListTool(t, principal));
  const byName = new Map(served.map((t) => [t.name, t]));
  // Services built by hand for a test may lack the knowledge base: then it has no resources.
  const kb: KnowledgeBaseApi | undefined = opts.services.kb;
  const server = new Server(
    { name: PACKAGE_INFO.name, version: PACKAGE_INFO.version, title: 'RAG Document Server' },
    {
      capabilities: { tools: { listChanged: false }, resources: { listChanged: false } },
      jsonSchemaValidator: opts.validator ?? createMcpValidator(),
      instructions:
        'Deterministic document tools: process, chunk and search documents by URL, extract text and tables per format, ' +
        'detect language, report health and manage caches; a persistent knowledge base: ingest_documents into a collection, ' +
        'then search_collection (list_collections, list_documents, delete_document, get_job). Read rag://tool-descriptions for details.',
    },
  );

  server.setRequestHandler(ListToolsRequestSchema, guarded(opts.log, 'tools/list', async () => ({ tools: mcpTools.map(mcpToolListing) })));

  server.setRequestHandler(CallToolRequestSchema, guarded(opts.log, 'tools/call', async (request, extra): Promise<CallToolResult> => {
    const requestId = opts.requestId ?? randomUUID();
    const log = opts.requestId ? opts.log : opts.log.child({ request_id: requestId });
    const tool = byName.get(request.params.name);
    if (!tool) return errorResult('NOT_FOUND', `Unknown tool: ${JSON.stringify(request.params.name.slice(0, 100))}`, requestId);
    const checked = checkInput(tool.input, request.params.arguments ?? {});
    if (!checked.ok) {
      const message = formatIssue(checked.issue);
      log.info({ tool: tool.name, code: 'VALIDATION_ERROR', error: message, transport: opts.transport }, 'tool.rejected');
      return errorResult('VALIDATION_ERROR', message, requestId);
    }
    const progressToken = request.params._meta?.progressToken;
    const progress: ToolContext['progress'] = progressToken === undefined ? undefined : coalescedProgress(opts.progressGate, (p) => {
      void extra
        .sendNotification({ method: 'notifications/progress', params: { progressToken, ...p } })
        .catch((err: unknown) => log.debug({ err }, 'progress notification not sent'));
    });
    try {
      // Before any prompt: a key that may not make the call is not asked to confirm it.
      authorizeCall(tool, checked.value, principal);
    } catch (err) {
      const e = toPublicError(err);
      log.info({ tool: tool.name, code: e.code, key: principal.name, transport: opts.transport }, 'tool.denied');
      return errorResult(e.code, e.message, requestId);
    }
    if (isDestructiveCall(tool, checked.value)) {
      const refusal = await confirmDestructive(server, tool, checked.value as Record<string, unknown>, { signal: extra.signal, relatedRequestId: extra.requestId });
      if (refusal) {
        log.info({ tool: tool.name, code: 'CONFIRMATION_REQUIRED', transport: opts.transport }, 'tool.unconfirmed');
        return errorResult('CONFIRMATION_REQUIRED', refusal, requestId);
      }
    }
    const roots: ToolContext['roots'] = opts.transport === 'stdio' && server.getClientCapabilities()?.roots ? () => rootsOf(server) : undefined;
    try {
      const raw = await runTool(tool, checked.value, {
        progress,
        roots,
        services: opts.services,
        tools: opts.tools,
        log,
        requestId,
        signal: extra.signal,
        shutdownSignal: opts.shutdownSignal,
        transport: opts.transport,
        principal,
      });
      // Shaped by the tool's output schema as REST's serializer shapes it: fields the schema does
      // not name (a job item's file identity, internal bookkeeping) never reach an MCP client.
      const output = Value.Clean(tool.output, structuredClone(raw));
      const result: CallToolResult = { content: [{ type: 'text', text: JSON.stringify(output) }] };
      if (output !== null && typeof output === 'object' && !Array.isArray(output)) result.structuredContent = output as Record<string, unknown>;
      return result;
    } catch (err) {
      const e = toPublicError(err);
      return errorResult(e.code, e.message, requestId);
    }
  }));

  server.setRequestHandler(ListResourcesRequestSchema, guarded(opts.log, 'resources/list', async () => ({
    resources: [...RESOURCES.map(({ uri, name, title, description, mimeType }) => ({ uri, name, title, description, mimeType })), ...kbResourceList(kb, principal)],
  })));

  server.setRequestHandler(ListResourceTemplatesRequestSchema, guarded(opts.log, 'resources/templates/list', async () => ({
    resourceTemplates: kb ? [collectionTemplate] : [],
  })));

  server.setRequestHandler(ReadResourceRequestSchema, guarded(opts.log, 'resources/read', async (request) => {
    const resource = RESOURCES.find((r) => r.uri === request.params.uri);
    if (!resource) {
      const value = readKbResource(kb, request.params.uri, principal);
      if (value !== undefined && value !== null) {
        return { contents: [{ uri: request.params.uri, mimeType: 'application/json', text: JSON.stringify(value, null, 2) }] };
      }
    }
    if (!resource) throw new McpError(ErrorCode.InvalidParams, `Unknown resource: ${JSON.stringify(request.params.uri.slice(0, 200))}`);
    const text = JSON.stringify(resource.read(opts.tools, opts.services.config), null, 2);
    return { contents: [{ uri: resource.uri, mimeType: resource.mimeType, text }] };
  }));

  return server;
}
