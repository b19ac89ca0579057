/**
 * search_collection: the retrieve_chunks pipeline (BM25, dense, RRF, rerank, diversity) over a
 * whole collection, with filters, the parent context of each hit and a confidence level.
 */
import Type from 'typebox';
import { defineTool } from '../define-tool.ts';
import { CollectionName, CollectionSearchRequestSchema, SearchResultSchema } from './kb-schemas.ts';
import { KB_ERRORS, kbOf, READ_ONLY } from './kb-access.ts';
import { toolError } from '../../errors.ts';

export const searchCollectionTool = defineTool({
  name: 'search_collection',
  title: 'Search a collection',
  description:
    'Searches every document of a knowledge-base collection with the same pipeline as retrieve_chunks (BM25, dense, hybrid RRF, reranking). ' +
    'Each hit names its document, page range and heading path; context "section" or "neighbors" adds the surrounding parent text for reading. ' +
    'confidence (high / medium / low / none) and message say plainly when nothing relevant was found. ' +
    'Filters: document ids, source prefix, content type, language, page range.',
  group: 'knowledge_base',
  // The request's schema is the contract's (the knowledge base and the console read the same type).
  input: Type.Object({ name: CollectionName, ...CollectionSearchRequestSchema.properties }, { additionalProperties: false }),
  output: SearchResultSchema,
  timeoutClass: 'extraction',
  rest: { method: 'POST', path: '/v1/collections/:name/search' },
  errors: [...KB_ERRORS, 'MODEL_UNAVAILABLE', 'INDEX_LOADING'],
  annotations: READ_ONLY,
  access: { action: 'search', collection: 'name', what: 'search collections' },
  async handler(input, ctx) {
    const { name, ...req } = input;
    const f = req.filters;
    if (f?.page_from !== undefined && f.page_to !== undefined && f.page_from > f.page_to) {
      throw toolError('VALIDATION_ERROR', `filters: page_from (${f.page_from}) is after page_to (${f.page_to})`);
    }
    return kbOf(ctx).search(name, req, { signal: ctx.signal });
  },
});
