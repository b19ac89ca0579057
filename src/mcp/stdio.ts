/**
 * MCP over stdio: the same server as /mcp, speaking on stdin/stdout. Nothing else may write to
 * stdout (logs go to stderr). Resolves when the client closes the connection or stdin ends.
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { Logger } from 'pino';
import type { Services } from '../services.ts';
import type { AnyTool } from '../tools/define-tool.ts';
import { createMcpServer } from './server.ts';

export interface StdioOptions {
  tools: readonly AnyTool[];
  services: Services;
  log: Logger;
}

export interface StdioSession {
  /** Resolves when stdin closes or close() is called. */
  closed: Promise<void>;
  close(): Promise<void>;
}

export async function startStdio(opts: StdioOptions): Promise<StdioSession> {
  const server = createMcpServer({ ...opts, transport: 'stdio' });
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    server.onclose = () => resolve();
    // The client going away (the MCP Inspector exiting, a killed parent) ends or closes stdin:
    // the server must not outlive it.
    process.stdin.once('end', () => resolve());
    process.stdin.once('close', () => resolve());
  });
  await server.connect(transport);
  opts.log.info({ event: 'server.start', transport: 'stdio', tools: opts.tools.length }, 'MCP stdio server ready');
  return { closed, close: () => server.close() };
}
