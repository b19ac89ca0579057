/**
 * The permission check of a tool call, from the tool's own declaration (ToolDefinition.access):
 * the same on REST, MCP over HTTP and MCP over stdio, because run-tool calls it for all of them.
 */
import type { AnyTool } from '../tools/define-tool.ts';
import { hasAnyAction, requireAction, requireCollection, type Principal } from './principal.ts';

/** Whether tools/list shows the tool to this key: it has the tool's base action. */
export function mayListTool(tool: AnyTool, p: Principal): boolean {
  return hasAnyAction(p, tool.access.action);
}

/** Throws NOT_FOUND (collection out of the key's scope) or FORBIDDEN (action missing). */
export function authorizeCall(tool: AnyTool, input: unknown, p: Principal): void {
  const access = tool.access;
  const needed = access.actionFor ? access.actionFor(input) : access.action;
  const field = access.collection;
  const collection = field && input !== null && typeof input === 'object' ? (input as Record<string, unknown>)[field] : undefined;
  if (typeof collection === 'string') requireCollection(p, collection, needed, access.what);
  else requireAction(p, needed, access.what);
}
