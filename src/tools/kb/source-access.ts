/** How the source tools reach the sources: only through ctx.services.sources (src/kb/sources/source-service.ts). */
import type { ToolContext } from '../define-tool.ts';
import type { SourceService } from '../../kb/sources/source-service.ts';
import type { ErrorCode } from '../../errors.ts';
import { KB_ERRORS } from './kb-access.ts';

export function sourcesOf(ctx: Pick<ToolContext, 'services'>): SourceService {
  return ctx.services.sources;
}

/** What the source tools answer beyond the generic codes: the knowledge base's, a sync already running (CONFLICT), a refused folder or URL. */
export const SOURCE_ERRORS: readonly ErrorCode[] = [...KB_ERRORS, 'CONFLICT', 'URL_NOT_ALLOWED'];
