/**
 * What the knowledge base asks of its ingestion queue. Two implementations: JobRunner (the
 * default: in-process, one server) and RedisJobQueue (REDIS_URL set: BullMQ in Redis, documents
 * run by whichever process has the worker role). Job records live in SQLite either way, and both
 * run documents through one executor (document-executor.ts) and one state machine (job-state.ts):
 * they differ only in how they schedule and transport work.
 */
import type { JobOptions } from './document-executor.ts';
import type { FeedState, JobEvent, JobRecord, NewItem } from './types.ts';

export interface QueueStats {
  /** Which queue answers: the health report says it. */
  queue: 'in-process' | 'redis';
  jobs_active: number;
  documents_queued: number;
  documents_running: number;
  queue_max: number;
  concurrency: number;
  /** In process: ended jobs whose end could not be written yet (job-end-writer.ts). */
  job_ends_unsaved?: number;
  /** In process: the most documents seen waiting at once, and jobs whose folders are still walked. */
  documents_queued_peak?: number;
  folders_walking?: number;
  [key: string]: unknown;
}

export interface JobQueue {
  /** OVERLOADED past INGEST_QUEUE_MAX; VALIDATION_ERROR when the documents never could fit; RATE_LIMITED past the tenant's share (tenant-share.ts). */
  checkRoom(count: number, tenant?: string): void | Promise<void>;
  /** Files the first part of a new job's folder walk may take beside `explicit` items (checkRoom's errors when none fits). */
  folderRoom(explicit: number, tenant?: string): number | Promise<number>;
  /** With `feed`: the job names folders, walked in parts as it drains (folder-feed.ts); `items` hold the first part. */
  submit(collection: string, items: NewItem[], options: JobOptions, feed?: FeedState): Promise<JobRecord>;
  cancel(id: string, reason?: string): JobRecord | Promise<JobRecord>;
  /** The freshest record of a job not yet ended, when this process holds one (null: read the store). */
  liveJob(id: string): JobRecord | null;
  /** Ids of a collection's jobs still queued or running. */
  jobsOf(collection: string): string[];
  subscribe(id: string, listener: (e: JobEvent) => void): () => void;
  waitFor(id: string, ms: number, signal?: AbortSignal): Promise<JobRecord>;
  /**
   * Jobs left queued or running by a process that is gone, taken over here (adopt: after start,
   * no spool sweep). Only a queue whose jobs run in this process has it; the Redis workers
   * reconcile on their own.
   */
  resume?(collectionExists: (name: string) => boolean, opts?: { adopt?: boolean }): { resumed: number; failed: number };
  stats(): QueueStats;
  close(): Promise<void>;
}
