// How far a job item is, and what to say about it: the fraction is the contract's formula (the
// one the server reports in job events), so the bar the console draws between events matches them.
import { ENDED_ITEM_STAGES, ENDED_JOB_STATUSES, itemFraction } from '../../src/contract/job-progress.ts';
import type { JobItem } from './api.ts';

export { ENDED_JOB_STATUSES as ENDED_JOB, itemFraction };

export const itemEnded = (item: JobItem) => ENDED_ITEM_STAGES.has(item.stage);

export function itemStatus(item: JobItem): string {
  const p = item.progress;
  if (item.stage === 'failed') return `failed${item.error ? `: ${item.error.code}` : ''}`;
  if (item.stage === 'skipped') return `skipped${item.note ? ` (${item.note})` : ''}`;
  if (item.stage === 'extracting' && p.pages_total) return `extracting page ${p.pages_done ?? 0}/${p.pages_total}`;
  if (item.stage === 'embedding' && p.chunks_total) return `embedding ${p.chunks_embedded ?? 0}/${p.chunks_total} chunks`;
  return item.stage;
}
