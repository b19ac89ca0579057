/** get_job: where an ingestion job stands, per document. */
import Type from 'typebox';
import { defineTool } from '../define-tool.ts';
import { JobId, JobSchema } from './kb-schemas.ts';
import { KB_ERRORS, kbOf, READ_ONLY } from './kb-access.ts';
import { requireJobVisible } from '../../auth/principal.ts';

export const getJobTool = defineTool({
  name: 'get_job',
  title: 'Get an ingestion job',
  description:
    'The state of an ingestion job: its status (queued, running, succeeded, partial, failed, cancelled), counts, ' +
    'and per document its stage, progress (pages, chunks embedded) and error. Call it again until the status is no longer queued or running.',
  group: 'knowledge_base',
  input: Type.Object({ job_id: JobId }, { additionalProperties: false }),
  output: JobSchema,
  timeoutClass: 'utility',
  rest: { method: 'GET', path: '/v1/jobs/:job_id' },
  errors: KB_ERRORS,
  annotations: READ_ONLY,
  access: { action: ['search', 'ingest'], what: 'read jobs' },
  async handler(input, ctx) {
    const job = kbOf(ctx).getJob(input.job_id);
    requireJobVisible(ctx.principal, job);
    return job;
  },
});
