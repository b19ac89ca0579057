/** list_documents: a collection's documents, paged and filtered (GET /v1/collections/:name/documents). */
import Type from 'typebox';
import { defineTool } from '../define-tool.ts';
import { CollectionName, DocumentSchema, DocumentStatusSchema, Limit, Offset, PageOf } from './kb-schemas.ts';
import { KB_ERRORS, kbOf, READ_ONLY } from './kb-access.ts';

export const listDocumentsTool = defineTool({
  name: 'list_documents',
  title: 'List documents',
  description:
    'Lists the documents of a collection with their status (pending, ready, failed), type, title, pages, language and chunk count, ' +
    'in pages (offset, limit; next_offset is null at the end), optionally filtered by status, source prefix, type or language.',
  group: 'knowledge_base',
  input: Type.Object(
    {
      name: CollectionName,
      offset: Type.Optional(Offset),
      limit: Type.Optional(Limit(500, 50)),
      status: Type.Optional(DocumentStatusSchema),
      source_prefix: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, description: 'Only sources starting with this (a URL prefix or a folder)' })),
      type: Type.Optional(Type.String({ minLength: 1, maxLength: 32, description: 'Document kind, e.g. "pdf"' })),
      language: Type.Optional(Type.String({ minLength: 1, maxLength: 16, description: 'Detected language code, e.g. "en"' })),
    },
    { additionalProperties: false },
  ),
  output: PageOf(DocumentSchema, 'A page of documents'),
  timeoutClass: 'utility',
  rest: { method: 'GET', path: '/v1/collections/:name/documents' },
  errors: KB_ERRORS,
  annotations: READ_ONLY,
  access: { action: 'search', collection: 'name', what: 'list documents' },
  async handler(input, ctx) {
    const { name, ...q } = input;
    return kbOf(ctx).listDocuments(name, q);
  },
});
