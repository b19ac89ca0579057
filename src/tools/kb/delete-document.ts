/** delete_document: one document and its chunks leave the collection and its indexes. */
import Type from 'typebox';
import { defineTool } from '../define-tool.ts';
import { CollectionName, DocumentId } from './kb-schemas.ts';
import { KB_ERRORS, kbOf } from './kb-access.ts';
import { CONFIRM_HINT, ConfirmField } from '../confirm-field.ts';

export const deleteDocumentTool = defineTool({
  name: 'delete_document',
  title: 'Delete a document',
  description: 'Deletes one document from a collection: its chunks leave the store and both indexes at once, so searches stop returning it. Cannot be undone. ' +
    CONFIRM_HINT,
  group: 'knowledge_base',
  input: Type.Object({ name: CollectionName, document_id: DocumentId, confirm: ConfirmField }, { additionalProperties: false }),
  output: Type.Object({ document_id: Type.String(), chunks: Type.Integer({ minimum: 0, description: 'Chunks deleted' }) }),
  timeoutClass: 'utility',
  rest: { method: 'DELETE', path: '/v1/collections/:name/documents/:document_id' },
  errors: KB_ERRORS,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  access: { action: 'delete', collection: 'name', what: 'delete documents' },
  async handler(input, ctx) {
    return kbOf(ctx).deleteDocument(input.name, input.document_id);
  },
});
