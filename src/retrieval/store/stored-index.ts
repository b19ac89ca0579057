/**
 * A per-document index as loaded or saved by IndexStore (index-store.ts), and what its manifest
 * says about it, shared by the reader of the current snapshot format and the reader of the
 * previous layout (legacy-folder.ts).
 */
import path from 'node:path';
import type { FileDigest } from '../../util/atomic-file.ts';
import type { CollectionDenseIndex } from '../../kb/dense-index.ts';
import type { ManifestFields, SnapshotManifest } from '../../kb/index-snapshot.ts';
import type { DocumentLexicalIndex } from '../document-lexical-index.ts';
import type { Analyzer } from '../tokenizer.ts';
import type { Bm25Params } from '../bm25.ts';
import type { Chunk } from '../types.ts';
import type { HnswParams } from './hnsw.ts';
import { CHUNKS_FILE, readChunks } from './chunks-file.ts';

/** What a stored index's manifest says, as the service reads it. */
export interface IndexMeta {
  format: number;
  key: string;
  embedderId: string | null;
  dimension: number | null;
  contentSha256: string;
  chunkCount: number;
  hnsw: (HnswParams & { space: 'cosine' }) | null;
  createdAt: string;
  /** The language the lexical index analyzed the document in (null: the default rules). */
  language: string | null;
  chunkerVersion: number | null;
  files: Record<string, FileDigest>;
}

/** The analyzer (not bound to a language) and BM25 parameters a caller searches with. */
export interface LexicalSettings {
  analyzer: Analyzer;
  bm25?: Partial<Bm25Params>;
}

export interface IndexExpectation {
  embedderId: string | null;
  dimension: number | null;
  contentSha256: string;
  /** Default: the store's (IndexStoreOptions). A stored lexical index of other settings is rebuilt from the chunks. */
  lexical?: LexicalSettings;
}

/** A loaded (or freshly built) index; closing drops the native HNSW structure. */
export class StoredIndex {
  readonly key: string;
  readonly chunks: Chunk[];
  readonly meta: IndexMeta;
  readonly lexical: DocumentLexicalIndex;
  private hnsw: CollectionDenseIndex | null;
  private closed = false;

  constructor(key: string, chunks: Chunk[], meta: IndexMeta, hnsw: CollectionDenseIndex | null, lexical: DocumentLexicalIndex) {
    this.key = key;
    this.chunks = chunks;
    this.meta = meta;
    this.hnsw = hnsw;
    this.lexical = lexical;
  }

  /** Whether the index holds vectors (built by meta.embedderId). */
  get hasDense(): boolean {
    return this.meta.embedderId !== null;
  }

  /** Rough memory held: vectors + graph links + chunk text (the lexical index is counted by its holder). */
  get approxBytes(): number {
    const text = this.chunks.reduce((n, c) => n + c.text.length * 2 + 200, 0);
    return (this.hnsw?.approxBytes ?? 0) + text;
  }

  /**
   * The k chunks nearest to an L2-normalised query vector, best first; score is cosine similarity.
   * chunkIndex is the position in `chunks`. Throws when the index has no vectors or the query's
   * dimension is wrong: a query must come from the index's own embedder.
   */
  searchDense(queryVector: ArrayLike<number>, k: number): Array<{ chunkIndex: number; score: number }> {
    if (this.closed) throw new Error(`index ${this.key} is closed`);
    if (!this.hasDense) throw new Error(`index ${this.key} is lexical-only (no embedder was available when it was built)`);
    if (queryVector.length !== this.meta.dimension) {
      throw new Error(`query vector has dimension ${queryVector.length}, index ${this.key} has ${this.meta.dimension}`);
    }
    if (!this.hnsw) return [];
    return this.hnsw.search(queryVector, k).map((h) => ({ chunkIndex: h.id, score: h.score }));
  }

  close(): void {
    this.closed = true;
    this.hnsw = null;
  }
}

/** A verified folder whose lexical index was rebuilt (older layout, other analyzer): written again. */
export interface Rewrite {
  fields: ManifestFields;
  chunks: FileDigest;
  dense: { index: FileDigest; meta: FileDigest } | null;
}

export type Verdict = { ok: true; index: StoredIndex; rewrite?: Rewrite } | { ok: false; remove: boolean; why: string };

export function documentFields(
  key: string,
  d: {
    contentSha256: string;
    chunkerVersion: number | null;
    language: string | null;
    analyzer: string;
    embedderId: string | null;
    dimension: number | null;
    hnsw: (HnswParams & { space: 'cosine' }) | null;
    chunks: number;
  },
): ManifestFields {
  return {
    kind: 'document',
    database_id: null,
    collection_id: null,
    version: null,
    key,
    content_sha256: d.contentSha256,
    chunker_version: d.chunkerVersion,
    language: d.language,
    analyzer: d.analyzer,
    embedder: d.embedderId,
    dimension: d.dimension,
    hnsw: d.hnsw,
    chunks: d.chunks,
  };
}

export function metaOf(m: SnapshotManifest): IndexMeta {
  return {
    format: m.format,
    key: m.key ?? '',
    embedderId: m.embedder,
    dimension: m.dimension,
    contentSha256: m.content_sha256 ?? '',
    chunkCount: m.chunks,
    hnsw: m.hnsw,
    createdAt: m.saved_at,
    language: m.language ?? null,
    chunkerVersion: m.chunker_version ?? null,
    files: m.files,
  };
}

/** The chunker version an index key names ("...-c3" or "...-c3-o<hash>"), or null. */
export function chunkerVersionOf(key: string): number | null {
  const m = /-c(\d+)(?:-o[0-9a-f]{12})?$/.exec(key);
  return m ? Number(m[1]) : null;
}

/** The chunks file, checked against its digest and count while it is parsed; a string says why not. */
export async function readChunksChecked(dir: string, want: FileDigest, count: number, signal?: AbortSignal): Promise<Chunk[] | string> {
  let chunks: Chunk[];
  try {
    const read = await readChunks(path.join(dir, CHUNKS_FILE), signal);
    if (read.digest.bytes !== want.bytes || read.digest.sha256 !== want.sha256) return `${CHUNKS_FILE} truncated or corrupt`;
    chunks = read.chunks;
  } catch (err) {
    if (signal?.aborted) throw err;
    return `${CHUNKS_FILE} unreadable`;
  }
  if (chunks.length !== count || !chunks.every((c) => c && typeof c.text === 'string')) return `${CHUNKS_FILE} does not match the manifest`;
  return chunks;
}
