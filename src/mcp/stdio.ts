/**
 * MCP over stdio: the same server as /mcp, speaking on stdin/stdout one message per line, each
 * line answered even when it is not a message (src/mcp/line-transport.ts). Nothing else may write
 * to stdout (logs go to stderr). Resolves when the client closes the connection or stdin ends.
 */
import type { Logger } from 'pino';
import type { Services } from '../services.ts';
import type { AnyTool } from '../tools/define-tool.ts';
import type { Principal } from '../auth/principal.ts';
import { connectMcp, createMcpServer } from './server.ts';
import { LineTransport } from './line-transport.ts';

export interface StdioOptions {
  tools: readonly AnyTool[];
  services: Services;
  log: Logger;
  /** The key of RAG_API_KEY when keys are configured; absent: full access (auth off). */
  principal?: Principal;
}

export interface StdioSession {
  /** Resolves when stdin closes or close() is called. */
  closed: Promise<void>;
  close(): Promise<void>;
}

export async function startStdio(opts: StdioOptions): Promise<StdioSession> {
  const server = createMcpServer({ ...opts, transport: 'stdio' });
  const transport = new LineTransport();
  // Transport and protocol troubles (a message the SDK could not route): the session goes on.
  server.onerror = (err) => opts.log.warn({ err, transport: 'stdio' }, 'MCP stdio error');
  const closed = new Promise<void>((resolve) => {
    server.onclose = () => resolve();
    // The client going away (the MCP Inspector exiting, a killed parent) ends or closes stdin:
    // the server must not outlive it.
    process.stdin.once('end', () => resolve());
    process.stdin.once('close', () => resolve());
  });
  await connectMcp(server, transport);
  opts.log.info({ event: 'server.start', transport: 'stdio', tools: opts.tools.length }, 'MCP stdio server ready');
  return { closed, close: () => server.close() };
}
