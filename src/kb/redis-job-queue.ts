/**
 * The ingestion queue when REDIS_URL is set: each document of a job is one BullMQ job in Redis
 * (id `<job>-<index>`), run by any process with the worker role (src/kb/ingest-worker.ts). Any
 * replica can take a job, answer its state, stream its progress and cancel it:
 *
 * - The job's record stays in SQLite on the shared DATA_DIR, as without Redis; uploads and the
 *   job's options are spooled beside it (DATA_DIR/kb/uploads/<job>/) for the worker to read.
 * - Items are enqueued with priority = their index + 1, so the first documents of every job run
 *   before the later ones of any: a small upload is not stuck behind a big folder.
 * - Progress reaches this replica over the bus ('kb:job'); a job's end is also polled from SQLite
 *   every second, so a notice lost while Redis restarts delays an answer by a second, no more.
 * - Cancelling records the request in the job's row (what a worker checks) and sends 'kb:cancel'
 *   so the worker running a document aborts it at once; documents still waiting end as cancelled.
 */
import { checkTenantRoom, DEFAULT_TENANT, type TenantLimits, type TenantLoad } from './tenant-share.ts';
import type { Queue } from 'bullmq';
import { toolError } from '../errors.ts';
import type { Bus } from '../redis/bus.ts';
import { errorText } from '../util/error-text.ts';
import { withTimeout } from '../util/timeout.ts';
import type { JobQueue, QueueStats } from './job-queue.ts';
import { cancelItems, endIfDone, failUnfinished, isEnded, jobEndEvent, newJobRecord, safeCall, TERMINAL_STAGES } from './job-state.ts';
import { RETRY_FIRST_MS, type JobOptions } from './document-executor.ts';
import { removeSpool, withContentTypes, writeSpool } from './job-spool.ts';
import type { FeedState, JobEvent, JobRecord, KbStoreApi, NewItem } from './types.ts';
import { feedWindow, stopFeed } from './folder-feed.ts';

export const INGEST_QUEUE_NAME = 'ingest';
/** BullMQ's largest priority. */
const MAX_PRIORITY = 2_097_152;
const POLL_MS = 1_000;
const COUNTS_MAX_AGE_MS = 2_000;

export interface IngestJobData {
  job: string;
  index: number;
  /** The API key that submitted it (tenant-share.ts); absent: DEFAULT_TENANT. */
  tenant?: string;
}

export interface RedisJobQueueDeps {
  store: KbStoreApi;
  queue: Queue<IngestJobData>;
  bus: Bus;
  /** DATA_DIR/kb/uploads. */
  spoolDir: string;
  queueMax: number;
  /** Per-key shares of the queue (tenant-share.ts); null or absent: auth off, one tenant. */
  tenantLimits?: TenantLimits | null;
  concurrency: number;
  /** Tries per document (INGEST_ATTEMPTS). */
  attempts: number;
  log?: { warn(obj: object, msg?: string): void; info(obj: object, msg?: string): void };
}

/**
 * BullMQ options of one document: priority by rank, retries with exponential backoff, bounded
 * history in Redis. The rank is the item's index (jobs take turns), or with API keys its place in
 * its key's waiting documents, so keys take turns: another key's first document ranks beside
 * this key's first, not behind its thousandth.
 */
export function itemJobOptions(jobId: string, index: number, attempts: number, rank = index) {
  return {
    jobId: `${jobId}-${index}`,
    priority: Math.min(rank + 1, MAX_PRIORITY),
    attempts,
    // The same waits as in process (document-executor.ts's retryDelayMs).
    backoff: { type: 'exponential' as const, delay: RETRY_FIRST_MS },
    removeOnComplete: { count: 1_000 },
    removeOnFail: { count: 5_000 },
  };
}

export class RedisJobQueue implements JobQueue {
  private readonly listeners = new Map<string, Set<(e: JobEvent) => void>>();
  private readonly offBus: Array<() => void> = [];
  private counts: { waiting: number; active: number; at: number; refreshing: boolean } = { waiting: 0, active: 0, at: 0, refreshing: false };
  private closed = false;

  constructor(private readonly deps: RedisJobQueueDeps) {
    this.offBus.push(
      deps.bus.on('kb:job', (m) => {
        const e = m.event as JobEvent | undefined;
        if (typeof m.job_id !== 'string' || !e || typeof e !== 'object') return;
        for (const l of this.listeners.get(m.job_id) ?? []) safeCall(l, e);
      }),
    );
  }

  private async waitingCount(): Promise<{ waiting: number; active: number }> {
    const c = await queueCall(this.deps.queue.getJobCounts('wait', 'prioritized', 'delayed', 'paused', 'active'));
    const waiting = (c.wait ?? 0) + (c.prioritized ?? 0) + (c.delayed ?? 0) + (c.paused ?? 0);
    this.counts = { waiting, active: c.active ?? 0, at: Date.now(), refreshing: false };
    return this.counts;
  }

  /**
   * The tenant's documents waiting and its unfinished jobs, from the documents waiting in Redis
   * (INGEST_QUEUE_MAX bounds the scan) and those running.
   */
  private async tenantLoad(tenant: string): Promise<TenantLoad> {
    const jobs = await queueCall(this.deps.queue.getJobs(['wait', 'prioritized', 'delayed', 'paused', 'active'], 0, this.deps.queueMax + this.deps.concurrency * 64));
    const ids = new Set<string>();
    let waiting = 0;
    for (const j of jobs) {
      if (!j || (j.data.tenant ?? DEFAULT_TENANT) !== tenant) continue;
      ids.add(j.data.job);
      if (!(j as { processedOn?: number }).processedOn) waiting++;
    }
    return { waiting, jobs: ids.size };
  }

  async checkRoom(count: number, tenant: string = DEFAULT_TENANT): Promise<void> {
    await this.checkRoomFor(count, tenant);
  }

  /** checkRoom, answering the tenant's waiting documents (its items' ranks start there). */
  private async checkRoomFor(count: number, tenant: string): Promise<number> {
    const max = this.deps.queueMax;
    if (count > max) {
      throw toolError(
        'VALIDATION_ERROR',
        `This job names ${count} documents, more than the ingestion queue ever holds (INGEST_QUEUE_MAX ${max}); split it into smaller jobs (subfolders, include/exclude globs) or raise INGEST_QUEUE_MAX`,
      );
    }
    let waiting: number;
    try {
      ({ waiting } = await this.waitingCount());
    } catch (err) {
      throw unreachable(err);
    }
    if (waiting + count > max) {
      throw toolError('OVERLOADED', `The ingestion queue is full: ${waiting} documents wait and this job adds ${count}, over INGEST_QUEUE_MAX (${max}); retry when jobs have finished`);
    }
    if (!this.deps.tenantLimits) return -1;
    let load: TenantLoad;
    try {
      load = await this.tenantLoad(tenant);
    } catch (err) {
      throw unreachable(err);
    }
    checkTenantRoom(tenant, load, count, this.deps.tenantLimits);
    return load.waiting;
  }

  /** Files the first part of a new job's folder walk may take beside `explicit` items (folder-feed.ts). */
  async folderRoom(explicit: number, tenant: string = DEFAULT_TENANT): Promise<number> {
    const tenantWaiting = await this.checkRoomFor(explicit + 1, tenant);
    const max = this.deps.queueMax;
    let room = Math.min(feedWindow(max), max - this.counts.waiting - explicit);
    if (this.deps.tenantLimits && tenantWaiting >= 0) room = Math.min(room, this.deps.tenantLimits.queueMax - tenantWaiting - explicit);
    return Math.max(1, room);
  }

  async submit(collection: string, items: NewItem[], options: JobOptions, feed?: FeedState): Promise<JobRecord> {
    if (this.closed) throw toolError('SHUTTING_DOWN', 'The server is stopping; no new ingestion jobs are taken');
    if (items.length === 0 && !feed) throw toolError('VALIDATION_ERROR', 'Nothing to ingest: give urls, paths or an upload');
    const tenant = options.tenant ?? DEFAULT_TENANT;
    // -1: auth off, items rank by index (jobs take turns); else after the key's waiting documents.
    const tenantWaiting = await this.checkRoomFor(items.filter((i) => !i.leftOut && !i.failed).length, tenant);
    const record = newJobRecord(collection, items, feed);
    const id = record.id;
    const opts = withContentTypes(options, items);
    // Always written: the worker that runs a document is another process and reads the options here.
    await writeSpool(this.deps.spoolDir, id, items, opts);
    try {
      this.deps.store.createJob(record);
    } catch (err) {
      await removeSpool(this.deps.spoolDir, id);
      throw err;
    }
    try {
      const queued = record.items.filter((it) => !TERMINAL_STAGES.has(it.stage));
      await queueCall(
        this.deps.queue.addBulk(
          queued.map((it, k) => ({
            name: 'ingest',
            data: { job: id, index: it.index, ...(tenant !== DEFAULT_TENANT ? { tenant } : {}) },
            opts: itemJobOptions(id, it.index, this.deps.attempts, tenantWaiting < 0 ? it.index : tenantWaiting + k),
          })),
        ),
      );
    } catch (err) {
      // Recorded, not queued: the job ends here with the reason rather than waiting forever.
      const reason = `the ingestion queue in Redis could not be reached (${errorText(err)})`;
      this.deps.store.updateJob(id, (job) => {
        failUnfinished(job, { code: 'QUEUE_UNAVAILABLE', message: reason });
        job.reason = reason;
        stopFeed(job);
        endIfDone(job, false);
      });
      await removeSpool(this.deps.spoolDir, id);
      throw unreachable(err);
    }
    return record;
  }

  async cancel(id: string, reason = 'cancelled by request'): Promise<JobRecord> {
    let endedBefore: string | null = null;
    let endedNow = false;
    const job = this.deps.store.updateJob(id, (j, flags) => {
      if (isEnded(j)) {
        endedBefore = j.status;
        return false;
      }
      flags.cancelRequested = true;
      j.reason = reason;
      // Its folders are walked no further (a part under way is dropped when it is written).
      stopFeed(j);
      // Waiting documents end now; running ones end when their worker sees the notice.
      cancelItems(j, 'queued');
      endedNow = endIfDone(j, true);
    });
    if (!job) throw toolError('NOT_FOUND', `Job ${id} not found`);
    if (endedBefore) throw toolError('CONFLICT', `Job ${id} already ended (${endedBefore}); only queued or running jobs can be cancelled`);
    this.deps.bus.publish('kb:cancel', { job_id: id, reason });
    if (endedNow) {
      this.deps.bus.publish('kb:job', { job_id: id, event: jobEndEvent(job) });
      await removeSpool(this.deps.spoolDir, id);
    }
    // Waiting BullMQ jobs would be skipped by their worker anyway; removing them frees the queue now.
    void Promise.all(job.items.filter((i) => i.stage === 'cancelled').map((i) => this.deps.queue.remove(`${id}-${i.index}`).catch(() => 0))).catch(() => undefined);
    return job;
  }

  liveJob(): JobRecord | null {
    // Every replica reads the store: the worker writes stage changes at once and progress within a second.
    return null;
  }

  jobsOf(collection: string): string[] {
    return this.deps.store.unfinishedJobs().filter((j) => j.collection === collection).map((j) => j.id);
  }

  subscribe(id: string, listener: (e: JobEvent) => void): () => void {
    const stored = this.deps.store.getJob(id);
    if (!stored) throw toolError('NOT_FOUND', `Job ${id} not found`);
    let active = true;
    if (isEnded(stored)) {
      queueMicrotask(() => {
        if (active) listener(jobEndEvent(stored));
      });
      return () => {
        active = false;
      };
    }
    // Ends once: from the bus, or from the store when the bus missed it.
    let ended = false;
    const wrapped = (e: JobEvent) => {
      if (!active || ended) return;
      if (e.type === 'job') ended = true;
      listener(e);
      if (ended) stop();
    };
    let set = this.listeners.get(id);
    if (!set) this.listeners.set(id, (set = new Set()));
    set.add(wrapped);
    const poll = setInterval(() => {
      try {
        const j = this.deps.store.getJob(id);
        if (j && isEnded(j)) wrapped(jobEndEvent(j));
      } catch {
        // the store is closing: the listener ends with the process
      }
    }, POLL_MS);
    poll.unref();
    const stop = () => {
      active = false;
      clearInterval(poll);
      set!.delete(wrapped);
      if (set!.size === 0) this.listeners.delete(id);
    };
    return stop;
  }

  async waitFor(id: string, ms: number, signal?: AbortSignal): Promise<JobRecord> {
    const first = this.deps.store.getJob(id);
    if (!first) throw toolError('NOT_FOUND', `Job ${id} not found`);
    if (isEnded(first) || ms <= 0 || signal?.aborted) return first;
    return new Promise<JobRecord>((resolve) => {
      let unsubscribe: () => void = () => undefined;
      const done = () => {
        clearTimeout(timer);
        unsubscribe();
        signal?.removeEventListener('abort', done);
        resolve(this.deps.store.getJob(id) ?? first);
      };
      const timer = setTimeout(done, Math.min(ms, 2 ** 31 - 1));
      signal?.addEventListener('abort', done, { once: true });
      unsubscribe = this.subscribe(id, (e) => {
        if (e.type === 'job') done();
      });
    });
  }

  stats(): QueueStats {
    if (!this.counts.refreshing && Date.now() - this.counts.at > COUNTS_MAX_AGE_MS && !this.closed) {
      this.counts.refreshing = true;
      this.waitingCount().catch(() => {
        this.counts.refreshing = false;
      });
    }
    return {
      queue: 'redis',
      jobs_active: this.deps.store.unfinishedJobCount(),
      documents_queued: this.counts.waiting,
      documents_running: this.counts.active,
      queue_max: this.deps.queueMax,
      concurrency: this.deps.concurrency,
      counts_age_ms: this.counts.at ? Date.now() - this.counts.at : null,
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const off of this.offBus) off();
    this.listeners.clear();
    await this.deps.queue.close().catch(() => undefined);
  }
}

/**
 * BullMQ's connection queues commands while Redis is down (it must, for its workers); a request
 * must not wait on that for long.
 */
const QUEUE_CALL_TIMEOUT_MS = 3_000;
const queueCall = <T>(p: Promise<T>): Promise<T> =>
  withTimeout(p, QUEUE_CALL_TIMEOUT_MS, () => new Error(`no answer within ${QUEUE_CALL_TIMEOUT_MS / 1000} s`));

function unreachable(err: unknown) {
  return toolError('QUEUE_UNAVAILABLE', `The ingestion queue in Redis cannot be reached (${errorText(err)}); retry when Redis is back`, err);
}
