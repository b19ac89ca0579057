/**
 * What the knowledge base asks of its ingestion queue. Two implementations: JobRunner (the
 * default: in-process, one server) and RedisJobQueue (REDIS_URL set: BullMQ in Redis, documents
 * run by whichever process has the worker role). Job records live in SQLite either way.
 */
import type { JobOptions, NewItem } from './job-runner.ts';
import type { FeedState, JobEvent, JobRecord } from './types.ts';

export interface QueueStats {
  jobs_active: number;
  documents_queued: number;
  documents_running: number;
  queue_max: number;
  concurrency: number;
  [key: string]: unknown;
}

export interface JobQueue {
  /** OVERLOADED when `count` more documents would not fit INGEST_QUEUE_MAX; VALIDATION_ERROR when they never could. */
  /** OVERLOADED past INGEST_QUEUE_MAX; RATE_LIMITED past the tenant's share (tenant-share.ts). */
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
  stats(): QueueStats;
  close(): Promise<void>;
}
