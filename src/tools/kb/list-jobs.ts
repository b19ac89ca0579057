/** list_jobs (REST only): ingestion jobs, newest first, filtered by collection and status. */
import Type from 'typebox';
import { defineTool } from '../define-tool.ts';
import { CollectionName, JobSchema, JobStatusSchema, Limit, Offset, PageOf } from './kb-schemas.ts';
import { KB_ERRORS, kbOf, READ_ONLY } from './kb-access.ts';
import { maySeeCollection, seesAllCollections } from '../../auth/principal.ts';

export const listJobsTool = defineTool({
  name: 'list_jobs',
  title: 'List ingestion jobs',
  description: 'Ingestion jobs in pages, optionally only those of one collection or with one status; only jobs of collections the API key may see.',
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
  access: { action: ['search', 'ingest'], collection: 'collection', what: 'list jobs' },
  async handler(input, ctx) {
    const kb = kbOf(ctx);
    if (seesAllCollections(ctx.principal) || input.collection !== undefined) return kb.listJobs(input);
    // Filtered in SQL, so totals and pages count only the jobs this key may see.
    const visible = kb.listCollections().map((c) => c.name).filter((name) => maySeeCollection(ctx.principal, name));
    return kb.listJobs({ ...input, collections: visible });
  },
});
