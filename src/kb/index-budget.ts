/**
 * The byte budget of open collection indexes (KB_INDEX_CACHE_MB). Without it every collection
 * searched once stayed in memory until the process ended (200 collections held 1.9 GB). The
 * knowledge base keeps its open indexes in a Map in use order (an entry is moved to the end when
 * used); this picks, oldest first, the ones to close so the rest fit the budget. The index just
 * used is never picked: a single collection larger than the budget stays open while it is in use
 * rather than being reopened from its snapshot on every search.
 */

export interface BudgetEntry {
  /** Approximate heap and native bytes; 0 while still opening (nothing to free yet). */
  bytes: number;
}

/** Names to close, oldest first, so that the remaining entries total at most `budgetBytes`. */
export function overBudget<K>(entries: ReadonlyMap<K, BudgetEntry>, budgetBytes: number, keep: K): K[] {
  let total = 0;
  for (const e of entries.values()) total += e.bytes;
  const out: K[] = [];
  for (const [key, e] of entries) {
    if (total <= budgetBytes) break;
    if (key === keep || e.bytes === 0) continue;
    out.push(key);
    total -= e.bytes;
  }
  return out;
}
