/**
 * The lexical index of one chunk list (a document of retrieve_chunks, the evaluation's corpus):
 * the collection engine's BM25F index (src/kb/lexical-index.ts) with the chunks' positions as
 * their ids, so a document and a collection are searched by the same code and score alike. The
 * list is fixed once built; searching answers positions (ScoredIndex), as the ranking core wants.
 */
import { CollectionLexicalIndex, type LexicalChunk } from '../kb/lexical-index.ts';
import type { Bm25Params, ScoredIndex } from './bm25.ts';
import type { Analyzer } from './tokenizer.ts';

export class DocumentLexicalIndex {
  private constructor(readonly index: CollectionLexicalIndex) {}

  /**
   * `chunks[i]` gets id i; its heading path is the title field. The analyzer may be bound to the
   * document's language (Analyzer.withLanguage).
   */
  static build(chunks: readonly IndexedText[], analyzer: Analyzer, params?: Partial<Bm25Params>): DocumentLexicalIndex {
    const index = new CollectionLexicalIndex(analyzer, params, { slots: chunks.length });
    index.add(chunks.map(chunkAt));
    index.shrinkToFit();
    return new DocumentLexicalIndex(index);
  }

  /** build in time slices, stopping with the coded abort error when `signal` fires. */
  static async buildSliced(chunks: readonly IndexedText[], analyzer: Analyzer, params?: Partial<Bm25Params>, signal?: AbortSignal): Promise<DocumentLexicalIndex> {
    const index = new CollectionLexicalIndex(analyzer, params, { slots: chunks.length });
    await index.addSliced(chunks.map(chunkAt), signal);
    index.shrinkToFit();
    return new DocumentLexicalIndex(index);
  }

  get size(): number {
    return this.index.size;
  }

  get analyzer(): Analyzer {
    return this.index.analyzer;
  }

  get params(): Readonly<Bm25Params> {
    return this.index.params;
  }

  get vocabularySize(): number {
    return this.index.vocabularySize;
  }

  get approxBytes(): number {
    return this.index.approxBytes;
  }

  /** Top k positions by BM25F score (score > 0 only), best first; ties by position. */
  search(query: string, k: number): ScoredIndex[] {
    return this.index.search(query, k).map((h) => ({ index: h.id, score: h.score }));
  }

  /** Sorted distinct FNV-1a term hashes of the item at a position (the diversity filter's overlap). */
  termIds(index: number): Int32Array {
    return this.index.termIds(index);
  }

  /** Items containing an analyzed term (confidence weighs query terms by it). */
  docFreq(term: string): number {
    return this.index.docFreq(term);
  }
}

/** What is indexed of a chunk: its text (the body field) and heading path (the title field). */
export type IndexedText = Pick<LexicalChunk, 'text' | 'heading_path'>;

function chunkAt(c: IndexedText, i: number): LexicalChunk {
  return { id: i, text: c.text, heading_path: c.heading_path };
}
