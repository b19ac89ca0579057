/**
 * Fair sharing of the ingestion queue between API keys. Each job carries its tenant (the name of
 * the key that submitted it, src/auth/principal.ts); a key may have at most
 * INGEST_QUEUE_MAX_PER_KEY documents waiting and INGEST_JOBS_MAX_PER_KEY unfinished jobs, so one
 * client cannot fill INGEST_QUEUE_MAX (which bounds memory) and leave everyone else with 503s.
 * The queues take turns between tenants before jobs (job-runner.ts pump, and the BullMQ priority
 * in redis-job-queue.ts), so a key's single document waits at most one document per worker behind
 * another key's thousand.
 *
 * With auth off there is one tenant (`local`): the per-key limits do not apply and nothing changes
 * for a single user.
 */
import type { Config } from '../config.ts';
import { toolError } from '../errors.ts';

export interface TenantLimits {
  /** Documents one key may have waiting. */
  queueMax: number;
  /** Unfinished jobs one key may have. */
  jobsMax: number;
}

/** The per-key limits, or null with auth off (one user: only INGEST_QUEUE_MAX applies). */
export function tenantLimits(config: Readonly<Config>): TenantLimits | null {
  const keysOn = config.apiKeys.length > 0 || config.API_KEYS_FILE !== '';
  if (!keysOn) return null;
  return {
    queueMax: config.INGEST_QUEUE_MAX_PER_KEY || Math.max(1, Math.floor(config.INGEST_QUEUE_MAX / 4)),
    jobsMax: config.INGEST_JOBS_MAX_PER_KEY,
  };
}

export interface TenantLoad {
  /** Documents of this tenant waiting (not started). */
  waiting: number;
  /** Its jobs not yet ended. */
  jobs: number;
}

/** RATE_LIMITED when `count` more documents (one more job) would pass the key's share. */
export function checkTenantRoom(tenant: string, load: TenantLoad, count: number, limits: TenantLimits | null): void {
  if (!limits) return;
  if (load.jobs + 1 > limits.jobsMax) {
    throw toolError(
      'RATE_LIMITED',
      `The key "${tenant}" has ${load.jobs} unfinished ingestion jobs, the most one key may have (INGEST_JOBS_MAX_PER_KEY ${limits.jobsMax}); wait for one to end or name more documents per job`,
    );
  }
  if (count > limits.queueMax) {
    throw toolError(
      'VALIDATION_ERROR',
      `This job names ${count} documents, more than one key may have waiting (INGEST_QUEUE_MAX_PER_KEY ${limits.queueMax}); split it into smaller jobs`,
    );
  }
  if (load.waiting + count > limits.queueMax) {
    throw toolError(
      'RATE_LIMITED',
      `The key "${tenant}" has ${load.waiting} documents waiting and this job adds ${count}, over its share of the queue (INGEST_QUEUE_MAX_PER_KEY ${limits.queueMax}); retry when its jobs have progressed`,
    );
  }
}

/** The tenant of jobs submitted without one (auth off, jobs from before tenants, resumed ones). */
export const DEFAULT_TENANT = 'local';
