/** create_collection (REST only): POST /v1/collections -> 201 with the new, empty collection. */
import Type from 'typebox';
import { defineTool } from '../define-tool.ts';
import { CollectionName, CollectionSchema } from './kb-schemas.ts';
import { KB_ERRORS, kbOf } from './kb-access.ts';
import { MAX_CHUNK_SIZE, MAX_DESCRIPTION_CHARS, MIN_CHUNK_SIZE } from '../../kb/types.ts';

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
      description: Type.Optional(Type.String({ maxLength: MAX_DESCRIPTION_CHARS, description: `What the collection holds, for people (at most ${MAX_DESCRIPTION_CHARS} characters)` })),
      chunk_size: Type.Optional(
        Type.Integer({ minimum: MIN_CHUNK_SIZE, maximum: MAX_CHUNK_SIZE, description: `Chunk size in characters for every document (${MIN_CHUNK_SIZE}-${MAX_CHUNK_SIZE}); default: adaptive per format` }),
      ),
    },
    { additionalProperties: false },
  ),
  output: CollectionSchema,
  timeoutClass: 'utility',
  rest: { method: 'POST', path: '/v1/collections', status: 201 },
  mcp: false,
  errors: [...KB_ERRORS, 'CONFLICT'],
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  access: { action: 'admin', collection: 'name', what: 'create collections' },
  async handler(input, ctx) {
    return kbOf(ctx).createCollection(input.name, input.description ?? null, input.chunk_size !== undefined ? { chunk_size: input.chunk_size } : {});
  },
});
