/**
 * The lexical index of one chunk list (a document of retrieve_chunks, the evaluation's corpus):
 * the collection engine's BM25F index (src/kb/lexical-index.ts) with the chunks' positions as
 * their ids, so a document and a collection are searched by the same code and score alike. The
 * list is fixed once built; searching answers positions (ScoredIndex), as the ranking core wants.
 */
import { CollectionLexicalIndex, type LexicalChunk } from '../kb/lexical-index.ts';
import { detectLanguage } from '../language/detect.ts';
import type { Bm25Params, ScoredIndex } from './bm25.ts';
import type { Analyzer } from './tokenizer.ts';

/** Chars of a document's chunks its language is detected from (as ingestion reads a document once). */
const LANGUAGE_SAMPLE_CHARS = 4000;
/** Below this detection confidence the default (English) rules apply. */
const LANGUAGE_MIN_CONFIDENCE = 0.5;

/** The language of a document from its first chunks; undefined when unclear. */
export function documentLanguage(chunks: readonly Pick<IndexedText, 'text'>[]): string | undefined {
  let sample = '';
  for (const c of chunks) {
    sample += `${c.text}\n`;
    if (sample.length >= LANGUAGE_SAMPLE_CHARS) break;
  }
  const d = detectLanguage(sample.slice(0, LANGUAGE_SAMPLE_CHARS));
  return d.confidence >= LANGUAGE_MIN_CONFIDENCE ? d.language_code : undefined;
}

export class DocumentLexicalIndex {
  private constructor(
    readonly index: CollectionLexicalIndex,
    /** The document language its analyzer was bound to (null: none), saved beside its snapshot. */
    readonly language: string | null = null,
  ) {}

  /**
   * A document's index: its language detected from its first chunks, the analyzer bound to it
   * (one document, one language: its rules analyze the chunks and the queries), built in slices.
   */
  static async forDocument(chunks: readonly IndexedText[], analyzer: Analyzer, params?: Partial<Bm25Params>, signal?: AbortSignal): Promise<DocumentLexicalIndex> {
    const language = documentLanguage(chunks) ?? null;
    const built = await DocumentLexicalIndex.buildSliced(chunks, analyzer.withLanguage(language ?? undefined), params, signal);
    return new DocumentLexicalIndex(built.index, language);
  }

  /**
   * The index a snapshot holds (CollectionLexicalIndex.deserialize: nothing re-tokenized), its
   * analyzer bound to the language it was built in. Throws INTERNAL_ERROR when the snapshot is
   * corrupt or of another analyzer.
   */
  static fromSnapshot(index: CollectionLexicalIndex, language: string | null): DocumentLexicalIndex {
    return new DocumentLexicalIndex(index, language);
  }

  /** Binds `analyzer` to a document language for fromSnapshot's deserialization. */
  static analyzerFor(analyzer: Analyzer, language: string | null): Analyzer {
    return analyzer.withLanguage(language ?? undefined);
  }

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
