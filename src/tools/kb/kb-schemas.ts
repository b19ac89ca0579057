// Moved to src/contract (the wire contract shared with the console); kept so the tools' imports stay put.
export * from '../../contract/kb-schemas.ts';

import Type from 'typebox';
import { JobSchema as ContractJobSchema } from '../../contract/kb-schemas.ts';

/**
 * The job with the walk of its folders (issue 22, folders of any size), added here beside the
 * contract's JobSchema (a local export wins over the re-export above), so every tool and route
 * that answers a job says how far its folders are walked. Additive: jobs without folders lack it.
 */
export const JobEnumerationSchema = Type.Object(
  {
    state: Type.Union([Type.Literal('walking'), Type.Literal('complete'), Type.Literal('stopped')], {
      description:
        'walking: the folders are still being walked, more items are to come (counts.total grows); complete: every file was found; stopped: the walk ended early (the job was cancelled, or a part of the walk failed: see the failed item)',
    }),
    files_found: Type.Integer({ minimum: 0, description: 'Files the walk found so far (items made from them)' }),
  },
  {
    description:
      'Jobs that name folders: the folders are walked in parts as the job drains, so INGEST_QUEUE_MAX bounds the documents waiting at once, not the size of a folder',
  },
);

export const JobSchema = Type.Object(
  { ...ContractJobSchema.properties, enumeration: Type.Optional(JobEnumerationSchema) },
  { description: 'An ingestion job: one item per document, with its stage and progress' },
);
