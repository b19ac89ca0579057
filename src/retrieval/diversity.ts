/**
 * The diversity filter: walks candidates in ranked order and drops one whose distinct terms are
 * (nearly) all covered by an already selected chunk — overlapping windows of the same passage,
 * repeated boilerplate, duplicated table rows. Overlap is measured as |A ∩ B| / min(|A|, |B|), so a
 * short chunk fully contained in a longer selected one also counts as a duplicate.
 */
export const DEFAULT_DIVERSITY_THRESHOLD = 0.9;

export interface DiversityOutcome<T> {
  kept: T[];
  /** Dropped candidates with the kept item they duplicate. */
  dropped: Array<{ item: T; duplicateOf: T; overlap: number }>;
}

/** Distinct term ids of a text, sorted ascending (what the lexical index stores per chunk). */
export type TermIds = Int32Array;

/** |A ∩ B| / min(|A|, |B|) over two sorted, duplicate-free id arrays. */
export function overlapCoefficient(a: TermIds, b: TermIds): number {
  if (a.length === 0 || b.length === 0) return 0;
  let i = 0;
  let j = 0;
  let shared = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      shared++;
      i++;
      j++;
    } else if (a[i] < b[j]) i++;
    else j++;
  }
  return shared / Math.min(a.length, b.length);
}

/**
 * Keeps at most `limit` items; `terms(item)` gives an item's distinct terms. Items with fewer than
 * `minTerms` terms are never treated as duplicates (short chunks share words by chance).
 */
export function diversify<T>(
  ranked: readonly T[],
  terms: (item: T) => TermIds,
  limit: number,
  threshold: number = DEFAULT_DIVERSITY_THRESHOLD,
  minTerms = 5,
): DiversityOutcome<T> {
  const kept: T[] = [];
  const keptSizes: number[] = [];
  const dropped: DiversityOutcome<T>['dropped'] = [];
  // term id -> positions in `kept` holding it; one pass over a candidate's terms counts what it
  // shares with every kept item at once (instead of one merge per kept item).
  const holders = new Map<number, number[]>();
  const shared = new Int32Array(Math.max(1, limit));
  for (const item of ranked) {
    if (kept.length >= limit) break;
    const t = terms(item);
    let dup = -1;
    let dupOverlap = 0;
    if (t.length >= minTerms && kept.length > 0) {
      shared.fill(0, 0, kept.length);
      for (let i = 0; i < t.length; i++) {
        const h = holders.get(t[i]);
        if (h) for (const k of h) shared[k]++;
      }
      for (let k = 0; k < kept.length; k++) {
        if (keptSizes[k] < minTerms) continue;
        const o = shared[k] / Math.min(t.length, keptSizes[k]);
        if (o >= threshold) {
          dup = k;
          dupOverlap = o;
          break;
        }
      }
    }
    if (dup >= 0) {
      dropped.push({ item, duplicateOf: kept[dup], overlap: Math.round(dupOverlap * 1000) / 1000 });
      continue;
    }
    const pos = kept.length;
    kept.push(item);
    keptSizes.push(t.length);
    for (let i = 0; i < t.length; i++) {
      const h = holders.get(t[i]);
      if (h) h.push(pos);
      else holders.set(t[i], [pos]);
    }
  }
  return { kept, dropped };
}
