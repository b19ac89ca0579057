/**
 * The per-document layout before the shared snapshot format: meta.json (format 3: camelCase
 * fields, the digests of the other files, a sha256 of itself) + chunks.json + dense.hnsw(.json),
 * no lexical.bin. Verified as that version did; IndexStore serves it with a lexical index built
 * from its chunks and rewrites the folder in the current format. To be removed once no data
 * folder of that version is left.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { digestFile, type FileDigest } from '../../util/atomic-file.ts';
import { CollectionDenseIndex } from '../../kb/dense-index.ts';
import { DENSE_FILE, DENSE_META_FILE, MANIFEST_FILE, manifestChecksum } from '../../kb/index-snapshot.ts';
import { DocumentLexicalIndex } from '../document-lexical-index.ts';
import type { HnswParams } from './hnsw.ts';
import { CHUNKS_FILE } from './chunks-file.ts';
import {
  StoredIndex,
  chunkerVersionOf,
  documentFields,
  readChunksChecked,
  type IndexExpectation,
  type IndexMeta,
  type LexicalSettings,
  type Rewrite,
  type Verdict,
} from './stored-index.ts';

/**
 * 2: a manifest checksum, chunks one per line, pid-tagged temp folders; 3: the collection engine's
 * dense index. 3 is read and rewritten, older ones are refused and rebuilt from the document.
 */
export const LEGACY_INDEX_FORMAT = 3;
export const LEGACY_META_FILE = 'meta.json';

interface LegacyMeta {
  format: number;
  key: string;
  embedderId: string | null;
  dimension: number | null;
  contentSha256: string;
  chunkCount: number;
  hnsw: (HnswParams & { space: 'cosine' }) | null;
  createdAt: string;
  files: Record<string, FileDigest>;
  checksum?: string;
}

async function readLegacyRaw(dir: string): Promise<LegacyMeta | null> {
  try {
    const m = JSON.parse(await fs.readFile(path.join(dir, LEGACY_META_FILE), 'utf8')) as LegacyMeta;
    const okNum = (n: unknown) => typeof n === 'number' && Number.isInteger(n) && n >= 0;
    if (
      !m ||
      typeof m.checksum !== 'string' ||
      m.checksum !== manifestChecksum(m) ||
      typeof m.key !== 'string' ||
      typeof m.contentSha256 !== 'string' ||
      !okNum(m.chunkCount) ||
      !(m.embedderId === null || typeof m.embedderId === 'string') ||
      !(m.dimension === null || okNum(m.dimension)) ||
      !m.files ||
      typeof m.files !== 'object' ||
      !m.files[CHUNKS_FILE]
    ) {
      return null;
    }
    return m;
  } catch {
    return null;
  }
}

/** A legacy meta.json the store still reads (format 3), as IndexMeta; null for anything else. */
export async function readLegacyMeta(dir: string): Promise<IndexMeta | null> {
  const m = await readLegacyRaw(dir);
  if (!m || m.format !== LEGACY_INDEX_FORMAT) return null;
  return { ...m, format: m.format, language: null, chunkerVersion: chunkerVersionOf(m.key) };
}

export async function verifyLegacy(dir: string, key: string, expect: IndexExpectation, lex: LexicalSettings, signal?: AbortSignal): Promise<Verdict> {
  const bad = (why: string): Verdict => ({ ok: false, remove: true, why });
  const m = await readLegacyRaw(dir);
  if (!m) return bad(`${MANIFEST_FILE} missing and no readable ${LEGACY_META_FILE}`);
  if (m.format !== LEGACY_INDEX_FORMAT) return bad(`${LEGACY_META_FILE} of format ${m.format}: the document is indexed again`);
  if (m.key !== key) return bad(`${LEGACY_META_FILE} names another key`);
  if (m.contentSha256 !== expect.contentSha256) return bad('content hash differs');
  if (m.embedderId !== expect.embedderId) return { ok: false, remove: false, why: 'built by another embedder' };
  if (expect.dimension !== null && m.embedderId !== null && m.dimension !== expect.dimension) {
    return bad('same embedder id, different dimension (the model files changed)');
  }
  for (const [name, digest] of Object.entries(m.files)) {
    if (name === CHUNKS_FILE) continue; // checked while it is parsed, below
    const actual = await digestFile(path.join(dir, name)).catch(() => null);
    if (!actual || actual.bytes !== digest.bytes || actual.sha256 !== digest.sha256) return bad(`${name} missing or corrupt`);
  }
  const chunks = await readChunksChecked(dir, m.files[CHUNKS_FILE]!, m.chunkCount, signal);
  if (typeof chunks === 'string') return bad(chunks);
  let hnsw: CollectionDenseIndex | null = null;
  let dense: Rewrite['dense'] = null;
  if (m.embedderId !== null && m.chunkCount > 0) {
    const index = m.files[DENSE_FILE];
    const meta = m.files[DENSE_META_FILE];
    if (!index || !meta || !m.hnsw || !m.dimension) return bad('dense index without its index file');
    try {
      hnsw = await CollectionDenseIndex.load(path.join(dir, DENSE_FILE), { embedderId: m.embedderId, dimension: m.dimension, params: { ef: m.hnsw.ef } });
    } catch {
      return bad('index file unreadable');
    }
    if (hnsw.size !== m.chunkCount) return bad('index holds another number of vectors');
    dense = { index, meta };
  }
  const lexical = await DocumentLexicalIndex.forDocument(chunks, lex.analyzer, lex.bm25, signal);
  const fields = documentFields(key, {
    contentSha256: m.contentSha256,
    chunkerVersion: chunkerVersionOf(key),
    language: lexical.language,
    analyzer: lexical.analyzer.signature,
    embedderId: m.embedderId,
    dimension: m.embedderId === null ? null : m.dimension,
    hnsw: m.embedderId === null ? null : m.hnsw,
    chunks: m.chunkCount,
  });
  const meta: IndexMeta = { ...m, language: lexical.language, chunkerVersion: fields.chunker_version };
  return { ok: true, index: new StoredIndex(key, chunks, meta, hnsw, lexical), rewrite: { fields, chunks: m.files[CHUNKS_FILE]!, dense } };
}
