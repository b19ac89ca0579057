/**
 * MCP over stdio: one JSON-RPC message per line. Replaces the SDK's StdioServerTransport, which
 * drops a line that is not JSON without a word (the client waits forever) and closes the whole
 * connection when its buffer limit is passed. Here every line is answered: a message goes to the
 * server (which answers requests), anything else gets a JSON-RPC error — -32700 for a line that is
 * not JSON, too deep or too long, -32600 for JSON that is not a JSON-RPC message — and reading
 * goes on with the next line. Lines are bounded like HTTP bodies (src/json-limits.ts).
 */
import type { Readable, Writable } from 'node:stream';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, JSONRPCMessageSchema, type JSONRPCErrorResponse, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { jsonNestingExceeds, MAX_JSON_BODY_BYTES, MAX_JSON_BODY_LABEL, MAX_JSON_DEPTH } from '../json-limits.ts';

const NEWLINE = 0x0a;

export interface LineTransportOptions {
  input?: Readable;
  output?: Writable;
  /** Bytes a line may have (without its newline). */
  maxLineBytes?: number;
  maxLineLabel?: string;
}

function errorResponse(code: number, message: string, id: string | number | null = null): JSONRPCErrorResponse {
  // JSON-RPC answers a message whose id cannot be read with id null; the SDK's type has no null.
  return { jsonrpc: '2.0', id: id as string | number, error: { code, message } };
}

/** The id of a rejected message, when it has a usable one. */
function idOf(value: unknown): string | number | null {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return null;
  const id = (value as { id?: unknown }).id;
  return typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? id : null;
}

/** What the line means: a message for the server, or the error to answer it with. */
export function readLine(line: string): { message: JSONRPCMessage } | { error: JSONRPCErrorResponse } {
  const text = line.endsWith('\r') ? line.slice(0, -1) : line;
  if (text.trim() === '') return { error: errorResponse(ErrorCode.ParseError, 'Parse error: empty line; send one JSON-RPC message per line') };
  if (jsonNestingExceeds(text)) {
    return { error: errorResponse(ErrorCode.ParseError, `Parse error: the message nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels`) };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { error: errorResponse(ErrorCode.ParseError, 'Parse error: the line is not valid JSON; send one JSON-RPC message per line') };
  }
  if (Array.isArray(value)) return { error: errorResponse(ErrorCode.InvalidRequest, 'Invalid Request: batches are not supported over stdio; send one message per line') };
  const parsed = JSONRPCMessageSchema.safeParse(value);
  if (!parsed.success) {
    return { error: errorResponse(ErrorCode.InvalidRequest, 'Invalid Request: not a JSON-RPC 2.0 message (jsonrpc "2.0" with a method, or a result or error with an id)', idOf(value)) };
  }
  return { message: parsed.data };
}

export class LineTransport implements Transport {
  onmessage?: Transport['onmessage'];
  onerror?: Transport['onerror'];
  onclose?: Transport['onclose'];

  private readonly input: Readable;
  private readonly output: Writable;
  private readonly maxLineBytes: number;
  private readonly maxLineLabel: string;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** The current line passed the limit: its bytes are dropped up to the next newline. */
  private overflowed = false;
  private closed = false;

  constructor(opts: LineTransportOptions = {}) {
    this.input = opts.input ?? process.stdin;
    this.output = opts.output ?? process.stdout;
    this.maxLineBytes = opts.maxLineBytes ?? MAX_JSON_BODY_BYTES;
    this.maxLineLabel = opts.maxLineLabel ?? (opts.maxLineBytes === undefined ? MAX_JSON_BODY_LABEL : `${opts.maxLineBytes} bytes`);
  }

  async start(): Promise<void> {
    this.input.on('data', this.onData);
    this.input.on('error', this.onInputError);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.input.off('data', this.onData);
    this.input.off('error', this.onInputError);
    if (this.input.listenerCount('data') === 0) this.input.pause();
    this.pending = [];
    this.onclose?.();
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      if (this.output.write(`${JSON.stringify(message)}\n`)) resolve();
      else this.output.once('drain', resolve);
    });
  }

  private readonly onInputError = (err: Error) => this.onerror?.(err);

  private readonly onData = (chunk: Buffer | string) => {
    const data = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    let start = 0;
    for (let nl = data.indexOf(NEWLINE); nl !== -1; nl = data.indexOf(NEWLINE, start)) {
      this.append(data.subarray(start, nl));
      this.endLine();
      start = nl + 1;
    }
    if (start < data.length) this.append(data.subarray(start));
  };

  private append(part: Buffer): void {
    if (this.overflowed || part.length === 0) return;
    if (this.pendingBytes + part.length > this.maxLineBytes) {
      this.overflowed = true;
      this.pending = [];
      this.pendingBytes = 0;
      return;
    }
    this.pending.push(part);
    this.pendingBytes += part.length;
  }

  private endLine(): void {
    if (this.overflowed) {
      this.overflowed = false;
      this.reply(errorResponse(ErrorCode.ParseError, `Parse error: the line is longer than ${this.maxLineLabel}, the limit for one message`));
      return;
    }
    const line = Buffer.concat(this.pending, this.pendingBytes).toString('utf8');
    this.pending = [];
    this.pendingBytes = 0;
    const read = readLine(line);
    if ('error' in read) {
      this.reply(read.error);
      return;
    }
    try {
      this.onmessage?.(read.message);
    } catch (err) {
      // The server answers what it can; one message that throws must not stop the next lines.
      this.onerror?.(err as Error);
    }
  }

  private reply(response: JSONRPCErrorResponse): void {
    this.send(response).catch((err: Error) => this.onerror?.(err));
  }
}
