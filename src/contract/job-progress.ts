/**
 * How far a job is, 0-1, from its items' stages and counters: the formula the server reports in job
 * events and the console draws between them. Downloading and extracting take the first half,
 * embedding most of the rest. No Node imports: the console imports this.
 */
import type { ItemStage, JobStatus } from './kb-types.ts';

interface ItemLike {
  stage: ItemStage;
  progress: { pages_done: number | null; pages_total: number | null; chunks_embedded: number | null; chunks_total: number | null };
}

export const ENDED_ITEM_STAGES: ReadonlySet<ItemStage> = new Set(['done', 'skipped', 'failed', 'cancelled']);
export const ENDED_JOB_STATUSES: ReadonlySet<JobStatus> = new Set(['succeeded', 'partial', 'failed', 'cancelled']);

/** 0-1 of one item, by stage (and by pages / chunks within extraction and embedding). */
export function itemFraction(item: ItemLike): number {
  const p = item.progress;
  switch (item.stage) {
    case 'queued':
      return 0;
    case 'downloading':
      return 0.05;
    case 'extracting':
      return 0.1 + (p.pages_total ? 0.4 * ((p.pages_done ?? 0) / p.pages_total) : 0);
    case 'chunking':
      return 0.55;
    case 'embedding':
      return 0.6 + (p.chunks_total ? 0.35 * ((p.chunks_embedded ?? 0) / p.chunks_total) : 0);
    case 'indexing':
      return 0.97;
    default:
      return 1;
  }
}

/** The mean of its items' fractions; a job without items is complete. */
export function jobFraction(job: { items: readonly ItemLike[] }): number {
  if (job.items.length === 0) return 1;
  return job.items.reduce((s, i) => s + itemFraction(i), 0) / job.items.length;
}
