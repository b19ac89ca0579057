/** list_collections: every collection with its statistics (GET /v1/collections). */
import Type from 'typebox';
import { defineTool } from '../define-tool.ts';
import { CollectionListSchema } from './kb-schemas.ts';
import { KB_ERRORS, kbOf, READ_ONLY } from './kb-access.ts';
import { maySeeCollection } from '../../auth/principal.ts';

export const listCollectionsTool = defineTool({
  name: 'list_collections',
  title: 'List collections',
  description: 'Lists the knowledge-base collections with their statistics (documents by status, chunks, bytes, pages, languages, types): those the API key may see.',
  group: 'knowledge_base',
  input: Type.Object({}, { additionalProperties: false }),
  output: CollectionListSchema,
  timeoutClass: 'utility',
  rest: { method: 'GET', path: '/v1/collections' },
  errors: KB_ERRORS,
  annotations: READ_ONLY,
  access: { action: 'search', what: 'list collections' },
  async handler(_input, ctx) {
    return { collections: kbOf(ctx).listCollections().filter((c) => maySeeCollection(ctx.principal, c.name)) };
  },
});
