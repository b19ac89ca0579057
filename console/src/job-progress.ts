// How far one job item is, 0-1, from its stage and counters (the server reports stage changes and
// pages/chunks done): downloading and extracting take the first half, embedding most of the rest.
import type { JobItem } from './api.ts';

const ENDED_ITEM = new Set(['done', 'skipped', 'failed', 'cancelled']);
export const ENDED_JOB = new Set(['succeeded', 'partial', 'failed', 'cancelled']);

export const itemEnded = (item: JobItem) => ENDED_ITEM.has(item.stage);

export function itemFraction(item: JobItem): number {
  const p = item.progress;
  const ratio = (a: number | null, b: number | null) => (a !== null && b ? Math.min(1, a / b) : 0);
  switch (item.stage) {
    case 'queued':
      return 0;
    case 'downloading':
      return 0.05;
    case 'extracting':
      return 0.1 + 0.45 * ratio(p.pages_done, p.pages_total);
    case 'chunking':
      return 0.6;
    case 'embedding':
      return 0.65 + 0.28 * ratio(p.chunks_embedded, p.chunks_total);
    case 'indexing':
      return 0.95;
    case 'done':
    case 'skipped':
      return 1;
    default:
      return ratio(p.pages_done, p.pages_total);
  }
}

export function itemStatus(item: JobItem): string {
  const p = item.progress;
  if (item.stage === 'failed') return `failed${item.error ? `: ${item.error.code}` : ''}`;
  if (item.stage === 'skipped') return `skipped${item.note ? ` (${item.note})` : ''}`;
  if (item.stage === 'extracting' && p.pages_total) return `extracting page ${p.pages_done ?? 0}/${p.pages_total}`;
  if (item.stage === 'embedding' && p.chunks_total) return `embedding ${p.chunks_embedded ?? 0}/${p.chunks_total} chunks`;
  return item.stage;
}
