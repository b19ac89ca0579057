/**
 * Checks each JSON-RPC request's params against the SDK's own schema for its method before the
 * SDK sees it, and answers a mismatch with -32602 (invalid params) naming the field. Left to the
 * SDK, a malformed request (tools/call with a numeric name, arguments that are not an object)
 * surfaces as -32603 with zod's raw multi-line issue dump. Used by both transports (HTTP, stdio).
 */
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  InitializeRequestSchema,
  isJSONRPCRequest,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  PingRequestSchema,
  ReadResourceRequestSchema,
  type JSONRPCErrorResponse,
  type JSONRPCMessage,
} from '@modelcontextprotocol/sdk/types.js';
import { isStackOverflow, MAX_JSON_DEPTH } from '../json-limits.ts';

interface Checkable {
  safeParse(value: unknown): { success: true } | { success: false; error: { issues: readonly { path: readonly PropertyKey[]; message: string }[] } };
}

/** The methods this server answers (src/mcp/server.ts and the SDK's built-ins). */
const REQUEST_SCHEMAS: ReadonlyMap<string, Checkable> = new Map<string, Checkable>([
  ['initialize', InitializeRequestSchema],
  ['ping', PingRequestSchema],
  ['tools/list', ListToolsRequestSchema],
  ['tools/call', CallToolRequestSchema],
  ['resources/list', ListResourcesRequestSchema],
  ['resources/read', ReadResourceRequestSchema],
]);

/** "params.name: expected string, received number" — the first issue, field first. */
function describeIssue(issue: { path: readonly PropertyKey[]; message: string }): string {
  const where = issue.path.map(String).join('.') || 'params';
  const text = issue.message.replace(/^Invalid input:\s*/i, '').replace(/\bexpected record\b/, 'expected object');
  return `${where}: ${text}`.slice(0, 300);
}

/** The -32602 answer for a request whose params do not fit its method, or null when they do. */
export function invalidParamsResponse(message: JSONRPCMessage): JSONRPCErrorResponse | null {
  if (!isJSONRPCRequest(message)) return null;
  const schema = REQUEST_SCHEMAS.get(message.method);
  if (!schema) return null;
  let problem: string;
  try {
    const parsed = schema.safeParse(message);
    if (parsed.success) return null;
    const issue = parsed.error.issues[0];
    problem = issue ? describeIssue(issue) : 'params do not match the method';
  } catch (err) {
    // The transports bound nesting first (src/json-limits.ts); this is the backstop.
    if (!isStackOverflow(err)) throw err;
    problem = `nested too deeply (at most ${MAX_JSON_DEPTH} levels)`;
  }
  return { jsonrpc: '2.0', id: message.id, error: { code: ErrorCode.InvalidParams, message: `Invalid params for ${message.method}: ${problem}` } };
}

/**
 * A transport that hands the server only requests whose params fit, answering the others itself.
 * The server is connected to the returned transport; the caller keeps driving the inner one.
 */
export function screenRequests(inner: Transport): Transport {
  const outer: Transport = {
    start: () => inner.start(),
    send: (message, options) => inner.send(message, options),
    close: () => inner.close(),
    get sessionId() {
      return inner.sessionId;
    },
    setProtocolVersion: (version) => inner.setProtocolVersion?.(version),
  };
  inner.onmessage = (message, extra) => {
    const refusal = invalidParamsResponse(message);
    if (refusal) inner.send(refusal).catch((err: Error) => outer.onerror?.(err));
    else outer.onmessage?.(message, extra);
  };
  inner.onclose = () => outer.onclose?.();
  inner.onerror = (err) => outer.onerror?.(err);
  return outer;
}
