/**
 * Reciprocal Rank Fusion (Cormack et al., 2009): score(d) = sum over lists of 1 / (k + rank), with
 * 1-based ranks. Rank-based, so BM25 scores and cosine similarities need no calibration.
 */
export const RRF_K = 60;

export interface FusedItem {
  index: number;
  score: number;
  /** 1-based rank of the item in each input list, null where the list did not return it. */
  ranks: Array<number | null>;
}

/**
 * Fuses ranked lists of item indexes (best first). Ties are broken by the best single rank, then by
 * index, so the order is deterministic.
 */
export function reciprocalRankFusion(lists: ReadonlyArray<readonly number[]>, k: number = RRF_K): FusedItem[] {
  const items = new Map<number, FusedItem>();
  lists.forEach((list, li) => {
    const seen = new Set<number>();
    list.forEach((index, pos) => {
      if (seen.has(index)) return; // a list names an item once; later duplicates are ignored
      seen.add(index);
      let item = items.get(index);
      if (!item) {
        item = { index, score: 0, ranks: lists.map(() => null) };
        items.set(index, item);
      }
      item.ranks[li] = pos + 1;
      item.score += 1 / (k + pos + 1);
    });
  });
  const bestRank = (it: FusedItem) => Math.min(...it.ranks.map((r) => r ?? Infinity));
  return [...items.values()].sort((a, b) => b.score - a.score || bestRank(a) - bestRank(b) || a.index - b.index);
}
