/** cancel_job (REST only): stops a queued or running job; CONFLICT when it already ended. */
import Type from 'typebox';
import { defineTool } from '../define-tool.ts';
import { JobId, JobSchema } from './kb-schemas.ts';
import { KB_ERRORS, kbOf } from './kb-access.ts';
import { requireJobVisible } from '../../auth/principal.ts';

export const cancelJobTool = defineTool({
  name: 'cancel_job',
  title: 'Cancel an ingestion job',
  description:
    'Cancels a queued or running job: documents not yet committed are left as they were (cancelled), those already ingested stay. ' +
    'CONFLICT when the job already ended.',
  group: 'knowledge_base',
  input: Type.Object({ job_id: JobId }, { additionalProperties: false }),
  output: JobSchema,
  timeoutClass: 'utility',
  rest: { method: 'POST', path: '/v1/jobs/:job_id/cancel' },
  mcp: false,
  errors: [...KB_ERRORS, 'CONFLICT'],
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  access: { action: 'ingest', what: 'cancel jobs' },
  async handler(input, ctx) {
    const kb = kbOf(ctx);
    // Looked up first: a job of a collection the key may not see is NOT_FOUND, and stays running.
    requireJobVisible(ctx.principal, kb.getJob(input.job_id));
    return kb.cancelJob(input.job_id);
  },
});
