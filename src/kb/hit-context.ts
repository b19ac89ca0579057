/**
 * The reading context of a search hit: the hit is what ranked, its parent is what a caller reads.
 *   'section'   the hit's heading section: the contiguous run of chunks around it, in the same
 *               document, whose heading path starts with the hit's (subsections included);
 *   'neighbors' the adjacent chunks, before and after, whatever their headings.
 * Either way the text grows outwards from the hit, alternating before and after, until the
 * budget (context_chars) is spent, so the hit stays in the middle; the chunk that does not fit is
 * cut at a word boundary and `truncated` says something was left out.
 *
 * Chunks overlap (the chunker carries text into the next chunk), so consecutive chunks are joined
 * by their character offsets: the overlap appears once, as in the document. Chunks are read in
 * small windows by ord (store.documentChunks), never the whole document: a hit in a 10k-chunk
 * document costs a few windows. Windows are shared by the hits of one search (ContextReader).
 */
import type { ChunkRecord, CollectionHit, KbStoreApi } from './types.ts';

export const DEFAULT_CONTEXT_CHARS = 2_000;
export const MAX_CONTEXT_CHARS = 8_000;
/** Chunks read per window. */
export const CONTEXT_WINDOW = 8;

/** The shared context shape (answer-schemas.ts HitContextSchema), chunk ids always filled here. */
export type HitContext = NonNullable<CollectionHit['context']> & { chunk_ids: number[] };

/** Budget in characters from a request's context_chars: default 2,000, clamped to 1-8,000. */
export function contextBudget(chars: number | undefined): number {
  if (chars === undefined || !Number.isFinite(chars)) return DEFAULT_CONTEXT_CHARS;
  return Math.min(MAX_CONTEXT_CHARS, Math.max(1, Math.floor(chars)));
}

/** Reads a document's chunks by ord in windows, keeping the windows one search has read. */
export class ContextReader {
  private readonly windows = new Map<string, ChunkRecord[]>();
  /** Windows read from the store (for tests and timings). */
  reads = 0;

  constructor(private readonly store: Pick<KbStoreApi, 'documentChunks'>, private readonly window = CONTEXT_WINDOW) {}

  /** The chunk at `ord` of the document, or null past either end. */
  at(documentId: string, ord: number): ChunkRecord | null {
    if (ord < 0) return null;
    const start = Math.floor(ord / this.window) * this.window;
    const key = `${documentId}\u0000${start}`;
    let w = this.windows.get(key);
    if (!w) {
      w = this.store.documentChunks(documentId, start, start + this.window - 1);
      this.reads++;
      this.windows.set(key, w);
    }
    return w.find((c) => c.ord === ord) ?? null;
  }
}

const startsWith = (path: readonly string[], prefix: readonly string[]) => prefix.length <= path.length && prefix.every((h, i) => path[i] === h);
const exact = (c: ChunkRecord) => c.text.length === c.char_end - c.char_start;

/** What `later` adds after `earlier` when they are adjacent in the document. */
function joinAfter(earlier: ChunkRecord, later: ChunkRecord): string {
  if (exact(earlier) && exact(later)) {
    const overlap = earlier.char_end - later.char_start;
    if (overlap >= 0 && overlap < later.text.length) return later.text.slice(overlap);
    if (overlap >= later.text.length) return '';
  }
  return `\n\n${later.text}`;
}

/** What `earlier` adds before `later`. */
function joinBefore(earlier: ChunkRecord, later: ChunkRecord): string {
  if (exact(earlier) && exact(later)) {
    const overlap = earlier.char_end - later.char_start;
    if (overlap >= 0 && overlap < earlier.text.length) return earlier.text.slice(0, earlier.text.length - overlap);
    if (overlap >= earlier.text.length) return '';
  }
  return `${earlier.text}\n\n`;
}

/** The first `n` characters of s, cut back to a word boundary when one is in the second half. */
function head(s: string, n: number): string {
  if (s.length <= n) return s;
  const cut = s.slice(0, n);
  const ws = cut.search(/\s\S*$/);
  return ws > n / 2 ? cut.slice(0, ws) : cut;
}

/** The last `n` characters of s, cut forward to a word boundary when one is in the first half. */
function tail(s: string, n: number): string {
  if (s.length <= n) return s;
  const cut = s.slice(s.length - n);
  const ws = cut.search(/\s/);
  return ws >= 0 && ws < n / 2 ? cut.slice(ws + 1) : cut;
}

export function hitContext(reader: ContextReader, hit: ChunkRecord, kind: 'section' | 'neighbors', budget: number): HitContext {
  const inScope = (c: ChunkRecord) => kind === 'neighbors' || startsWith(c.heading_path, hit.heading_path);
  let truncated = false;
  let centre = hit.text;
  if (centre.length > budget) {
    // The hit alone is over the budget: its middle.
    const from = Math.floor((centre.length - budget) / 2);
    centre = centre.slice(from, from + budget);
    truncated = true;
  }
  const before: string[] = [];
  const after: string[] = [];
  const beforeIds: number[] = [];
  const afterIds: number[] = [];
  const beforeOrds: number[] = [];
  const afterOrds: number[] = [];
  let left = budget - centre.length;
  let first = hit;
  let last = hit;
  let beforeOpen = !truncated;
  let afterOpen = !truncated;
  let side: 'before' | 'after' = 'before';
  while ((beforeOpen || afterOpen) && left > 0) {
    if (side === 'before' && beforeOpen) {
      const c = reader.at(hit.document_id, first.ord - 1);
      if (!c || !inScope(c)) beforeOpen = false;
      else {
        const add = joinBefore(c, first);
        if (add.length <= left) {
          before.push(add);
          left -= add.length;
        } else {
          before.push(tail(add, left));
          left = 0;
          truncated = true;
          beforeOpen = false;
        }
        beforeIds.push(c.id);
        beforeOrds.push(c.ord);
        first = c;
      }
    } else if (side === 'after' && afterOpen) {
      const c = reader.at(hit.document_id, last.ord + 1);
      if (!c || !inScope(c)) afterOpen = false;
      else {
        const add = joinAfter(last, c);
        if (add.length <= left) {
          after.push(add);
          left -= add.length;
        } else {
          after.push(head(add, left));
          left = 0;
          truncated = true;
          afterOpen = false;
        }
        afterIds.push(c.id);
        afterOrds.push(c.ord);
        last = c;
      }
    }
    side = side === 'before' ? 'after' : 'before';
  }
  // Budget spent with the section going on: something was left out.
  if (!truncated && left <= 0) {
    const prev = beforeOpen ? reader.at(hit.document_id, first.ord - 1) : null;
    const next = afterOpen ? reader.at(hit.document_id, last.ord + 1) : null;
    if ((prev && inScope(prev)) || (next && inScope(next))) truncated = true;
  }
  const text = [...before.reverse(), centre, ...after].join('').trim();
  // chunk_indexes count as the hits' chunk_index does (the chunk's place in its document).
  return { kind, text, chunk_indexes: [...beforeOrds.reverse(), hit.ord, ...afterOrds], chunk_ids: [...beforeIds.reverse(), hit.id, ...afterIds], truncated };
}
