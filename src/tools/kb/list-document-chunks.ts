/** list_document_chunks (REST only): a document's chunks in order, paged. */
import Type from 'typebox';
import { defineTool } from '../define-tool.ts';
import { ChunkSchema, CollectionName, DocumentId, Limit, Offset, PageOf } from './kb-schemas.ts';
import { KB_ERRORS, kbOf, READ_ONLY } from './kb-access.ts';

export const listDocumentChunksTool = defineTool({
  name: 'list_document_chunks',
  title: 'List the chunks of a document',
  description: 'The chunks of one document as stored (text, page range, heading path, offsets, content type), in order, in pages.',
  group: 'knowledge_base',
  input: Type.Object(
    { name: CollectionName, document_id: DocumentId, offset: Type.Optional(Offset), limit: Type.Optional(Limit(200, 50)) },
    { additionalProperties: false },
  ),
  output: PageOf(ChunkSchema, 'A page of chunks'),
  timeoutClass: 'utility',
  rest: { method: 'GET', path: '/v1/collections/:name/documents/:document_id/chunks' },
  mcp: false,
  errors: KB_ERRORS,
  annotations: READ_ONLY,
  access: { action: 'search', collection: 'name', what: 'read documents' },
  async handler(input, ctx) {
    return kbOf(ctx).documentChunks(input.name, input.document_id, { offset: input.offset, limit: input.limit });
  },
});
