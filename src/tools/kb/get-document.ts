/** get_document (REST only): one document with its ingestion history. */
import Type from 'typebox';
import { defineTool } from '../define-tool.ts';
import { CollectionName, DocumentId, DocumentWithHistorySchema } from './kb-schemas.ts';
import { KB_ERRORS, kbOf, READ_ONLY } from './kb-access.ts';

export const getDocumentTool = defineTool({
  name: 'get_document',
  title: 'Get a document',
  description: 'One document of a collection with its ingestion history (ingested, skipped as unchanged, failed), newest last.',
  group: 'knowledge_base',
  input: Type.Object({ name: CollectionName, document_id: DocumentId }, { additionalProperties: false }),
  output: DocumentWithHistorySchema,
  timeoutClass: 'utility',
  rest: { method: 'GET', path: '/v1/collections/:name/documents/:document_id' },
  mcp: false,
  errors: KB_ERRORS,
  annotations: READ_ONLY,
  access: { action: 'search', collection: 'name', what: 'read documents' },
  async handler(input, ctx) {
    return kbOf(ctx).getDocument(input.name, input.document_id);
  },
});
