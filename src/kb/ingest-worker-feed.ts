/**
 * Folder walks with the Redis queue (folder-feed.ts). When a document of a job whose folders are
 * still walked ends and the job has few documents waiting, a worker takes the next part of the
 * walk, one process at a time (a lease in SQLite), as far as the queue in Redis has room; the
 * part's items and where the walk stands are written in one transaction that checks no other part
 * came first, then queued. The reconciler calls it too, for walking jobs nobody fed (their feeder
 * died, or the queue was full when their documents ended).
 */
import { randomBytes } from 'node:crypto';
import type { Queue } from 'bullmq';
import { errorText } from '../util/error-text.ts';
import { feedWindow, isWalking, setFeed, stopFeed, wantsFeed, type FeedBatch, type FeedNext } from './folder-feed.ts';
import { readOptions } from './job-spool.ts';
import { endIfDone, feedFailedItem, isEnded, jobItemsOf } from './job-state.ts';
import { itemJobOptions, type IngestJobData } from './redis-job-queue.ts';
import type { JobItem, JobRecord, KbStoreApi, NewItem } from './types.ts';

/** One process walks a part of some job's folders at a time: the lease's key and how long it lasts (a part's walk budget is 60 s). */
const FEED_LEASE = 'kb:folder-feed';
const FEED_LEASE_MS = 120_000;

export interface WorkerFeedDeps {
  store: KbStoreApi;
  queue: Queue<IngestJobData>;
  spoolDir: string;
  attempts: number;
  /** INGEST_QUEUE_MAX: folder walks add documents only while the queue has room. */
  queueMax?: number;
  feed?: FeedNext;
  /** A part that ended the job (its walk failed with nothing else waiting). */
  onJobEnded(job: JobRecord): void;
  log?: { warn(obj: object, msg?: string): void; info(obj: object, msg?: string): void };
}

export class WorkerFolderFeed {
  /** Walks under way here, by job (aborted on cancel and close). */
  private readonly feeding = new Map<string, AbortController>();
  /** Jobs that wanted a part while another process held the lease: tried again when this one's part ends. */
  private readonly later = new Map<string, JobRecord>();
  private readonly owner = `feed-${process.pid}-${randomBytes(4).toString('hex')}`;
  private closed = false;

  constructor(private readonly deps: WorkerFeedDeps) {}

  /** Takes the next part of the job's folders when they are still walked and few of its documents wait. */
  maybeFeed(job: JobRecord): void {
    const queueMax = this.deps.queueMax;
    if (this.closed || !this.deps.feed || !queueMax || this.feeding.has(job.id) || !isWalking(job)) return;
    if (!wantsFeed(job, job.items.filter((i) => i.stage === 'queued').length, queueMax)) return;
    const ctrl = new AbortController();
    this.feeding.set(job.id, ctrl);
    void this.feedOnce(job.id, ctrl)
      .catch((err) => this.deps.log?.warn({ event: 'kb.job.feed_failed', job: job.id, err: errorText(err) }, 'the next part of a folder could not be queued; tried again later'))
      .finally(() => {
        this.feeding.delete(job.id);
        // Parts refused while this one held the lease: their turn now.
        const later = [...this.later.values()];
        this.later.clear();
        for (const j of later) this.maybeFeed(j);
      });
  }

  abort(jobId: string, reason: unknown): void {
    this.feeding.get(jobId)?.abort(reason);
  }

  close(reason: unknown): void {
    this.closed = true;
    for (const ctrl of this.feeding.values()) ctrl.abort(reason);
  }

  private async feedOnce(jobId: string, ctrl: AbortController): Promise<void> {
    const store = this.deps.store;
    const queueMax = this.deps.queueMax!;
    if (!store.acquireLease(FEED_LEASE, this.owner, FEED_LEASE_MS)) {
      const job = store.getJob(jobId);
      if (job) this.later.set(jobId, job);
      return;
    }
    try {
      const job = store.getJob(jobId);
      if (!job || isEnded(job) || !isWalking(job) || store.jobCancelRequested(jobId)) return;
      const waiting = job.items.filter((i) => i.stage === 'queued').length;
      if (!wantsFeed(job, waiting, queueMax)) return;
      const c = await this.deps.queue.getJobCounts('wait', 'prioritized', 'delayed', 'paused');
      const queued = (c.wait ?? 0) + (c.prioritized ?? 0) + (c.delayed ?? 0) + (c.paused ?? 0);
      const max = Math.min(feedWindow(queueMax) - waiting, queueMax - queued);
      if (max <= 0) return; // the queue is full: the next document that ends calls again
      const options = await readOptions(this.deps.spoolDir, jobId);
      let batch: FeedBatch | null = null;
      let failed: NewItem | null = null;
      try {
        batch = await this.deps.feed!(job.feed!, options, max, ctrl.signal);
      } catch (err) {
        if (ctrl.signal.aborted) return;
        failed = feedFailedItem(job, err);
      }
      const seq = job.feed!.seq;
      let ended = false;
      let added: JobItem[] = [];
      const saved = store.updateJob(jobId, (j, flags) => {
        // Cancelled, ended, or another part written first: this one is dropped.
        if (flags.cancelRequested || isEnded(j) || !isWalking(j) || j.feed!.seq !== seq) return false;
        const start = j.items.length;
        j.items.push(...jobItemsOf(batch ? batch.items : [failed!], start));
        if (batch) setFeed(j, batch.state);
        else stopFeed(j);
        added = j.items.slice(start);
        ended = endIfDone(j, flags.cancelRequested);
      });
      if (!saved || added.length === 0) return;
      const toQueue = added.filter((i) => i.stage === 'queued');
      // A failure here is repaired by the reconciler, which queues recorded documents missing from Redis.
      if (toQueue.length > 0) {
        await this.deps.queue.addBulk(
          toQueue.map((it) => ({
            name: 'ingest',
            data: { job: jobId, index: it.index, ...(options.tenant ? { tenant: options.tenant } : {}) },
            opts: itemJobOptions(jobId, it.index, this.deps.attempts),
          })),
        );
      }
      if (ended) this.deps.onJobEnded(saved);
    } finally {
      store.releaseLease(FEED_LEASE, this.owner);
    }
  }
}
