/**
 * The Redis workers' reconciler (at start and every INGEST_STALLED_SECONDS): repairs what no event
 * covers. A job recorded whose documents never reached Redis (its API died in between, or Redis
 * restarted empty) has them queued again; a document that BullMQ gave up on (stalled too often)
 * while its record still says it runs is failed with the reason; a job whose items all ended but
 * whose last writer died before ending it is ended; a walk nobody feeds takes its next part.
 */
import type { Queue } from 'bullmq';
import type { WorkerFolderFeed } from './ingest-worker-feed.ts';
import type { WorkerRecords } from './ingest-worker-records.ts';
import { TERMINAL_STAGES } from './job-state.ts';
import { itemJobOptions, type IngestJobData } from './redis-job-queue.ts';
import type { JobRecord, KbStoreApi } from './types.ts';

/** A recorded job this young may still be on its way into Redis: the reconciler leaves it alone. */
const RECONCILE_GRACE_MS = 15_000;
/** Items looked up in Redis per round at most (the rest wait for the next round). */
const RECONCILE_MAX_ITEMS = 2_000;

export interface ReconcileDeps {
  store: KbStoreApi;
  queue: Queue<IngestJobData>;
  attempts: number;
  records: WorkerRecords;
  feed: WorkerFolderFeed;
  closing(): boolean;
  log?: { info(obj: object, msg?: string): void };
}

export async function reconcileOnce(deps: ReconcileDeps): Promise<void> {
  if (deps.closing()) return;
  let checked = 0;
  let jobs: JobRecord[];
  try {
    jobs = deps.store.unfinishedJobs();
  } catch {
    return;
  }
  for (const job of jobs) {
    if (deps.closing() || checked >= RECONCILE_MAX_ITEMS) return;
    deps.feed.maybeFeed(job);
    if (Date.now() - Date.parse(job.created_at) < RECONCILE_GRACE_MS) continue;
    for (const item of job.items) {
      if (TERMINAL_STAGES.has(item.stage)) continue;
      if (checked++ >= RECONCILE_MAX_ITEMS) return;
      const id = `${job.id}-${item.index}`;
      let state: string;
      try {
        state = await deps.queue.getJobState(id);
      } catch {
        return; // Redis away: next round
      }
      if (state === 'unknown') {
        // Recorded but never queued (or its entry expired): queue it now; the id makes this idempotent.
        await deps.queue.add('ingest', { job: job.id, index: item.index }, itemJobOptions(job.id, item.index, deps.attempts)).catch(() => undefined);
        deps.log?.info({ event: 'kb.job.requeued', job: job.id, index: item.index }, 'a recorded document missing from the queue was queued again');
      } else if (state === 'failed' || state === 'completed') {
        const bj = await deps.queue.getJob(id).catch(() => undefined);
        deps.records.failIfRunning(job.id, item.index, {
          code: 'PROCESSING_ERROR',
          message: bj?.failedReason ? `the queue gave up on it: ${bj.failedReason}` : 'its worker stopped without recording the result',
        });
      }
    }
    if (job.items.every((i) => TERMINAL_STAGES.has(i.stage))) deps.records.endIfAllEnded(job.id);
  }
}
