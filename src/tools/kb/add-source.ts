/**
 * add_source: attaches a folder, a site or a list of URLs to a collection (created when missing)
 * and starts its first sync. Over MCP a site may be added only with SOURCES_MCP_ADD_SITE on.
 */
import { defineTool } from '../define-tool.ts';
import { AddSourceInputSchema, SourceSchema } from '../../contract/source-schemas.ts';
import { SOURCE_ERRORS, sourcesOf } from './source-access.ts';

export const addSourceTool = defineTool({
  name: 'add_source',
  title: 'Add a source to a collection',
  description:
    'Attaches a source to a collection (created when missing) and, unless sync is false, starts its first sync in the background: ' +
    'kind "folder" (path: an absolute folder inside ALLOWED_DIRS, include/exclude globs, watch: sync on file change, default true), ' +
    'kind "urls" (urls: a fixed list), or kind "site" (start_url, scope host | prefix | {prefixes}, max_depth, max_pages, max_bytes, include/exclude URL globs, sitemap; ' +
    'over MCP only when the server enables SOURCES_MCP_ADD_SITE). sync_every: seconds between scheduled syncs. ' +
    'A sync ingests new and changed documents, skips unchanged ones (content hash; URLs by conditional requests), and deletes documents whose file or page is gone; ' +
    'transient failures never delete. Follow it with list_sources.',
  group: 'knowledge_base',
  input: AddSourceInputSchema,
  output: SourceSchema,
  timeoutClass: 'utility',
  rest: { method: 'POST', path: '/v1/collections/:name/sources', status: 201 },
  errors: [...SOURCE_ERRORS, 'FORBIDDEN'],
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  access: { action: 'ingest', collection: 'name', what: 'add sources' },
  async handler(input, ctx) {
    const { name, sync, ...fields } = input;
    return sourcesOf(ctx).add(name, fields, { ...(ctx.transport ? { transport: ctx.transport } : {}), ...(sync !== undefined ? { sync } : {}) });
  },
});
