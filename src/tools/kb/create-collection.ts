/** create_collection (REST only): POST /v1/collections -> 201 with the new, empty collection. */
import Type from 'typebox';
import { defineTool } from '../define-tool.ts';
import { CollectionName, CollectionSchema } from './kb-schemas.ts';
import { KB_ERRORS, kbOf } from './kb-access.ts';

export const createCollectionTool = defineTool({
  name: 'create_collection',
  title: 'Create a collection',
  description:
    'Creates an empty knowledge-base collection (a named, persistent set of documents searched together). ' +
    'CONFLICT when the name is taken. ingest_documents also creates a missing collection.',
  group: 'knowledge_base',
  input: Type.Object(
    {
      name: CollectionName,
      description: Type.Optional(Type.String({ maxLength: 1000, description: 'What the collection holds, for people' })),
    },
    { additionalProperties: false },
  ),
  output: CollectionSchema,
  timeoutClass: 'utility',
  rest: { method: 'POST', path: '/v1/collections', status: 201 },
  mcp: false,
  errors: [...KB_ERRORS, 'CONFLICT'],
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  async handler(input, ctx) {
    return kbOf(ctx).createCollection(input.name, input.description ?? null);
  },
});
