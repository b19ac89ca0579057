/**
 * One document of an ingestion job, start to end: fetch the bytes (URL download, a spooled upload,
 * or a local file) -> compare the content hash with the stored version (same and not forced:
 * skipped) -> extract (no 30-page OCR cap: OCR_MAX_PAGES_JOB) -> chunk (time-sliced) -> embed with
 * the collection's embedder, fixed at its first embedded document -> one store transaction
 * (replaceDocument) -> the collection's indexes apply the commit. Stages are reported as they
 * start, so the job shows where each document stands; a failure is thrown as a coded error and
 * the runner records it against this document only.
 *
 * Ordering (README, "Ordering"): for one source in one collection, the content read last wins.
 * A read sequence number is taken from the database just before the bytes are fetched or opened
 * (an upload's when the server received it), so a higher number means content at least as new:
 * a file replaced atomically is seen whole, old or new, by an open, and an open that starts later
 * sees the newer one. The commit carries the number and replaceDocument discards, in its own
 * transaction, a version read before the stored one; the item then ends 'skipped' with a
 * 'superseded' note. Concurrent jobs on one source thus converge to the newest read, whichever
 * commits first. The number comes from SQLite, not a clock, so it orders processes sharing the
 * database (replicas, workers) as well.
 */
import type { CacheRegistry } from '../cache/cache-registry.ts';
import type { Config } from '../config.ts';
import type { DocumentService, FetchedDocument } from '../documents/document-service.ts';
import { isToolError, toolError } from '../errors.ts';
import type { ModelLayer } from '../retrieval/contracts.ts';
import { chunkDocumentSliced } from '../retrieval/chunking.ts';
import { passageOf } from '../retrieval/search.ts';
import type { Chunk, Embedder } from '../retrieval/types.ts';
import { abortError } from '../util/abort.ts';
import { errorText } from '../util/error-text.ts';
import { readLocalFile, type LocalFileRef } from './local-files.ts';
import { prefetchedBodies } from './sources/prefetched.ts';
import type { CollectionRecord, CommitResult, DocumentVersion, ItemProgress, ItemStage, KbStoreApi, NewChunk, SourceKind } from './types.ts';

export const EMBED_BATCH = 32;
/** The item note of a version discarded because the stored one was read later. */
export const SUPERSEDED_NOTE = 'superseded: a newer read of this source was committed first; this older content was discarded';
/** How long a document waits for the collection's embedder while models are still loading. */
const EMBEDDER_WAIT_MS = 120_000;

/** What the runner knows about the document to ingest. */
export interface IngestSource {
  kind: SourceKind;
  /** The URL, the local file's real path, or the upload's file name. */
  source: string;
  /** Uploads: the spooled bytes (read by the runner). */
  upload?: { bytes: Buffer; filename: string; contentType?: string };
  /** Local files: the allowed folders at the time of the request. */
  allowed?: { dirs: readonly string[]; origin: string };
  /** Local files: the file the walk found (readLocalFile refuses another one at that path). */
  local?: LocalFileRef;
  /**
   * Uploads: the read sequence number taken when the server received the bytes (the job's
   * options keep it across a restart). Absent: taken here, just before the bytes are read.
   */
  readSeq?: number;
}

export interface IngestDeps {
  config: Readonly<Config>;
  store: KbStoreApi;
  documents: DocumentService;
  /** The download cache is bypassed: a job must see the URL's content as it is now. */
  caches?: Pick<CacheRegistry, 'download'>;
  models: ModelLayer | null;
  /** Applies a commit to the collection's indexes (the facade opens and caches them). */
  applyCommit(collection: CollectionRecord, commit: CommitResult): Promise<void>;
  /** Resolves when the collection's indexes may see a commit (not in the middle of being opened). */
  beforeCommit?(collectionName: string): Promise<void>;
  log?: { warn(obj: object, msg?: string): void; debug(obj: object, msg?: string): void };
}

export interface IngestOptions {
  jobId: string;
  collectionId: number;
  collectionName: string;
  force: boolean;
  ocr?: { mode?: 'auto' | 'always' | 'never'; languages?: string[] };
  signal: AbortSignal;
  /** Called at each stage start and progress tick. */
  onProgress(stage: ItemStage, progress: Partial<ItemProgress>, documentId: string | null): void;
}

export interface IngestOutcome {
  stage: 'done' | 'skipped';
  documentId: string;
  note: string | null;
  chunks: number;
}

/** The key that makes a source one document of its collection (types.ts: DocumentRecord.source_key). */
export function sourceKeyOf(src: IngestSource): string {
  if (src.kind === 'path') return `path:${src.source}`;
  if (src.kind === 'upload') return `upload:${src.source}`;
  return src.source;
}

function toNewChunk(c: Chunk): NewChunk {
  return {
    ord: c.chunk_index,
    text: c.text,
    page_start: c.page_start ?? null,
    page_end: c.page_end ?? null,
    heading_path: c.heading_path,
    char_start: c.char_start,
    char_end: c.char_end,
    importance: c.importance_score,
    content_type: c.content_type,
  };
}

function pageCount(doc: { metadata: Record<string, unknown>; pages: unknown[] }): number | null {
  const m = doc.metadata;
  for (const k of ['page_count', 'pages_total', 'slide_count', 'sheet_count']) {
    if (typeof m[k] === 'number' && Number.isFinite(m[k])) return m[k] as number;
  }
  return doc.pages.length > 0 ? doc.pages.length : null;
}

/** The collection's embedder, fixing it on the first embedded document; null: lexical only. */
async function embedderFor(deps: IngestDeps, opts: IngestOptions, chunkCount: number): Promise<Embedder | null> {
  const models = deps.models;
  if (!models || chunkCount === 0) return null;
  const fixed = () => {
    const c = deps.store.getCollection(opts.collectionName);
    return c && c.id === opts.collectionId ? c : null;
  };
  const started = Date.now();
  for (;;) {
    const collection = fixed();
    if (!collection) throw toolError('NOT_FOUND', 'The collection was deleted during ingestion');
    if (collection.embedder) {
      const e = models.embedderById(collection.embedder);
      if (e) return e;
      const why = models.denseUnavailableReason() ?? '';
      if (!/loading/.test(why) || Date.now() - started > EMBEDDER_WAIT_MS) {
        throw toolError('MODEL_UNAVAILABLE', `The collection's embedding model ${collection.embedder} is not available${why ? ` (${why})` : ''}; re-ingest the document when it is`);
      }
    } else {
      const e = models.embedderFor(chunkCount);
      if (!e) return null; // no embedder here: the collection stays lexical until one is
      // Read-check-set without an await between: two documents cannot fix different models.
      deps.store.setCollectionEmbedder(opts.collectionId, e.id, e.dimension);
      return e;
    }
    await new Promise((r) => setTimeout(r, 500));
    if (opts.signal.aborted) throw abortError(opts.signal, 'Ingestion');
  }
}

export async function ingestDocument(deps: IngestDeps, src: IngestSource, opts: IngestOptions): Promise<IngestOutcome> {
  const { store, documents, config } = deps;
  const { signal } = opts;
  const ctx = { signal };
  const sourceKey = sourceKeyOf(src);
  const filename = src.kind === 'url' ? null : src.kind === 'upload' ? src.source : src.source.split('/').pop() ?? null;
  const row = store.ensureDocument(opts.collectionId, { source: src.source, source_kind: src.kind, source_key: sourceKey, filename });
  const documentId = row.id;

  opts.onProgress('downloading', {}, documentId);
  // Before the fetch or open, not after: a read that starts later sees content at least as new
  // (a slow read of a big old version must not count as later than a quick read of the new one).
  const readSeq = src.readSeq ?? store.takeReadSeq?.() ?? null;
  let fetched: FetchedDocument;
  // A source sync that just downloaded this URL hands its body over (sources/prefetched.ts): one request per sync.
  const prefetched = src.kind === 'url' ? prefetchedBodies.take(opts.collectionName, src.source) : null;
  if (prefetched) {
    fetched = { ...prefetched, source: src.source, url: src.source, fromCache: false };
  } else if (src.kind === 'url') {
    deps.caches?.download.delete(src.source);
    fetched = await documents.fetch({ url: src.source }, ctx);
    // Kept out of the interactive tools' download cache: a job's downloads would crowd it out.
    deps.caches?.download.delete(src.source);
  } else {
    let bytes: Buffer;
    let contentType: string | undefined;
    if (src.kind === 'upload') {
      if (!src.upload) throw toolError('PROCESSING_ERROR', 'The uploaded file is missing');
      bytes = src.upload.bytes;
      contentType = src.upload.contentType;
    } else {
      const allowed = src.allowed ?? { dirs: config.allowedDirs, origin: 'ALLOWED_DIRS' };
      bytes = await readLocalFile(src.source, allowed.dirs, allowed.origin, config.MAX_UPLOAD_BYTES, src.local);
    }
    fetched = await documents.fetch({ upload: { bytes, filename: filename ?? 'file', ...(contentType ? { contentType } : {}) } }, ctx);
  }
  if (signal.aborted) throw abortError(signal, 'Ingestion');

  const existing = store.getDocument(opts.collectionId, documentId);
  // Recorded only while the stored version still holds these bytes (one transaction): a commit
  // by another process in between means the content changed, and this read is ingested.
  if (!opts.force && existing && existing.status === 'ready' && existing.content_sha256 === fetched.sha256 && store.recordSkipped(documentId, fetched.sha256, opts.jobId, readSeq) !== false) {
    return { stage: 'skipped', documentId, note: 'unchanged', chunks: existing.chunk_count };
  }

  opts.onProgress('extracting', {}, documentId);
  const loaded = await documents.load(src.kind === 'url' ? { url: src.source } : { upload: { bytes: fetched.bytes } }, ctx, {
    fetched,
    ocr: { ...(opts.ocr?.mode ? { mode: opts.ocr.mode } : {}), ...(opts.ocr?.languages ? { languages: opts.ocr.languages } : {}), maxPages: config.OCR_MAX_PAGES_JOB },
    // PDFs report pages as their text becomes final (a long scan: page by page as OCR goes).
    onProgress: (p) => opts.onProgress('extracting', p, documentId),
  });
  const doc = loaded.doc;
  const pages = pageCount(doc);
  // Formats without page progress get theirs when extraction ends.
  opts.onProgress('chunking', { pages_total: pages, pages_done: pages }, documentId);
  // A collection may fix one chunk size for all its documents (else the size adapts to the format).
  const size = deps.store.getCollection(opts.collectionName)?.chunk_size ?? null;
  // documentLevel: chunks of a collection rank against other documents (short documents whole).
  const chunks = await chunkDocumentSliced(doc, size ? { chunkSize: size } : { documentLevel: true }, signal);
  if (signal.aborted) throw abortError(signal, 'Ingestion');

  let vectors: Float32Array[] | undefined;
  const embedder = await embedderFor(deps, opts, chunks.length);
  if (embedder) {
    opts.onProgress('embedding', { chunks_total: chunks.length, chunks_embedded: 0 }, documentId);
    vectors = [];
    for (let i = 0; i < chunks.length; i += EMBED_BATCH) {
      if (signal.aborted) throw abortError(signal, 'Ingestion');
      const batch = chunks.slice(i, i + EMBED_BATCH).map(passageOf);
      let got: Float32Array[];
      try {
        got = await embedder.embed(batch, 'passage', signal);
      } catch (err) {
        if (signal.aborted) throw abortError(signal, 'Ingestion');
        if (isToolError(err)) throw err;
        throw toolError('MODEL_UNAVAILABLE', `Embedding with ${embedder.id} failed: ${errorText(err)}`, err);
      }
      if (got.length !== batch.length) throw toolError('MODEL_UNAVAILABLE', `${embedder.id} returned ${got.length} vectors for ${batch.length} texts`);
      vectors.push(...got);
      opts.onProgress('embedding', { chunks_total: chunks.length, chunks_embedded: vectors.length }, documentId);
    }
  } else {
    opts.onProgress('indexing', { chunks_total: chunks.length, chunks_embedded: null }, documentId);
  }
  if (signal.aborted) throw abortError(signal, 'Ingestion');

  opts.onProgress('indexing', { chunks_total: chunks.length }, documentId);
  const title = typeof doc.metadata.title === 'string' && doc.metadata.title.trim() ? doc.metadata.title.trim() : null;
  const version: DocumentVersion = {
    source: src.source,
    source_kind: src.kind,
    source_key: sourceKey,
    filename,
    content_sha256: fetched.sha256,
    bytes: fetched.bytes.length,
    type: loaded.type.kind,
    title,
    pages,
    language: doc.detected_language ?? null,
    job_id: opts.jobId,
    read_seq: readSeq,
  };
  await deps.beforeCommit?.(opts.collectionName);
  if (signal.aborted) throw abortError(signal, 'Ingestion');
  // Deleted by a caller while it was being ingested: it stays deleted (and the error says why).
  if (!store.getDocument(opts.collectionId, documentId)) throw toolError('NOT_FOUND', 'The document was deleted during ingestion');
  // No await between the check above and the commit: it is one synchronous transaction.
  const commit = store.replaceDocument(opts.collectionId, documentId, version, chunks.map(toNewChunk), vectors);
  if (commit.superseded) {
    deps.log?.debug({ event: 'kb.superseded', document: documentId, read_seq: commit.superseded.read_seq, stored_read_seq: commit.superseded.stored_read_seq }, 'older read discarded');
    return { stage: 'skipped', documentId, note: SUPERSEDED_NOTE, chunks: commit.document.chunk_count };
  }
  const collection = store.getCollection(opts.collectionName);
  if (collection && collection.id === opts.collectionId) await deps.applyCommit(collection, commit);
  deps.log?.debug({ event: 'kb.ingested', document: documentId, chunks: chunks.length }, 'document ingested');
  return { stage: 'done', documentId, note: null, chunks: chunks.length };
}
