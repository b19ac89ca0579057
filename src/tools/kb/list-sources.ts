/** list_sources: a collection's sources with their settings and last sync (read-only; REST and MCP). */
import Type from 'typebox';
import { defineTool } from '../define-tool.ts';
import { CollectionName } from './kb-schemas.ts';
import { SourceListSchema } from '../../contract/source-schemas.ts';
import { READ_ONLY } from './kb-access.ts';
import { SOURCE_ERRORS, sourcesOf } from './source-access.ts';

export const listSourcesTool = defineTool({
  name: 'list_sources',
  title: 'List a collection\'s sources',
  description:
    'The sources a collection is kept in step with (folders, sites, URL lists): their settings, schedule, whether a sync runs now, ' +
    'and the last sync\'s status and counts (new, changed, unchanged, gone, failed, transient; requests and 304 answers). Start a sync with sync_source.',
  group: 'knowledge_base',
  input: Type.Object({ name: CollectionName }, { additionalProperties: false }),
  output: SourceListSchema,
  timeoutClass: 'utility',
  rest: { method: 'GET', path: '/v1/collections/:name/sources' },
  errors: SOURCE_ERRORS,
  annotations: READ_ONLY,
  access: { action: ['search', 'ingest'], collection: 'name', what: 'list sources' },
  async handler(input, ctx) {
    return sourcesOf(ctx).list(input.name);
  },
});
