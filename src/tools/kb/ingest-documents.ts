/**
 * ingest_documents: adds documents (URLs, local paths inside ALLOWED_DIRS or the client's roots,
 * or an uploaded file) to a collection, creating it when missing, as a background job. REST
 * answers 202 with the job at once (or after wait_seconds); MCP waits up to wait_seconds (default
 * 20) for the job to end, relaying its progress as notifications/progress when the client sent a
 * progressToken, then returns the job, ended or not, with a hint to follow it with get_job.
 */
import Type from 'typebox';
import { defineTool } from '../define-tool.ts';
import { toolError } from '../../errors.ts';
import { toolTimeoutMs } from '../run-tool.ts';
import { DocumentUrl, OcrFields, ocrRequestOf } from '../schemas/documents.ts';
import type { JobEvent, JobRecord } from '../../kb/types.ts';
import { CollectionName, JobSchema } from './kb-schemas.ts';
import { KB_ERRORS, kbOf } from './kb-access.ts';

export const MAX_WAIT_SECONDS = 120;
export const MCP_DEFAULT_WAIT_SECONDS = 20;
const ENDED = new Set<JobRecord['status']>(['succeeded', 'partial', 'failed', 'cancelled']);

const Glob = Type.String({ minLength: 1, maxLength: 512 });

export const ingestDocumentsTool = defineTool({
  name: 'ingest_documents',
  title: 'Ingest documents into a collection',
  description:
    'Adds documents to a knowledge-base collection as a background job, creating the collection when it does not exist: ' +
    'http(s) URLs, local files or folders (paths inside ALLOWED_DIRS, or over stdio the MCP client\'s roots when ALLOWED_DIRS is unset; ' +
    'folders are walked recursively, filtered by include/exclude globs), or over REST an uploaded file (multipart field "file"). ' +
    'Each document is downloaded, extracted (with OCR), chunked, embedded and indexed; unchanged content (same SHA-256) is skipped, ' +
    'and changed content replaces the older version of that source. ' +
    `Waits up to wait_seconds (MCP default ${MCP_DEFAULT_WAIT_SECONDS}, REST default 0, at most ${MAX_WAIT_SECONDS}) and returns the job, ended or not; ` +
    'follow it with get_job (REST: GET /v1/jobs/{job_id} or the SSE stream /v1/jobs/{job_id}/events). ' +
    'MCP clients that send a progressToken get notifications/progress while it waits.',
  group: 'knowledge_base',
  input: Type.Object(
    {
      name: CollectionName,
      urls: Type.Optional(Type.Array(DocumentUrl, { minItems: 1, maxItems: 100, description: 'http(s) URLs of documents (at most 100)' })),
      paths: Type.Optional(
        Type.Array(Type.String({ minLength: 1, maxLength: 4096 }), {
          minItems: 1,
          maxItems: 100,
          description: 'Absolute local files or folders inside ALLOWED_DIRS (or the MCP client\'s roots); folders are walked recursively',
        }),
      ),
      include: Type.Optional(Type.Array(Glob, { minItems: 1, maxItems: 32, examples: [['**/*.pdf']], description: 'Globs a file under a folder must match, relative to that folder (e.g. "**/*.pdf")' })),
      exclude: Type.Optional(Type.Array(Glob, { minItems: 1, maxItems: 32, examples: [['drafts/**']], description: 'Globs of files to leave out (e.g. "drafts/**")' })),
      ...OcrFields,
      wait_seconds: Type.Optional(
        Type.Integer({
          minimum: 0,
          maximum: MAX_WAIT_SECONDS,
          examples: [10],
          description: `Seconds to wait for the job to end before answering (MCP default ${MCP_DEFAULT_WAIT_SECONDS}, REST default 0)`,
        }),
      ),
    },
    { additionalProperties: false },
  ),
  output: Type.Object(
    { ...JobSchema.properties, hint: Type.String({ description: 'What to do next (follow a job that has not ended with get_job)' }) },
    { description: 'The job, ended or not, with a hint' },
  ),
  timeoutClass: 'document',
  rest: { method: 'POST', path: '/v1/collections/:name/documents', status: 202 },
  upload: { urlField: 'urls', alsoUrlFields: ['paths'] },
  errors: [...KB_ERRORS, 'QUEUE_UNAVAILABLE'],
  // Not read-only, not destructive: it adds documents and replaces changed versions of the same source.
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  access: { action: 'ingest', collection: 'name', what: 'ingest documents' },
  async handler(input, ctx) {
    const kb = kbOf(ctx);
    const { name, urls, paths, include, exclude } = input;
    if (!urls?.length && !paths?.length && !ctx.upload) {
      throw toolError('VALIDATION_ERROR', 'input must name documents: urls, paths, or over REST an uploaded file (multipart field "file")');
    }
    const config = ctx.services.config;
    const useRoots = Boolean(paths?.length && ctx.roots && config.allowedDirs.length === 0);
    const allowedDirs = useRoots ? await ctx.roots!().catch(() => []) : undefined;
    const ocr = ocrRequestOf(input);
    let job = await kb.addDocuments(name, {
      ...(urls ? { urls } : {}),
      ...(paths ? { paths } : {}),
      ...(include ? { include } : {}),
      ...(exclude ? { exclude } : {}),
      ...(ocr ? { ocr } : {}),
      ...(ctx.upload ? { upload: ctx.upload } : {}),
      ...(allowedDirs ? { allowedDirs } : {}),
      create: true,
      signal: ctx.signal,
      tenant: ctx.principal.name,
    });

    const waitSeconds = input.wait_seconds ?? (ctx.transport === 'rest' ? 0 : MCP_DEFAULT_WAIT_SECONDS);
    // Leave the call time to answer before its own timeout.
    const waitMs = Math.max(0, Math.min(waitSeconds * 1000, toolTimeoutMs(ingestDocumentsTool, config) - 2000));
    if (waitMs > 0 && !ENDED.has(job.status)) {
      const unsubscribe = ctx.progress ? relayProgress(kb.subscribe.bind(kb), job, ctx.progress) : () => {};
      try {
        job = await kb.waitForJob(job.id, waitMs, ctx.signal);
      } finally {
        unsubscribe();
      }
    }
    const hint = ENDED.has(job.status)
      ? `The job ended (${job.status}): ${job.counts.done} ingested, ${job.counts.skipped} skipped (unchanged or left out: see each item's note), ${job.counts.failed} failed. Search it with search_collection.`
      : `The job is still ${job.status}: call get_job with job_id "${job.id}" to follow it (REST: GET /v1/jobs/${job.id}/events streams its progress).`;
    return { ...job, hint };
  },
});

type Progress = (p: { progress: number; total?: number; message?: string }) => void;

/**
 * The job's events as MCP progress: percent of the whole job, strictly increasing as the protocol
 * asks (events that do not advance it are not sent), starting with where the job stands now.
 */
export function relayProgress(subscribe: (id: string, l: (e: JobEvent) => void) => () => void, job: JobRecord, progress: Progress): () => void {
  let last = -1;
  const send = (fraction: number, message: string) => {
    const value = Math.round(Math.min(1, Math.max(0, fraction)) * 1000) / 10;
    if (value <= last) return;
    last = value;
    progress({ progress: value, total: 100, message });
  };
  const finished = job.counts.done + job.counts.skipped + job.counts.failed + job.counts.cancelled;
  send(job.counts.total > 0 ? finished / job.counts.total : 0, `${job.status}: ${finished} of ${job.counts.total} documents`);
  return subscribe(job.id, (e) => send(e.fraction, e.message));
}
