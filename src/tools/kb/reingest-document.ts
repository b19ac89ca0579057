/** reingest_document (REST only): a job that ingests the document's source again -> 202. */
import Type from 'typebox';
import { defineTool } from '../define-tool.ts';
import { CollectionName, DocumentId, JobSchema } from './kb-schemas.ts';
import { KB_ERRORS, kbOf } from './kb-access.ts';

export const reingestDocumentTool = defineTool({
  name: 'reingest_document',
  title: 'Re-ingest a document',
  description:
    'Starts a job that downloads or reads the document\'s source again and replaces its chunks, even when the content is unchanged ' +
    '(URL and path sources; an upload has to be sent again with ingest_documents). Answers 202 with the job: follow it with get_job or GET /v1/jobs/{job_id}/events.',
  group: 'knowledge_base',
  input: Type.Object({ name: CollectionName, document_id: DocumentId }, { additionalProperties: false }),
  output: JobSchema,
  timeoutClass: 'utility',
  rest: { method: 'POST', path: '/v1/collections/:name/documents/:document_id/reingest', status: 202 },
  mcp: false,
  errors: [...KB_ERRORS, 'VALIDATION_ERROR', 'OVERLOADED', 'QUEUE_UNAVAILABLE'],
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  access: { action: 'ingest', collection: 'name', what: 're-ingest documents' },
  async handler(input, ctx) {
    return kbOf(ctx).reingestDocument(input.name, input.document_id);
  },
});
