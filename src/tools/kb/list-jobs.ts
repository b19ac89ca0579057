/** list_jobs (REST only): ingestion jobs, newest first, filtered by collection and status. */
import Type from 'typebox';
import { defineTool } from '../define-tool.ts';
import { CollectionName, JobSchema, JobStatusSchema, Limit, Offset, PageOf } from './kb-schemas.ts';
import { KB_ERRORS, kbOf, READ_ONLY } from './kb-access.ts';

export const listJobsTool = defineTool({
  name: 'list_jobs',
  title: 'List ingestion jobs',
  description: 'Ingestion jobs in pages, optionally only those of one collection or with one status.',
  group: 'knowledge_base',
  input: Type.Object(
    {
      collection: Type.Optional(CollectionName),
      status: Type.Optional(JobStatusSchema),
      offset: Type.Optional(Offset),
      limit: Type.Optional(Limit(200, 50)),
    },
    { additionalProperties: false },
  ),
  output: PageOf(JobSchema, 'A page of jobs'),
  timeoutClass: 'utility',
  rest: { method: 'GET', path: '/v1/jobs' },
  mcp: false,
  errors: KB_ERRORS,
  annotations: READ_ONLY,
  async handler(input, ctx) {
    return kbOf(ctx).listJobs(input);
  },
});
