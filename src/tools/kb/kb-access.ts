/**
 * How the knowledge-base tools reach the facade: only through ctx.services.kb (KnowledgeBaseApi),
 * never the store or the indexes, so REST, MCP and the SSE route see the same behaviour.
 */
import type { KnowledgeBaseApi } from '../../kb/types.ts';
import type { ToolContext } from '../define-tool.ts';
import type { ErrorCode } from '../../errors.ts';

export function kbOf(ctx: Pick<ToolContext, 'services'>): KnowledgeBaseApi {
  return ctx.services.kb;
}

/**
 * What every knowledge-base tool can answer beyond the generic codes. NATIVE_ADDON_MISMATCH: its
 * SQLite addon was built for another Node.js (src/native-addons.ts).
 */
export const KB_ERRORS: readonly ErrorCode[] = ['NOT_FOUND', 'STORAGE_UNAVAILABLE', 'NATIVE_ADDON_MISMATCH'];

export const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;
