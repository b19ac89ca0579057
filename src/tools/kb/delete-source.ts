/** delete_source (REST only): detaches a source; its documents stay in the collection. */
import Type from 'typebox';
import { defineTool } from '../define-tool.ts';
import { CollectionName } from './kb-schemas.ts';
import { SourceId } from '../../contract/source-schemas.ts';
import { SOURCE_ERRORS, sourcesOf } from './source-access.ts';

export const deleteSourceTool = defineTool({
  name: 'delete_source',
  title: 'Remove a source',
  description:
    'Removes a source from its collection (a sync of it that runs is cancelled first). Its documents stay in the collection and are no longer kept in step; ' +
    'delete them with delete_document, or the collection, to remove them too.',
  group: 'knowledge_base',
  input: Type.Object({ name: CollectionName, source_id: SourceId }, { additionalProperties: false }),
  output: Type.Object({ id: Type.String(), removed: Type.Literal(true) }),
  timeoutClass: 'utility',
  rest: { method: 'DELETE', path: '/v1/collections/:name/sources/:source_id' },
  mcp: false,
  errors: SOURCE_ERRORS,
  // Destructive: the source's settings, schedule and sync history are gone (its documents stay).
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  access: { action: 'delete', collection: 'name', what: 'remove sources' },
  async handler(input, ctx) {
    return sourcesOf(ctx).remove(input.name, input.source_id);
  },
});
