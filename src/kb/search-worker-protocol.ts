/** Messages between the search pool (search-pool.ts) and its worker threads (search-worker.ts). */
import type { Analyzer } from '../retrieval/tokenizer.ts';

export type SearchWorkerRequest =
  /** Open a replica of the index whose snapshot is `bytes` (shared memory, not copied). */
  | { type: 'open'; replica: number; bytes: SharedArrayBuffer; offset: number; length: number; analyzer: Analyzer['options'] }
  /** Top k of a query over an open replica; `ids`: only these chunk ids may be answered. */
  | { type: 'search'; id: number; replica: number; query: string; k: number; language?: string; ids?: Float64Array }
  | { type: 'close'; replica: number };

export type SearchWorkerReply =
  | { type: 'opened'; replica: number; error?: string }
  | { type: 'hits'; id: number; ids: Float64Array; scores: Float64Array }
  | { type: 'failed'; id: number; message: string };
