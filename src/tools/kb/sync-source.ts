/**
 * sync_source: starts a sync of one source now (REST 202 with the source at once or after
 * wait_seconds; MCP waits up to wait_seconds, default 20). CONFLICT while a sync of it runs, in
 * this process or another.
 */
import Type from 'typebox';
import { defineTool } from '../define-tool.ts';
import { toolTimeoutMs } from '../run-tool.ts';
import { CollectionName } from './kb-schemas.ts';
import { SourceId, SourceSchema } from '../../contract/source-schemas.ts';
import { SOURCE_ERRORS, sourcesOf } from './source-access.ts';

export const MAX_SYNC_WAIT_SECONDS = 120;
const MCP_DEFAULT_WAIT_SECONDS = 20;

export const syncSourceTool = defineTool({
  name: 'sync_source',
  title: 'Sync a source now',
  description:
    'Brings a collection in step with one of its sources now: new and changed documents are ingested (one ingestion job, see last_job_id), unchanged ones skipped ' +
    '(content hash; URLs by conditional requests answered 304), and documents whose file or page is gone (deleted, 404/410, out of scope) are deleted with the reason in their history. ' +
    'Timeouts, 5xx and network errors never delete: the old version stays and the failure is counted as transient. ' +
    `Waits up to wait_seconds (MCP default ${MCP_DEFAULT_WAIT_SECONDS}, REST default 0, at most ${MAX_SYNC_WAIT_SECONDS}) and returns the source; running tells whether the sync still runs. ` +
    'CONFLICT while a sync of the source already runs.',
  group: 'knowledge_base',
  input: Type.Object(
    {
      name: CollectionName,
      source_id: SourceId,
      wait_seconds: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_SYNC_WAIT_SECONDS, description: `Seconds to wait for the sync to end (MCP default ${MCP_DEFAULT_WAIT_SECONDS}, REST default 0)` })),
    },
    { additionalProperties: false },
  ),
  output: SourceSchema,
  timeoutClass: 'document',
  rest: { method: 'POST', path: '/v1/collections/:name/sources/:source_id/sync', status: 202 },
  errors: SOURCE_ERRORS,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  access: { action: 'ingest', collection: 'name', what: 'sync sources' },
  async handler(input, ctx) {
    const waitSeconds = input.wait_seconds ?? (ctx.transport === 'rest' ? 0 : MCP_DEFAULT_WAIT_SECONDS);
    const waitMs = Math.max(0, Math.min(waitSeconds * 1000, toolTimeoutMs(syncSourceTool, ctx.services.config) - 2000));
    return sourcesOf(ctx).sync(input.name, input.source_id, waitMs);
  },
});
