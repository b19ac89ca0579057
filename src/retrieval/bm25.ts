/**
 * BM25F's parameters and the shapes every lexical search shares. The index itself is one: the
 * collection engine's (src/kb/lexical-index.ts), used by collections, by retrieve_chunks'
 * documents (document-lexical-index.ts) and by the evaluation.
 *
 * BM25F over two fields: a short "title" field (a document title or a chunk's heading path) and the
 * body. Each field's term frequency is length-normalised with its own b and weighted before the
 * k1 saturation (Robertson & Zaragoza's BM25F), so a title match counts more without letting long
 * titles dominate. With no titles it is plain BM25 (Lucene's idf).
 */

export interface Bm25Params {
  k1: number;
  /** Length normalisation of the body field. */
  b: number;
  /** Length normalisation of the title field. */
  bTitle: number;
  /** Weight of a title occurrence relative to a body occurrence. */
  titleWeight: number;
}

/** Tuned on SciFact's train split (titles as the title field); see README for the table. */
export const DEFAULT_BM25_PARAMS: Readonly<Bm25Params> = Object.freeze({
  k1: 1.2,
  b: 0.65,
  bTitle: 0.5,
  titleWeight: 2,
});

/** A document as the lexical index sees it: an optional title field and the body. */
export interface LexicalDoc {
  title?: string;
  body: string;
}

export interface ScoredIndex {
  /** Position of the item in the list the index was built from. */
  index: number;
  score: number;
}

/** FNV-1a, 32-bit: stable term hashes for cross-index overlap measures (the diversity filter). */
export function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h | 0;
}
