/** get_collection (REST only): one collection with its statistics. */
import Type from 'typebox';
import { defineTool } from '../define-tool.ts';
import { CollectionName, CollectionSchema } from './kb-schemas.ts';
import { KB_ERRORS, kbOf, READ_ONLY } from './kb-access.ts';

export const getCollectionTool = defineTool({
  name: 'get_collection',
  title: 'Get a collection',
  description: 'One collection with its statistics. NOT_FOUND when there is none of that name.',
  group: 'knowledge_base',
  input: Type.Object({ name: CollectionName }, { additionalProperties: false }),
  output: CollectionSchema,
  timeoutClass: 'utility',
  rest: { method: 'GET', path: '/v1/collections/:name' },
  mcp: false,
  errors: KB_ERRORS,
  annotations: READ_ONLY,
  access: { action: 'search', collection: 'name', what: 'read collections' },
  async handler(input, ctx) {
    return kbOf(ctx).getCollection(input.name);
  },
});
