/** delete_collection (REST only): the collection, its documents, chunks, jobs and index files go. */
import Type from 'typebox';
import { defineTool } from '../define-tool.ts';
import { CollectionName } from './kb-schemas.ts';
import { KB_ERRORS, kbOf } from './kb-access.ts';

export const deleteCollectionTool = defineTool({
  name: 'delete_collection',
  title: 'Delete a collection',
  description: 'Deletes a collection with all its documents, chunks, history and index files; its running jobs are cancelled. Cannot be undone.',
  group: 'knowledge_base',
  input: Type.Object({ name: CollectionName }, { additionalProperties: false }),
  output: Type.Object({
    name: Type.String(),
    documents: Type.Integer({ minimum: 0, description: 'Documents deleted' }),
    chunks: Type.Integer({ minimum: 0, description: 'Chunks deleted' }),
  }),
  timeoutClass: 'utility',
  rest: { method: 'DELETE', path: '/v1/collections/:name' },
  mcp: false,
  errors: KB_ERRORS,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  access: { action: 'admin', collection: 'name', what: 'delete collections' },
  async handler(input, ctx) {
    return kbOf(ctx).deleteCollection(input.name);
  },
});
