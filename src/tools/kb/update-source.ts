/** update_source (REST only, PATCH): changes a source's settings, schedule or watching; the next sync applies them. */
import Type from 'typebox';
import { defineTool } from '../define-tool.ts';
import { CollectionName } from './kb-schemas.ts';
import { SourceFields, SourceId, SourceSchema } from '../../contract/source-schemas.ts';
import { SOURCE_ERRORS, sourcesOf } from './source-access.ts';

export const updateSourceTool = defineTool({
  name: 'update_source',
  title: 'Change a source',
  description:
    'Changes the settings of a source (the fields of its kind), its schedule (sync_every; null: none) or, for folders, watch. ' +
    'The kind cannot change. The next sync applies the change: documents the new settings leave out are deleted then.',
  group: 'knowledge_base',
  input: Type.Object({ name: CollectionName, source_id: SourceId, ...SourceFields }, { additionalProperties: false }),
  output: SourceSchema,
  timeoutClass: 'utility',
  rest: { method: 'PATCH', path: '/v1/collections/:name/sources/:source_id' },
  mcp: false,
  errors: SOURCE_ERRORS,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  access: { action: 'ingest', collection: 'name', what: 'change sources' },
  async handler(input, ctx) {
    const { name, source_id, ...fields } = input;
    return sourcesOf(ctx).update(name, source_id, fields);
  },
});
