/**
 * The knowledge base's rows in SQLite (better-sqlite3, synchronous): collections, documents,
 * chunks, their vectors, the ingestion history and jobs. Every change of more than one row runs in
 * one transaction, so a crash or kill -9 leaves each document at its old or its new version, whole.
 *
 * Choices worth knowing:
 * - A collection's `version` is bumped by the commits that change its chunks (replaceDocument,
 *   deleteDocument), the ones the indexes must apply; a pending row, a failed attempt, a skip or an
 *   embedder choice leave it (and so every index snapshot tagged with it) as it is.
 * - deleteDocument keeps the document's history and adds a 'deleted' row (an audit trail of what
 *   was ingested and removed); deleting the collection removes its history and jobs.
 * - Statements are prepared once (fixed ones in the constructor, filter combinations in a small
 *   bounded cache); id lists travel as one JSON parameter (json_each), whatever their length.
 * - Reads over a whole collection go in batches keyed by id (id > last), never OFFSET, so memory
 *   stays bounded and each batch is an index seek.
 *
 * Why this size (one class of about 830 lines): it is the one owner of a SQLite handle and of the
 * statements prepared on it, and its methods are short (a statement or a transaction each). The
 * transactions that matter cross tables (a document's commit writes its row, its chunks, their
 * vectors, its history and the collection's version at once; a job's update reads and writes its
 * row under the write lock), so a split by table would split them or pass the handle and the
 * statements around; every method also maps SQLite failures to the same coded errors. What stands
 * apart already has its file: the handle, liveness and integrity checks (db.ts), the schema and its
 * migrations (migrations.ts).
 */
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import type { Statement } from 'better-sqlite3';
import { isToolError, toolError } from '../errors.ts';
import type { ChunkContentType } from '../retrieval/types.ts';
import {
  beatHandle,
  handleIsLive,
  HEARTBEAT_MS,
  integrityChecked,
  isStorageFailure,
  kbStorageError,
  liveHandleKeys,
  markShutdown,
  openKbDatabase,
  registerHandle,
  releaseHandle,
  writeCollectionsMarker,
  type KbDatabase,
  type OpenKbDatabaseOptions,
} from './db.ts';
import { DATABASE_ID_KEY, migrate, READ_SEQ_KEY } from './migrations.ts';
import {
  COLLECTION_NAME_PATTERN,
  type ChunkRecord,
  type CollectionRecord,
  type CollectionSearchRequest,
  type CollectionStats,
  type CommitResult,
  type DocumentError,
  type DocumentQuery,
  type DocumentRecord,
  type DocumentStatus,
  type DocumentVersion,
  type FeedState,
  type JobRecord,
  type JobStatus,
  type KbStoreApi,
  type NewChunk,
  type Page,
} from './types.ts';

export const DEFAULT_PAGE_LIMIT = 50;
export const MAX_PAGE_LIMIT = 500;
export const DEFAULT_BATCH_SIZE = 2_000;
const STATEMENT_CACHE_MAX = 64;
const NAME_RE = new RegExp(COLLECTION_NAME_PATTERN);
const LITTLE_ENDIAN = os.endianness() === 'LE';

type HistoryEntry = ReturnType<KbStoreApi['history']>[number];
type SearchFilters = NonNullable<CollectionSearchRequest['filters']>;

/** 'doc_' + 12 lowercase hex characters (48 random bits). */
export function newDocumentId(): string {
  return `doc_${randomBytes(6).toString('hex')}`;
}

/** 'job_' + 12 lowercase hex characters, for the job runner's JobRecord ids. */
export function newJobId(): string {
  return `job_${randomBytes(6).toString('hex')}`;
}

/** float32 little-endian bytes of a vector (a copy on big-endian hosts, a view otherwise). */
export function vectorToBlob(v: Float32Array): Buffer {
  if (LITTLE_ENDIAN) return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
  const out = Buffer.alloc(v.length * 4);
  for (let i = 0; i < v.length; i++) out.writeFloatLE(v[i]!, i * 4);
  return out;
}

/** A fresh, aligned Float32Array from float32 little-endian bytes. */
export function blobToVector(b: Buffer): Float32Array {
  const out = new Float32Array(b.length >>> 2);
  if (LITTLE_ENDIAN) new Uint8Array(out.buffer).set(b.subarray(0, out.length * 4));
  else for (let i = 0; i < out.length; i++) out[i] = b.readFloatLE(i * 4);
  return out;
}

interface DocumentRow {
  seq?: number;
  id: string;
  collection_id: number;
  source: string;
  source_kind: DocumentRecord['source_kind'];
  source_key: string;
  filename: string | null;
  content_sha256: string | null;
  bytes: number | null;
  type: string | null;
  title: string | null;
  pages: number | null;
  language: string | null;
  status: DocumentStatus;
  error_code: string | null;
  error_message: string | null;
  chunk_count: number;
  revision: number;
  created_at: string;
  updated_at: string;
  ingested_at: string | null;
  /** The read sequence number of the committed content (migration 4); internal, not in DocumentRecord. */
  read_seq?: number | null;
}

interface ChunkRow {
  id: number;
  /** Read only where indexes are built (chunkBatch, indexChunksByIds). */
  language?: string | null;
  document_id: string;
  collection_id: number;
  ord: number;
  text: string;
  page_start: number | null;
  page_end: number | null;
  heading_path: string;
  char_start: number;
  char_end: number;
  importance: number;
  content_type: ChunkContentType;
}

interface JobRow {
  id: string;
  collection: string;
  status: JobStatus;
  reason: string | null;
  items: string;
  counts: string;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  resumed: number;
  cancel_requested: number;
  owner: string | null;
  /** A folder walk's state (JSON), or null (migration 5). */
  feed: string | null;
}

const CHUNK_COLUMNS = 'id, document_id, collection_id, ord, text, page_start, page_end, heading_path, char_start, char_end, importance, content_type';
const CHUNK_COLUMNS_C = CHUNK_COLUMNS.split(', ')
  .map((c) => `c.${c}`)
  .join(', ');

/**
 * A chunk's language is its document's (detected once per document at ingestion): the analyzer
 * applies that language's rules when it indexes the chunk.
 */
const CHUNK_LANGUAGE = '(SELECT d.language FROM documents AS d WHERE d.id = c.document_id) AS language';

// The row-to-record functions name every field (in the row's column order, so answers keep their
// key order): a rest pattern that leaves some columns out (`const { a, b, ...rest } = row`) takes
// V8's slow generic copy, 8.6 us a document row against 0.2 us written out, which was a tenth of
// a collection search's main-thread time at 100k chunks (its hits' documents).

function toDocument(r: DocumentRow): DocumentRecord {
  return {
    id: r.id,
    collection_id: r.collection_id,
    source: r.source,
    source_kind: r.source_kind,
    source_key: r.source_key,
    filename: r.filename,
    content_sha256: r.content_sha256,
    bytes: r.bytes,
    type: r.type,
    title: r.title,
    pages: r.pages,
    language: r.language,
    status: r.status,
    chunk_count: r.chunk_count,
    revision: r.revision,
    created_at: r.created_at,
    updated_at: r.updated_at,
    ingested_at: r.ingested_at,
    error: r.error_code === null ? null : { code: r.error_code, message: r.error_message ?? '' },
  };
}

function toChunk(r: ChunkRow): ChunkRecord {
  const chunk: ChunkRecord = {
    id: r.id,
    document_id: r.document_id,
    collection_id: r.collection_id,
    ord: r.ord,
    text: r.text,
    page_start: r.page_start,
    page_end: r.page_end,
    heading_path: JSON.parse(r.heading_path) as string[],
    char_start: r.char_start,
    char_end: r.char_end,
    importance: r.importance,
    content_type: r.content_type,
  };
  if (r.language !== undefined) chunk.language = r.language;
  return chunk;
}

function toJob(r: JobRow): JobRecord {
  const job: JobRecord = {
    id: r.id,
    collection: r.collection,
    status: r.status,
    reason: r.reason,
    items: JSON.parse(r.items) as JobRecord['items'],
    counts: JSON.parse(r.counts) as JobRecord['counts'],
    created_at: r.created_at,
    started_at: r.started_at,
    finished_at: r.finished_at,
    resumed: r.resumed,
  };
  const feedText = r.feed;
  if (feedText) {
    const feed = JSON.parse(feedText) as FeedState;
    job.feed = feed;
    job.enumeration = { state: feed.state, files_found: feed.found };
  }
  return job;
}

function pageWindow(offset: number | undefined, limit: number | undefined): { offset: number; limit: number } {
  const o = Number.isFinite(offset) ? Math.max(0, Math.floor(offset!)) : 0;
  const l = Number.isFinite(limit) ? Math.min(MAX_PAGE_LIMIT, Math.max(1, Math.floor(limit!))) : DEFAULT_PAGE_LIMIT;
  return { offset: o, limit: l };
}

function pageOf<T>(items: T[], total: number, offset: number): Page<T> {
  const end = offset + items.length;
  return { items, total, next_offset: end < total ? end : null };
}

const now = (): string => new Date().toISOString();

export interface KbStoreOptions extends OpenKbDatabaseOptions {
  /**
   * Called with the open connection before the store uses it. Tests only: `PRAGMA query_only`
   * on it makes every write fail as on a full disk, without filling one.
   */
  onConnection?: (db: KbDatabase) => void;
}

export class KbStore implements KbStoreApi {
  readonly dir: string;
  private readonly db: KbDatabase;
  private readonly cache = new Map<string, Statement>();
  private closed = false;
  private readonly s: ReturnType<KbStore['prepareFixed']>;
  /** Addition to KbStoreApi: whether this open ran quick_check (after an unclean shutdown, or asked). */
  readonly integrityChecked: boolean;
  /** This process's row among the file's open handles (db.ts), and the timer renewing it. */
  private handle: string | null = null;
  private heartbeat: NodeJS.Timeout | null = null;
  /** The last storage failure (disk full, I/O, corrupt) not yet followed by a successful write; null when healthy. */
  private storageFailure: string | null = null;

  /** Opens (creating and migrating) `dir/kb.sqlite`; `dir` is the knowledge base folder, DATA_DIR/kb. */
  constructor(dir: string, opts: KbStoreOptions = {}) {
    this.dir = dir;
    this.db = openKbDatabase(dir, opts);
    this.integrityChecked = integrityChecked.get(this.db) ?? false;
    opts.onConnection?.(this.db);
    try {
      migrate(this.db);
      markShutdown(this.db, 'running');
      this.handle = registerHandle(this.db);
      this.s = this.prepareFixed();
      // A file from before the marker (db.ts): mark it now it is known to hold collections.
      if (this.s.collections.get() !== undefined) writeCollectionsMarker(dir);
    } catch (err) {
      this.db.close();
      throw kbStorageError('cannot be prepared', err);
    }
    const handle = this.handle;
    this.heartbeat = setInterval(() => {
      try {
        if (!this.closed) beatHandle(this.db, handle);
        this.storageFailure = null;
      } catch (err) {
        // A busy or failing disk: the next beat tries again. The beat is also the periodic write
        // probe behind storageState() (/health), so a full disk shows within HEARTBEAT_MS.
        if (isStorageFailure(err)) this.storageFailure = kbStorageError('cannot be written', err).message;
      }
    }, HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  private prepareFixed() {
    const db = this.db;
    return {
      insertCollection: db.prepare(
        'INSERT INTO collections (name, description, version, chunk_size, created_at, updated_at) VALUES (?, ?, 0, ?, ?, ?) RETURNING *',
      ),
      collectionByName: db.prepare('SELECT * FROM collections WHERE name = ?'),
      collectionById: db.prepare('SELECT * FROM collections WHERE id = ?'),
      collections: db.prepare('SELECT * FROM collections ORDER BY name'),
      bumpVersion: db.prepare('UPDATE collections SET version = version + 1, updated_at = ? WHERE id = ? RETURNING version'),
      setEmbedder: db.prepare('UPDATE collections SET embedder = ?, dimension = ?, updated_at = ? WHERE id = ?'),
      deleteCollection: db.prepare('DELETE FROM collections WHERE id = ?'),
      deleteJobsOf: db.prepare('DELETE FROM jobs WHERE collection = ?'),
      countDocs: db.prepare('SELECT COUNT(*) AS n FROM documents WHERE collection_id = ?').pluck(),
      countChunks: db.prepare('SELECT COUNT(*) AS n FROM chunks WHERE collection_id = ?').pluck(),
      statsByStatus: db.prepare(
        `SELECT status, COUNT(*) AS n, COALESCE(SUM(chunk_count), 0) AS chunks, COALESCE(SUM(bytes), 0) AS bytes, COALESCE(SUM(pages), 0) AS pages
         FROM documents WHERE collection_id = ? GROUP BY status`,
      ),
      statsByLanguage: db.prepare('SELECT language AS k, COUNT(*) AS n FROM documents WHERE collection_id = ? AND language IS NOT NULL GROUP BY language'),
      statsByType: db.prepare('SELECT type AS k, COUNT(*) AS n FROM documents WHERE collection_id = ? AND type IS NOT NULL GROUP BY type'),

      document: db.prepare('SELECT * FROM documents WHERE id = ? AND collection_id = ?'),
      documentsByIds: db.prepare('SELECT d.* FROM json_each(?) AS j JOIN documents AS d ON d.id = j.value WHERE d.collection_id = ?'),
      failedDocuments: db.prepare("SELECT * FROM documents WHERE collection_id = ? AND status = 'failed' ORDER BY seq LIMIT ?"),
      documentAnywhere: db.prepare('SELECT * FROM documents WHERE id = ?'),
      documentByKey: db.prepare('SELECT * FROM documents WHERE collection_id = ? AND source_key = ?'),
      insertPending: db.prepare(
        `INSERT INTO documents (id, collection_id, source, source_kind, source_key, filename, status, chunk_count, revision, created_at, updated_at)
         VALUES (@id, @collection_id, @source, @source_kind, @source_key, @filename, 'pending', 0, 0, @at, @at) RETURNING *`,
      ),
      commitDocument: db.prepare(
        `UPDATE documents SET source = @source, source_kind = @source_kind, source_key = @source_key, filename = @filename,
           content_sha256 = @content_sha256, bytes = @bytes, type = @type, title = @title, pages = @pages, language = @language,
           status = 'ready', error_code = NULL, error_message = NULL, chunk_count = @chunk_count, revision = revision + 1,
           updated_at = @at, ingested_at = @at, read_seq = COALESCE(@read_seq, read_seq)
         WHERE id = @id RETURNING *`,
      ),
      failDocument: db.prepare(
        `UPDATE documents SET status = 'failed', error_code = ?, error_message = ?, updated_at = ? WHERE id = ? RETURNING *`,
      ),
      deleteDocument: db.prepare('DELETE FROM documents WHERE id = ?'),
      insertHistory: db.prepare(
        'INSERT INTO history (document_id, collection_id, at, action, content_sha256, job_id, detail) VALUES (?, ?, ?, ?, ?, ?, ?)',
      ),
      history: db.prepare('SELECT at, action, content_sha256, job_id, detail FROM history WHERE document_id = ? ORDER BY id'),

      chunkIdsOf: db.prepare('SELECT id FROM chunks WHERE document_id = ? ORDER BY id').pluck(),
      deleteChunksOf: db.prepare('DELETE FROM chunks WHERE document_id = ?'),
      insertChunk: db.prepare(
        `INSERT INTO chunks (document_id, collection_id, ord, text, page_start, page_end, heading_path, char_start, char_end, importance, content_type)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      insertVector: db.prepare('INSERT INTO chunk_vectors (chunk_id, vector) VALUES (?, ?)'),
      chunksByIds: db.prepare(`SELECT ${CHUNK_COLUMNS_C} FROM json_each(?) AS j JOIN chunks AS c ON c.id = j.value ORDER BY j.key`),
      indexChunksByIds: db.prepare(`SELECT ${CHUNK_COLUMNS_C}, ${CHUNK_LANGUAGE} FROM json_each(?) AS j JOIN chunks AS c ON c.id = j.value ORDER BY j.key`),
      documentChunks: db.prepare(`SELECT ${CHUNK_COLUMNS} FROM chunks WHERE document_id = ? AND ord BETWEEN ? AND ? ORDER BY ord`),
      chunkBatch: db.prepare(`SELECT ${CHUNK_COLUMNS_C}, ${CHUNK_LANGUAGE} FROM chunks AS c WHERE c.collection_id = ? AND c.id > ? ORDER BY c.id LIMIT ?`),
      vectorBatch: db.prepare(
        `SELECT c.id AS id, v.vector AS vector FROM chunks AS c JOIN chunk_vectors AS v ON v.chunk_id = c.id
         WHERE c.collection_id = ? AND c.id > ? ORDER BY c.id LIMIT ?`,
      ),

      insertJob: db.prepare(
        `INSERT INTO jobs (id, collection, status, reason, items, counts, created_at, started_at, finished_at, resumed, owner, feed)
         VALUES (@id, @collection, @status, @reason, @items, @counts, @created_at, @started_at, @finished_at, @resumed, @owner, @feed)`,
      ),
      updateJob: db.prepare(
        `UPDATE jobs SET collection = @collection, status = @status, reason = @reason, items = @items, counts = @counts,
           started_at = @started_at, finished_at = @finished_at, resumed = @resumed, feed = @feed WHERE id = @id`,
      ),
      job: db.prepare('SELECT * FROM jobs WHERE id = ?'),
      unfinishedJobs: db.prepare("SELECT * FROM jobs WHERE status IN ('queued', 'running') ORDER BY created_at, id"),
      setCancelRequested: db.prepare('UPDATE jobs SET cancel_requested = ? WHERE id = ?'),
      setOwner: db.prepare('UPDATE jobs SET owner = ? WHERE id = ?'),
      unfinishedJobCount: db.prepare("SELECT COUNT(*) FROM jobs WHERE status IN ('queued', 'running')"),
    };
  }

  /** A statement for a SQL text built from a filter combination, prepared once (bounded cache). */
  private stmt(sql: string): Statement {
    let s = this.cache.get(sql);
    if (s) {
      this.cache.delete(sql);
    } else {
      s = this.db.prepare(sql);
      if (this.cache.size >= STATEMENT_CACHE_MAX) this.cache.delete(this.cache.keys().next().value!);
    }
    this.cache.set(sql, s);
    return s;
  }

  /** Runs `fn`, turning storage failures (disk full, I/O, corrupt) into STORAGE_UNAVAILABLE. */
  private guard<T>(what: string, fn: () => T): T {
    if (this.closed) throw toolError('STORAGE_UNAVAILABLE', 'knowledge base store is closed');
    try {
      return fn();
    } catch (err) {
      if (isToolError(err)) throw err;
      if (isStorageFailure(err)) {
        const e = kbStorageError(what, err);
        this.storageFailure = e.message;
        throw e;
      }
      if ((err as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE') throw toolError('CONFLICT', `${what}: it conflicts with an existing row (${(err as Error).message})`, err);
      throw err;
    }
  }

  private tx<T>(what: string, fn: () => T): T {
    const out = this.guard(what, () => this.db.transaction(fn).immediate());
    // A write went through: the storage takes writes again.
    this.storageFailure = null;
    return out;
  }

  /** Addition to KbStoreApi: 'degraded' with the reason while writes (or reads) fail, for /health. */
  storageState(): { state: 'ok' | 'degraded'; reason?: string } {
    return this.storageFailure === null ? { state: 'ok' } : { state: 'degraded', reason: this.storageFailure };
  }

  // ---- collections ----

  createCollection(name: string, description: string | null, opts: { chunk_size?: number | null } = {}): CollectionRecord {
    if (typeof name !== 'string' || !NAME_RE.test(name)) {
      throw toolError('VALIDATION_ERROR', `collection name must match ${COLLECTION_NAME_PATTERN} (lowercase letters, digits, '-' and '_', 1-64 characters)`);
    }
    return this.guard('cannot create the collection', () => {
      try {
        const at = now();
        const c = this.s.insertCollection.get(name, description, opts.chunk_size ?? null, at, at) as CollectionRecord;
        // From now on an empty database file here is refused, not taken for a new one (db.ts).
        writeCollectionsMarker(this.dir);
        return c;
      } catch (err) {
        if ((err as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE') throw toolError('CONFLICT', `collection "${name}" already exists`);
        throw err;
      }
    });
  }

  getCollection(name: string): CollectionRecord | null {
    return this.guard('read failed', () => (this.s.collectionByName.get(name) as CollectionRecord | undefined) ?? null);
  }

  /** Addition to KbStoreApi: a collection by its integer id, or null. */
  getCollectionById(collectionId: number): CollectionRecord | null {
    return this.guard('read failed', () => (this.s.collectionById.get(collectionId) as CollectionRecord | undefined) ?? null);
  }

  listCollections(): CollectionRecord[] {
    return this.guard('read failed', () => this.s.collections.all() as CollectionRecord[]);
  }

  collectionStats(collectionId: number): CollectionStats {
    return this.guard('read failed', () => {
      const stats: CollectionStats = {
        documents: 0,
        documents_by_status: { pending: 0, ready: 0, failed: 0 },
        chunks: 0,
        bytes: 0,
        pages: 0,
        languages: {},
        types: {},
      };
      for (const r of this.s.statsByStatus.all(collectionId) as Array<{ status: DocumentStatus; n: number; chunks: number; bytes: number; pages: number }>) {
        stats.documents += r.n;
        stats.documents_by_status[r.status] = r.n;
        stats.chunks += r.chunks;
        stats.bytes += r.bytes;
        stats.pages += r.pages;
      }
      for (const r of this.s.statsByLanguage.all(collectionId) as Array<{ k: string; n: number }>) stats.languages[r.k] = r.n;
      for (const r of this.s.statsByType.all(collectionId) as Array<{ k: string; n: number }>) stats.types[r.k] = r.n;
      return stats;
    });
  }

  deleteCollection(collectionId: number): { documents: number; chunks: number } {
    return this.tx('cannot delete the collection', () => {
      const c = this.s.collectionById.get(collectionId) as CollectionRecord | undefined;
      if (!c) throw toolError('NOT_FOUND', `collection ${collectionId} not found`);
      const documents = this.s.countDocs.get(collectionId) as number;
      const chunks = this.s.countChunks.get(collectionId) as number;
      this.s.deleteJobsOf.run(c.name);
      // CASCADE: documents, chunks, chunk_vectors, history.
      this.s.deleteCollection.run(collectionId);
      return { documents, chunks };
    });
  }

  setCollectionEmbedder(collectionId: number, embedderId: string, dimension: number): void {
    if (!Number.isInteger(dimension) || dimension <= 0) throw toolError('VALIDATION_ERROR', `embedding dimension must be a positive integer, got ${dimension}`);
    this.tx('cannot set the embedder', () => {
      const c = this.s.collectionById.get(collectionId) as CollectionRecord | undefined;
      if (!c) throw toolError('NOT_FOUND', `collection ${collectionId} not found`);
      if (c.embedder === embedderId && c.dimension === dimension) return;
      if (c.embedder !== null) {
        throw toolError('CONFLICT', `collection "${c.name}" is embedded with ${c.embedder} (${c.dimension} dimensions), not ${embedderId} (${dimension})`);
      }
      this.s.setEmbedder.run(embedderId, dimension, now(), collectionId);
    });
  }

  // ---- documents ----

  getDocument(collectionId: number, documentId: string): DocumentRecord | null {
    return this.guard('read failed', () => {
      const r = this.s.document.get(documentId, collectionId) as DocumentRow | undefined;
      return r ? toDocument(r) : null;
    });
  }

  documentsByIds(collectionId: number, ids: readonly string[]): DocumentRecord[] {
    return this.guard('read failed', () => (this.s.documentsByIds.all(JSON.stringify(ids), collectionId) as DocumentRow[]).map(toDocument));
  }

  failedDocuments(collectionId: number, limit: number): DocumentRecord[] {
    return this.guard('read failed', () => (this.s.failedDocuments.all(collectionId, limit) as DocumentRow[]).map(toDocument));
  }

  findDocumentBySourceKey(collectionId: number, sourceKey: string): DocumentRecord | null {
    return this.guard('read failed', () => {
      const r = this.s.documentByKey.get(collectionId, sourceKey) as DocumentRow | undefined;
      return r ? toDocument(r) : null;
    });
  }

  listDocuments(collectionId: number, q: DocumentQuery = {}): Page<DocumentRecord> {
    const { offset, limit } = pageWindow(q.offset, q.limit);
    const where = ['collection_id = @collection_id'];
    const params: Record<string, unknown> = { collection_id: collectionId, offset, limit };
    if (q.status !== undefined) {
      where.push('status = @status');
      params.status = q.status;
    }
    if (q.source_prefix) {
      // A plain prefix comparison: no LIKE, so '%' and '_' in the prefix are literal.
      where.push('substr(source, 1, length(@prefix)) = @prefix');
      params.prefix = q.source_prefix;
    }
    if (q.type !== undefined) {
      where.push('type = @type');
      params.type = q.type;
    }
    if (q.language !== undefined) {
      where.push('language = @language');
      params.language = q.language;
    }
    const cond = where.join(' AND ');
    return this.guard('read failed', () => {
      const total = this.stmt(`SELECT COUNT(*) FROM documents WHERE ${cond}`).pluck().get(params) as number;
      const rows = this.stmt(`SELECT * FROM documents WHERE ${cond} ORDER BY seq LIMIT @limit OFFSET @offset`).all(params) as DocumentRow[];
      return pageOf(rows.map(toDocument), total, offset);
    });
  }

  ensureDocument(collectionId: number, v: Pick<DocumentVersion, 'source' | 'source_kind' | 'source_key' | 'filename'>): DocumentRecord {
    return this.tx('cannot add the document', () => {
      const existing = this.s.documentByKey.get(collectionId, v.source_key) as DocumentRow | undefined;
      if (existing) return toDocument(existing);
      if (!this.s.collectionById.get(collectionId)) throw toolError('NOT_FOUND', `collection ${collectionId} not found`);
      for (let attempt = 0; ; attempt++) {
        const id = newDocumentId();
        if (attempt < 5 && this.s.documentAnywhere.get(id)) continue;
        const row = this.s.insertPending.get({ id, collection_id: collectionId, source: v.source, source_kind: v.source_kind, source_key: v.source_key, filename: v.filename, at: now() }) as DocumentRow;
        return toDocument(row);
      }
    });
  }

  replaceDocument(collectionId: number, documentId: string, v: DocumentVersion, chunks: NewChunk[], vectors?: Float32Array[]): CommitResult {
    if (vectors !== undefined && vectors.length !== chunks.length) {
      throw toolError('INTERNAL_ERROR', `replaceDocument got ${vectors.length} vectors for ${chunks.length} chunks`);
    }
    return this.tx('cannot store the document', () => {
      const doc = this.s.document.get(documentId, collectionId) as DocumentRow | undefined;
      if (!doc) throw toolError('NOT_FOUND', `document ${documentId} not found in collection ${collectionId}`);
      const superseded = this.supersededBy(doc, v);
      if (superseded) return superseded;
      if (vectors && vectors.length > 0) {
        const c = this.s.collectionById.get(collectionId) as CollectionRecord;
        const dim = vectors[0]!.length;
        if (c.dimension === null) throw toolError('CONFLICT', `collection "${c.name}" has no embedder set: call setCollectionEmbedder before storing vectors`);
        if (vectors.some((x) => x.length !== c.dimension)) {
          throw toolError('CONFLICT', `vectors of ${dim} dimensions do not fit collection "${c.name}" (${c.dimension}, ${c.embedder})`);
        }
      }
      const removedChunkIds = this.s.chunkIdsOf.all(documentId) as number[];
      this.s.deleteChunksOf.run(documentId); // CASCADE: their vectors
      const added: ChunkRecord[] = new Array(chunks.length);
      for (let i = 0; i < chunks.length; i++) {
        const c = chunks[i]!;
        const info = this.s.insertChunk.run(
          documentId,
          collectionId,
          c.ord,
          c.text,
          c.page_start,
          c.page_end,
          JSON.stringify(c.heading_path ?? []),
          c.char_start,
          c.char_end,
          c.importance,
          c.content_type,
        );
        const id = Number(info.lastInsertRowid);
        if (vectors) this.s.insertVector.run(id, vectorToBlob(vectors[i]!));
        added[i] = {
          id,
          document_id: documentId,
          collection_id: collectionId,
          ord: c.ord,
          text: c.text,
          page_start: c.page_start,
          page_end: c.page_end,
          heading_path: c.heading_path ?? [],
          char_start: c.char_start,
          char_end: c.char_end,
          importance: c.importance,
          content_type: c.content_type,
        };
      }
      const at = now();
      const row = this.s.commitDocument.get({
        id: documentId,
        source: v.source,
        source_kind: v.source_kind,
        source_key: v.source_key,
        filename: v.filename,
        content_sha256: v.content_sha256,
        bytes: v.bytes,
        type: v.type,
        title: v.title,
        pages: v.pages,
        language: v.language,
        chunk_count: chunks.length,
        at,
        read_seq: v.read_seq ?? null,
      }) as DocumentRow;
      const version = this.s.bumpVersion.pluck().get(at, collectionId) as number;
      this.s.insertHistory.run(documentId, collectionId, at, 'ingested', v.content_sha256, v.job_id, `revision ${row.revision}, ${chunks.length} chunks`);
      const result: CommitResult = { document: toDocument(row), version, removedChunkIds, added };
      if (vectors) result.vectors = vectors;
      return result;
    });
  }

  /**
   * The rule "for one source in one collection, the content read last wins" (README, Ordering):
   * inside replaceDocument's transaction, a version whose read (v.read_seq, from takeReadSeq) is
   * older than the stored version's is discarded: nothing changes but a 'skipped' history row
   * saying so, and the result carries `superseded`. A version without a read number (callers from
   * before the rule) is not ordered; a stored row without one (committed before migration 4)
   * loses to any read.
   */
  private supersededBy(doc: DocumentRow, v: DocumentVersion): CommitResult | null {
    const incoming = v.read_seq ?? null;
    const stored = doc.read_seq ?? null;
    if (incoming === null || stored === null || incoming >= stored) return null;
    const detail = `superseded: this read (#${incoming}) is older than the stored version's (#${stored}); discarded`;
    this.s.insertHistory.run(doc.id, doc.collection_id, now(), 'skipped', v.content_sha256, v.job_id, detail);
    const c = this.s.collectionById.get(doc.collection_id) as CollectionRecord;
    return { document: toDocument(doc), version: c.version, removedChunkIds: [], added: [], superseded: { read_seq: incoming, stored_read_seq: stored } };
  }

  /**
   * Addition to KbStoreApi: the next read sequence number, taken in a tiny IMMEDIATE transaction
   * on the meta counter, so processes sharing the file (replicas, workers) get distinct, ordered
   * numbers. Taken just before a document's bytes are fetched or opened (ingest-document.ts).
   */
  takeReadSeq(): number {
    return this.tx('cannot take a read sequence number', () => {
      const n = this.stmt(`UPDATE meta SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT) WHERE key = '${READ_SEQ_KEY}' RETURNING CAST(value AS INTEGER)`)
        .pluck()
        .get() as number | undefined;
      if (n === undefined) throw toolError('STORAGE_UNAVAILABLE', 'knowledge base database lacks its read counter (meta read_seq); it was not migrated');
      return n;
    });
  }

  /** Addition to KbStoreApi: the database's random identity (meta database_id, migration 4), carried by index snapshots. */
  databaseId(): string {
    return this.guard('read failed', () => {
      const id = this.stmt('SELECT value FROM meta WHERE key = ?').pluck().get(DATABASE_ID_KEY) as string | undefined;
      if (!id) throw toolError('STORAGE_UNAVAILABLE', 'knowledge base database lacks its identity (meta database_id); it was not migrated');
      return id;
    });
  }

  markDocumentFailed(collectionId: number, documentId: string, error: DocumentError, jobId: string | null): DocumentRecord {
    return this.tx('cannot record the failure', () => {
      const doc = this.s.document.get(documentId, collectionId) as DocumentRow | undefined;
      if (!doc) throw toolError('NOT_FOUND', `document ${documentId} not found in collection ${collectionId}`);
      const at = now();
      const row = this.s.failDocument.get(error.code, error.message, at, documentId) as DocumentRow;
      this.s.insertHistory.run(documentId, collectionId, at, 'failed', null, jobId, `${error.code}: ${error.message}`.slice(0, 2_000));
      return toDocument(row);
    });
  }

  deleteDocument(collectionId: number, documentId: string, why: { jobId?: string | null; reason?: string } = {}): { version: number; removedChunkIds: number[] } {
    return this.tx('cannot delete the document', () => {
      const doc = this.s.document.get(documentId, collectionId) as DocumentRow | undefined;
      if (!doc) throw toolError('NOT_FOUND', `document ${documentId} not found in collection ${collectionId}`);
      const removedChunkIds = this.s.chunkIdsOf.all(documentId) as number[];
      this.s.deleteDocument.run(documentId); // CASCADE: chunks, their vectors
      const at = now();
      const version = this.s.bumpVersion.pluck().get(at, collectionId) as number;
      const detail = `${removedChunkIds.length} chunks removed${why.reason ? `; ${why.reason}` : ''}`.slice(0, 2_000);
      this.s.insertHistory.run(documentId, collectionId, at, 'deleted', doc.content_sha256, why.jobId ?? null, detail);
      return { version, removedChunkIds };
    });
  }

  history(documentId: string): HistoryEntry[] {
    return this.guard('read failed', () => this.s.history.all(documentId) as HistoryEntry[]);
  }

  deletion(collectionId: number, documentId: string): HistoryEntry | null {
    const sql = "SELECT at, action, content_sha256, job_id, detail FROM history WHERE document_id = ? AND collection_id = ? AND action = 'deleted' ORDER BY id DESC LIMIT 1";
    return this.guard('read failed', () => (this.db.prepare(sql).get(documentId, collectionId) as HistoryEntry | undefined) ?? null);
  }

  /**
   * With `readSeq`: one transaction that records the skip only when the stored version is still
   * ready with this content (false: another commit changed it meanwhile; ingest it), and moves the
   * stored read number up to this read, so a commit of an older read of other content that
   * arrives later is discarded (the bytes read last were these).
   */
  recordSkipped(documentId: string, contentSha256: string, jobId: string | null, readSeq?: number | null): boolean {
    return this.tx('cannot record the skip', () => {
      const doc = this.s.documentAnywhere.get(documentId) as DocumentRow | undefined;
      if (!doc) throw toolError('NOT_FOUND', `document ${documentId} not found`);
      if (readSeq !== undefined && readSeq !== null) {
        if (doc.status !== 'ready' || doc.content_sha256 !== contentSha256) return false;
        this.stmt('UPDATE documents SET read_seq = MAX(COALESCE(read_seq, 0), ?) WHERE id = ?').run(readSeq, documentId);
      }
      this.s.insertHistory.run(documentId, doc.collection_id, now(), 'skipped', contentSha256, jobId, 'unchanged');
      return true;
    });
  }

  /** Ready and failed documents per detected language (the query-language fallback reads it). */
  documentLanguages(collectionId: number): Record<string, number> {
    return this.guard('read failed', () => {
      const out: Record<string, number> = {};
      for (const r of this.s.statsByLanguage.all(collectionId) as Array<{ k: string; n: number }>) out[r.k] = r.n;
      return out;
    });
  }

  // ---- chunks ----

  getChunks(ids: readonly number[]): ChunkRecord[] {
    if (ids.length === 0) return [];
    return this.guard('read failed', () => (this.s.chunksByIds.all(JSON.stringify(ids)) as ChunkRow[]).map(toChunk));
  }

  /** getChunks with each chunk's language (its document's), for building indexes. */
  getChunksForIndex(ids: readonly number[]): ChunkRecord[] {
    if (ids.length === 0) return [];
    return this.guard('read failed', () => (this.s.indexChunksByIds.all(JSON.stringify(ids)) as ChunkRow[]).map(toChunk));
  }

  documentChunks(documentId: string, fromOrd = 0, toOrd = Number.MAX_SAFE_INTEGER): ChunkRecord[] {
    return this.guard('read failed', () => (this.s.documentChunks.all(documentId, fromOrd, toOrd) as ChunkRow[]).map(toChunk));
  }

  *iterateChunks(collectionId: number, batchSize = DEFAULT_BATCH_SIZE): IterableIterator<ChunkRecord> {
    const size = Math.max(1, Math.floor(batchSize));
    let last = 0;
    for (;;) {
      const rows = this.guard('read failed', () => this.s.chunkBatch.all(collectionId, last, size) as ChunkRow[]);
      for (const r of rows) yield toChunk(r);
      if (rows.length < size) return;
      last = rows[rows.length - 1]!.id;
    }
  }

  *iterateVectors(collectionId: number, batchSize = DEFAULT_BATCH_SIZE): IterableIterator<{ id: number; vector: Float32Array }> {
    const size = Math.max(1, Math.floor(batchSize));
    let last = 0;
    for (;;) {
      const rows = this.guard('read failed', () => this.s.vectorBatch.all(collectionId, last, size) as Array<{ id: number; vector: Buffer }>);
      for (const r of rows) yield { id: r.id, vector: blobToVector(r.vector) };
      if (rows.length < size) return;
      last = rows[rows.length - 1]!.id;
    }
  }

  chunkIdsWhere(collectionId: number, filters: SearchFilters): number[] {
    const where = ['c.collection_id = @collection_id'];
    const docWhere: string[] = [];
    const params: Record<string, unknown> = { collection_id: collectionId };
    if (filters.document_ids !== undefined) {
      where.push('c.document_id IN (SELECT value FROM json_each(@document_ids))');
      params.document_ids = JSON.stringify(filters.document_ids);
    }
    if (filters.source_prefix) {
      // A plain prefix comparison: no LIKE, so '%' and '_' in the prefix are literal.
      docWhere.push('substr(d.source, 1, length(@prefix)) = @prefix');
      params.prefix = filters.source_prefix;
    }
    if (filters.language !== undefined) {
      docWhere.push('d.language IN (SELECT value FROM json_each(@languages))');
      params.languages = JSON.stringify(filters.language);
    }
    if (docWhere.length > 0) {
      // Document-level filters pick a (small) set of documents first.
      where.push(`c.document_id IN (SELECT d.id FROM documents AS d WHERE d.collection_id = @collection_id AND ${docWhere.join(' AND ')})`);
    }
    if (filters.content_type !== undefined) {
      where.push('c.content_type IN (SELECT value FROM json_each(@content_types))');
      params.content_types = JSON.stringify(filters.content_type);
    }
    const pageFrom = filters.page_from;
    const pageTo = filters.page_to;
    if (pageFrom !== undefined || pageTo !== undefined) {
      // Overlap of [page_start, page_end] with [page_from, page_to]; chunks without pages never match.
      where.push('c.page_start IS NOT NULL AND c.page_end IS NOT NULL');
      if (pageTo !== undefined) {
        where.push('c.page_start <= @page_to');
        params.page_to = pageTo;
      }
      if (pageFrom !== undefined) {
        where.push('c.page_end >= @page_from');
        params.page_from = pageFrom;
      }
    }
    // Every column named is in chunks_filter: an index-only scan (then a sort of the ids). Without
    // INDEXED BY the planner picks chunks_by_collection_id to skip the sort and reads every row.
    const index = where.length > 1 ? ' INDEXED BY chunks_filter' : '';
    const sql = `SELECT c.id FROM chunks AS c${index} WHERE ${where.join(' AND ')} ORDER BY c.id`;
    return this.guard('read failed', () => this.stmt(sql).pluck().all(params) as number[]);
  }

  // ---- jobs ----

  private jobParams(job: JobRecord): Record<string, unknown> {
    return {
      id: job.id,
      collection: job.collection,
      status: job.status,
      reason: job.reason,
      items: JSON.stringify(job.items),
      counts: JSON.stringify(job.counts),
      created_at: job.created_at,
      started_at: job.started_at,
      finished_at: job.finished_at,
      resumed: job.resumed,
      feed: job.feed ? JSON.stringify(job.feed) : null,
    };
  }

  createJob(job: JobRecord): void {
    this.write('cannot record the job', () => {
      try {
        this.s.insertJob.run({ ...this.jobParams(job), owner: this.handle });
      } catch (err) {
        if ((err as { code?: string }).code === 'SQLITE_CONSTRAINT_PRIMARYKEY') throw toolError('CONFLICT', `job ${job.id} already exists`);
        throw err;
      }
    });
  }

  /** A job whose row is gone (its collection was deleted meanwhile) is left gone. */
  saveJob(job: JobRecord): void {
    this.write('cannot record the job', () => {
      this.s.updateJob.run(this.jobParams(job));
    });
  }

  /** A single-statement write: like guard, and a success clears the storage failure. */
  private write<T>(what: string, fn: () => T): T {
    const out = this.guard(what, fn);
    this.storageFailure = null;
    return out;
  }

  getJob(id: string): JobRecord | null {
    return this.guard('read failed', () => {
      const r = this.s.job.get(id) as JobRow | undefined;
      return r ? toJob(r) : null;
    });
  }

  /** Newest first. */
  listJobs(q: { collection?: string; collections?: readonly string[]; status?: JobStatus; offset?: number; limit?: number } = {}): Page<JobRecord> {
    const { offset, limit } = pageWindow(q.offset, q.limit);
    const where: string[] = [];
    const params: Record<string, unknown> = { offset, limit };
    if (q.collection !== undefined) {
      where.push('collection = @collection');
      params.collection = q.collection;
    }
    if (q.collections !== undefined) {
      // Only these collections' jobs (an API key's visible collections, src/auth/principal.ts).
      where.push('collection IN (SELECT value FROM json_each(@collections))');
      params.collections = JSON.stringify(q.collections);
    }
    if (q.status !== undefined) {
      where.push('status = @status');
      params.status = q.status;
    }
    const cond = where.length ? ` WHERE ${where.join(' AND ')}` : '';
    return this.guard('read failed', () => {
      const total = this.stmt(`SELECT COUNT(*) FROM jobs${cond}`).pluck().get(params) as number;
      const rows = this.stmt(`SELECT * FROM jobs${cond} ORDER BY created_at DESC, id DESC LIMIT @limit OFFSET @offset`).all(params) as JobRow[];
      return pageOf(rows.map(toJob), total, offset);
    });
  }

  unfinishedJobs(): JobRecord[] {
    return this.guard('read failed', () => (this.s.unfinishedJobs.all() as JobRow[]).map(toJob));
  }

  unfinishedJobCount(): number {
    return this.guard('read failed', () => this.s.unfinishedJobCount.pluck().get() as number);
  }

  /**
   * Unfinished jobs no live process runs (their process died or stopped, or they were made before
   * jobs had owners), now owned by this store's process: what a start-up may resume. Jobs of
   * another process that still has the file open are left to it.
   */
  claimOrphanJobs(): JobRecord[] {
    return this.tx('cannot record the job', () => {
      const live = liveHandleKeys(this.db);
      const rows = (this.s.unfinishedJobs.all() as JobRow[]).filter((r) => r.owner === null || r.owner === this.handle || !live.has(r.owner));
      for (const r of rows) this.s.setOwner.run(this.handle, r.id);
      return rows.map(toJob);
    });
  }

  /**
   * Addition to KbStoreApi: who runs an unfinished job. 'this': this store owns it; 'live':
   * another process that still has the file open; 'gone': its owner is dead (or it never had
   * one); null when the job is unknown or ended.
   */
  jobOwner(id: string): 'this' | 'live' | 'gone' | null {
    return this.guard('read failed', () => {
      const r = this.s.job.get(id) as JobRow | undefined;
      if (!r || (r.status !== 'queued' && r.status !== 'running')) return null;
      if (r.owner !== null && r.owner === this.handle) return 'this';
      return r.owner !== null && handleIsLive(this.db, r.owner) ? 'live' : 'gone';
    });
  }

  /**
   * Addition to KbStoreApi: claims one unfinished job whose owner is gone (or this store) in one
   * IMMEDIATE transaction, so two processes cancelling or adopting it at once cannot both take
   * it; null when it ended, is unknown, or a live process runs it.
   */
  claimJob(id: string): JobRecord | null {
    return this.tx('cannot record the job', () => {
      const r = this.s.job.get(id) as JobRow | undefined;
      if (!r || (r.status !== 'queued' && r.status !== 'running')) return null;
      if (r.owner !== null && r.owner !== this.handle && handleIsLive(this.db, r.owner)) return null;
      this.s.setOwner.run(this.handle, r.id);
      return toJob(r);
    });
  }

  /**
   * Read-modify-write of one job in one IMMEDIATE transaction, so processes that update items of
   * the same job at once (ingestion workers) serialize on SQLite's write lock and none loses
   * another's change. `mutate` may set flags.cancelRequested; returning false writes nothing.
   * null when the job is gone.
   */
  updateJob(id: string, mutate: (job: JobRecord, flags: { cancelRequested: boolean }) => void | false): JobRecord | null {
    return this.tx('cannot record the job', () => {
      const r = this.s.job.get(id) as JobRow | undefined;
      if (!r) return null;
      const job = toJob(r);
      const flags = { cancelRequested: r.cancel_requested === 1 };
      if (mutate(job, flags) === false) return job;
      this.s.updateJob.run(this.jobParams(job));
      if (flags.cancelRequested !== (r.cancel_requested === 1)) this.s.setCancelRequested.run(flags.cancelRequested ? 1 : 0, id);
      return job;
    });
  }

  /** Whether cancelling the job was asked for (by any process); false for an unknown job. */
  jobCancelRequested(id: string): boolean {
    return this.guard('read failed', () => (this.s.job.get(id) as JobRow | undefined)?.cancel_requested === 1);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.cache.clear();
    if (this.heartbeat) clearInterval(this.heartbeat);
    try {
      this.db.pragma('optimize');
      // Clean only when this was the last process with the file open (replicas share it).
      if (this.handle) releaseHandle(this.db, this.handle);
      else markShutdown(this.db, 'clean');
    } catch {
      // best effort: without the mark the next open runs quick_check
    }
    this.db.close();
  }

  // ---- shared DATA_DIR: index catch-up and snapshot leases (several processes, one file) ----
  // Chunk rows (and their vectors) are immutable once committed: replaceDocument deletes a
  // document's old rows and inserts new ones under fresh AUTOINCREMENT ids, nothing UPDATEs them.
  // So an index that holds a chunk id holds that chunk's current content, and bringing an index
  // up to date is a diff of id sets.

  /**
   * Addition to KbStoreApi: the collection's version, embedder and live chunk ids (ascending),
   * read in one read transaction (one WAL snapshot: the ids are exactly those of that version);
   * null when the collection is gone. An index-only scan of chunks_by_collection_id.
   */
  collectionChunkIds(collectionId: number): { version: number; embedder: string | null; dimension: number | null; ids: number[] } | null {
    return this.guard('read failed', () =>
      this.db
        .transaction(() => {
          const c = this.s.collectionById.get(collectionId) as CollectionRecord | undefined;
          if (!c) return null;
          const ids = this.stmt('SELECT id FROM chunks WHERE collection_id = ? ORDER BY id').pluck().all(collectionId) as number[];
          return { version: c.version, embedder: c.embedder, dimension: c.dimension, ids };
        })
        .deferred(),
    );
  }

  /** Addition to KbStoreApi: the collection's version and embedder, or null when it is gone (a cheap point read). */
  collectionState(collectionId: number): { version: number; embedder: string | null; dimension: number | null } | null {
    return this.guard('read failed', () => {
      const c = this.s.collectionById.get(collectionId) as CollectionRecord | undefined;
      return c ? { version: c.version, embedder: c.embedder, dimension: c.dimension } : null;
    });
  }

  /** Addition to KbStoreApi: up to `limit` live chunk ids of the collection above `afterId`, ascending (one index seek). */
  chunkIdPage(collectionId: number, afterId: number, limit: number): number[] {
    return this.guard('read failed', () => this.stmt('SELECT id FROM chunks WHERE collection_id = ? AND id > ? ORDER BY id LIMIT ?').pluck().all(collectionId, afterId, limit) as number[]);
  }

  /** Addition to KbStoreApi: live chunks of the collection with an id at or below `maxId` (an index-only count). */
  chunkCountThrough(collectionId: number, maxId: number): number {
    return this.guard('read failed', () => this.stmt('SELECT count(*) FROM chunks WHERE collection_id = ? AND id <= ?').pluck().get(collectionId, maxId) as number);
  }

  /** Addition to KbStoreApi: stored vectors of these chunks, in the order asked (chunks without one left out). */
  chunkVectors(ids: readonly number[]): Array<{ id: number; vector: Float32Array }> {
    if (ids.length === 0) return [];
    return this.guard('read failed', () => {
      const rows = this.stmt('SELECT v.chunk_id AS id, v.vector AS vector FROM json_each(?) AS j JOIN chunk_vectors AS v ON v.chunk_id = j.value ORDER BY j.key').all(
        JSON.stringify(ids),
      ) as Array<{ id: number; vector: Buffer }>;
      return rows.map((r) => ({ id: r.id, vector: blobToVector(r.vector) }));
    });
  }

  /**
   * Addition to KbStoreApi: takes (or renews) the lease `key` for `owner` for `ttlMs`, in one
   * IMMEDIATE transaction on the meta table, so of several processes on this file exactly one
   * holds it; false while another owner holds an unexpired one. A holder that dies leaves it to
   * expire. Used to keep two processes from writing one index snapshot folder at once.
   */
  acquireLease(key: string, owner: string, ttlMs: number): boolean {
    return this.tx('cannot take the lease', () => {
      const held = this.leaseRow(key);
      const at = Date.now();
      if (held && held.owner !== owner && held.expires > at) return false;
      this.stmt('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value').run(
        `lease:${key}`,
        JSON.stringify({ owner, expires: at + ttlMs }),
      );
      return true;
    });
  }

  /** Addition to KbStoreApi: gives the lease back when `owner` holds it. */
  releaseLease(key: string, owner: string): void {
    this.tx('cannot release the lease', () => {
      if (this.leaseRow(key)?.owner === owner) this.stmt('DELETE FROM meta WHERE key = ?').run(`lease:${key}`);
    });
  }

  /** Addition to KbStoreApi: the owner of the unexpired lease `key`, or null. */
  leaseHolder(key: string): string | null {
    return this.guard('read failed', () => {
      const held = this.leaseRow(key);
      return held && held.expires > Date.now() ? held.owner : null;
    });
  }

  private leaseRow(key: string): { owner: string; expires: number } | null {
    const raw = this.stmt('SELECT value FROM meta WHERE key = ?').pluck().get(`lease:${key}`) as string | undefined;
    if (raw === undefined) return null;
    try {
      const v = JSON.parse(raw) as { owner?: unknown; expires?: unknown };
      return typeof v.owner === 'string' && typeof v.expires === 'number' ? { owner: v.owner, expires: v.expires } : null;
    } catch {
      return null; // unreadable: treated as free
    }
  }
}
