/**
 * In-process jobs left by a process that is gone (killed, restarted): the items a resume runs
 * again, a job that cannot be resumed ended with the reason, and a cancel of a job no process
 * here runs (db.ts's liveness rule says whose it is).
 */
import { toolError } from '../errors.ts';
import { cancelItems, countsOf, emptyProgress, failUnfinished, isEnded, LOST_UPLOAD_REASON, TERMINAL_STAGES } from './job-state.ts';
import { stopFeed } from './folder-feed.ts';
import type { JobItem, JobRecord, KbStoreApi } from './types.ts';

const now = () => new Date().toISOString();

/**
 * Puts a resumed job's unfinished items back in the queue; an upload whose spooled bytes are
 * gone fails (its failure reported through `onLost`). Returns the indexes to run.
 */
export function resumeItems(job: JobRecord, uploadKept: (index: number) => boolean, onLost: (item: JobItem) => void): number[] {
  const pending: number[] = [];
  let lostUpload = false;
  for (const item of job.items) {
    if (TERMINAL_STAGES.has(item.stage)) continue;
    if (item.source_kind === 'upload' && !uploadKept(item.index)) {
      item.stage = 'failed';
      item.error = { code: 'PROCESSING_ERROR', message: LOST_UPLOAD_REASON };
      item.finished_at = now();
      lostUpload = true;
      onLost(item);
      continue;
    }
    item.stage = 'queued';
    item.progress = emptyProgress();
    item.started_at = null;
    pending.push(item.index);
  }
  job.resumed++;
  if (lostUpload) job.reason = LOST_UPLOAD_REASON;
  job.counts = countsOf(job.items);
  return pending;
}

/** Ends a job that cannot be resumed (its collection is gone): its unfinished items fail with the reason. */
export function endInterrupted(store: KbStoreApi, job: JobRecord, reason: string): void {
  stopFeed(job);
  failUnfinished(job, { code: 'PROCESSING_ERROR', message: reason });
  job.status = job.counts.failed === job.counts.total ? 'failed' : 'partial';
  job.reason = reason;
  job.finished_at = now();
  try {
    store.saveJob(job);
  } catch {
    // its collection (and so its row) is gone
  }
}

/**
 * Cancels an unfinished job this runner does not run. Its owner gone (killed, its pid perhaps
 * reused since): claimed and ended cancelled (the end written by `saveEnd`), its unfinished
 * documents cancelled. Its owner another live process: the request is stored in the row, which
 * that process reads between documents, and the job is answered as it stands.
 */
export function cancelNotHere(
  store: KbStoreApi,
  stored: JobRecord,
  reason: string,
  saveEnd: (job: JobRecord) => void,
  log?: { info(obj: object, msg?: string): void },
): JobRecord {
  const claimed = store.claimJob ? store.claimJob(stored.id) : store.jobOwner?.(stored.id) === 'live' ? null : stored;
  if (!claimed) {
    const asked = store.updateJob(stored.id, (job, flags) => {
      if (isEnded(job)) return false;
      flags.cancelRequested = true;
      job.reason = reason;
    });
    if (!asked) throw toolError('NOT_FOUND', `Job ${stored.id} not found`);
    if (isEnded(asked)) throw toolError('CONFLICT', `Job ${stored.id} already ended (${asked.status}); only queued or running jobs can be cancelled`);
    return asked;
  }
  const job = claimed;
  stopFeed(job);
  cancelItems(job, 'unfinished');
  job.status = 'cancelled';
  job.reason = `${reason} (its process was gone)`;
  job.finished_at = now();
  log?.info({ event: 'kb.job.cancelled_orphan', job: job.id }, 'cancelled a job whose process is gone');
  saveEnd(job);
  return structuredClone(job);
}
