/**
 * Destructive MCP calls (tools annotated destructiveHint; of manage_cache only "clear") run only
 * once confirmed. A client that declared the elicitation capability is asked through
 * elicitation/create, and the call proceeds only when the user accepts with confirm = true. Any
 * other client must pass confirm: true itself, which the tool descriptions say. The model may set
 * confirm on its own, so a client that can ask the user is always asked.
 *
 * Over /mcp (stateless: a fresh server per HTTP request, no initialize on it) the server never
 * knows the client's capabilities, and a client's answer to a server request would reach another
 * server instance: there confirm: true is the way. Over stdio the session carries both.
 */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { AnyTool } from '../tools/define-tool.ts';

/** How long the user has to answer the prompt. */
export const CONFIRM_TIMEOUT_MS = 5 * 60_000;

export function isDestructiveCall(tool: AnyTool, input: unknown): boolean {
  if (!tool.annotations.destructiveHint || tool.annotations.readOnlyHint) return false;
  return tool.destructiveCall ? tool.destructiveCall(input) : true;
}

/** What the prompt says: the tool and the arguments that name what goes. */
function promptFor(tool: AnyTool, input: Record<string, unknown>): string {
  const { confirm: _confirm, ...args } = input;
  return `${tool.title}: ${tool.name} ${JSON.stringify(args)}. This cannot be undone. Confirm?`;
}

/**
 * null when the call may proceed; otherwise why not (the CONFIRMATION_REQUIRED message).
 * `relatedRequestId` ties the prompt to the call, so it travels on the call's own stream.
 */
export async function confirmDestructive(
  server: Server,
  tool: AnyTool,
  input: Record<string, unknown>,
  opts: { signal: AbortSignal; relatedRequestId: string | number },
): Promise<string | null> {
  if (!server.getClientCapabilities()?.elicitation?.form) {
    return input.confirm === true ? null : `${tool.name} destroys data: the client cannot be asked to confirm, so call it again with "confirm": true`;
  }
  let answer: Awaited<ReturnType<Server['elicitInput']>>;
  try {
    answer = await server.elicitInput(
      {
        mode: 'form',
        message: promptFor(tool, input),
        requestedSchema: {
          type: 'object',
          properties: { confirm: { type: 'boolean', title: 'Yes, go ahead', description: `Run ${tool.name}`, default: false } },
          required: ['confirm'],
        },
      },
      { signal: opts.signal, timeout: CONFIRM_TIMEOUT_MS, relatedRequestId: opts.relatedRequestId },
    );
  } catch (err) {
    return `${tool.name} was not confirmed: the confirmation prompt failed (${(err as Error).message.slice(0, 200)}); nothing was changed`;
  }
  if (answer.action === 'accept' && answer.content?.confirm === true) return null;
  const how = answer.action === 'accept' ? 'accepted without confirming' : answer.action === 'decline' ? 'declined' : 'cancelled';
  return `${tool.name} was not confirmed: the user ${how} the prompt; nothing was changed`;
}
