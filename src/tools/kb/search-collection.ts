/**
 * search_collection: the retrieve_chunks pipeline (BM25, dense, RRF, rerank, diversity) over a
 * whole collection, with filters, the parent context of each hit and a confidence level.
 */
import Type from 'typebox';
import { defineTool } from '../define-tool.ts';
import { ContentTypeSchema, RetrievalModeSchema } from '../../retrieval/schemas.ts';
import { DEFAULT_TOP_K } from '../../retrieval/contracts.ts';
import { COLLECTION_MAX_TOP_K } from '../../kb/collection-search.ts';
import { CollectionName, DocumentId, SearchResultSchema } from './kb-schemas.ts';
import { KB_ERRORS, kbOf, READ_ONLY } from './kb-access.ts';
import { toolError } from '../../errors.ts';

const Filters = Type.Object(
  {
    document_ids: Type.Optional(Type.Array(DocumentId, { minItems: 1, maxItems: 500, description: 'Only these documents' })),
    source_prefix: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, description: 'Only documents whose source starts with this (a URL prefix or a folder)' })),
    content_type: Type.Optional(Type.Array(ContentTypeSchema, { minItems: 1, uniqueItems: true, description: 'Only chunks of these kinds' })),
    language: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 16 }), { minItems: 1, maxItems: 16, description: 'Only documents in these languages (e.g. "en")' })),
    page_from: Type.Optional(Type.Integer({ minimum: 1, description: 'Only chunks ending on or after this page' })),
    page_to: Type.Optional(Type.Integer({ minimum: 1, description: 'Only chunks starting on or before this page' })),
  },
  { additionalProperties: false, description: 'Narrow the search; all given filters apply together' },
);

export const searchCollectionTool = defineTool({
  name: 'search_collection',
  title: 'Search a collection',
  description:
    'Searches every document of a knowledge-base collection with the same pipeline as retrieve_chunks (BM25, dense, hybrid RRF, reranking). ' +
    'Each hit names its document, page range and heading path; context "section" or "neighbors" adds the surrounding parent text for reading. ' +
    'confidence (high / medium / low / none) and message say plainly when nothing relevant was found. ' +
    'Filters: document ids, source prefix, content type, language, page range.',
  group: 'knowledge_base',
  input: Type.Object(
    {
      name: CollectionName,
      query: Type.String({ minLength: 1, maxLength: 2000, description: 'What to look for, in words' }),
      top_k: Type.Optional(Type.Integer({ minimum: 1, maximum: COLLECTION_MAX_TOP_K, default: DEFAULT_TOP_K, description: `Results to return (1-${COLLECTION_MAX_TOP_K}, default ${DEFAULT_TOP_K})` })),
      mode: Type.Optional(RetrievalModeSchema),
      rerank: Type.Optional(Type.Boolean({ description: 'Rerank candidates with the cross-encoder when it is available (default true)' })),
      explain: Type.Optional(Type.Boolean({ description: 'Add a per-stage trace of every candidate (default false)' })),
      filters: Type.Optional(Filters),
      context: Type.Optional(
        Type.Union([Type.Literal('none'), Type.Literal('section'), Type.Literal('neighbors')], {
          description: 'Parent text per hit: none (default), section (its heading section) or neighbors (adjacent chunks)',
        }),
      ),
      context_chars: Type.Optional(Type.Integer({ minimum: 100, maximum: 8000, description: 'Characters of context per hit (default 2000)' })),
      group_by: Type.Optional(
        Type.Union([Type.Literal('chunk'), Type.Literal('document')], {
          description: 'chunk (default): the best chunks; document: each document once (its best chunk), top_k counted in documents',
        }),
      ),
      min_confidence: Type.Optional(
        Type.Union([Type.Literal('none'), Type.Literal('low'), Type.Literal('medium'), Type.Literal('high')], {
          description: "Return results only at or above this confidence (default low: a 'none' answer has no results; none: always return the best matches)",
        }),
      ),
    },
    { additionalProperties: false },
  ),
  output: SearchResultSchema,
  timeoutClass: 'extraction',
  rest: { method: 'POST', path: '/v1/collections/:name/search' },
  errors: [...KB_ERRORS, 'MODEL_UNAVAILABLE'],
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
