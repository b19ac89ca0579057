/**
 * The knowledge base's shared vocabulary: what the store (SQLite), the collection indexes, the
 * ingestion jobs and the search layer say to each other. Kept in one small file so each part can
 * be read (and tested) against the same contract without importing the others.
 *
 * Identity: a collection has a unique `name` (the handle in every API) and an integer id; a
 * document is identified by a string id and, within its collection, by its `source_key` (the URL,
 * `path:<realpath>` or `upload:<sha256>`); a chunk by an integer id that is never reused
 * (AUTOINCREMENT), which is also its label in the HNSW index and its slot key in BM25.
 */
import type {
  Chunk,
  Collection,
  CollectionHit,
  CollectionSearchRequest,
  CollectionSearchResult,
  CollectionStats,
  Confidence,
  Document,
  DocumentError,
  DocumentStatus,
  HistoryEntry,
  ItemProgress,
  ItemStage,
  Job,
  JobEventWire,
  JobItemWire,
  JobStatus,
  Page,
  SourceKind,
} from '../contract/kb-types.ts';

// The wire types live in src/contract (shared with the console); re-exported for the server's parts.
export type {
  CollectionHit,
  CollectionSearchRequest,
  CollectionSearchResult,
  CollectionStats,
  Confidence,
  DocumentError,
  DocumentStatus,
  HistoryEntry,
  ItemProgress,
  ItemStage,
  JobStatus,
  Page,
  SourceKind,
};

export { COLLECTION_NAME_PATTERN } from '../contract/kb-schemas.ts';

/** A collection's own record: the API's collection without its statistics. */
export type CollectionRecord = Omit<Collection, 'stats'>;

/** Bounds of a collection's chunk size (those of chunk_document's chunk_size). */
export const MIN_CHUNK_SIZE = 100;
/** Longest collection description, in characters (the tool schema and the knowledge base both use it). */
export const MAX_DESCRIPTION_CHARS = 2_000;
export const MAX_CHUNK_SIZE = 5000;

/** A document as the API answers it (src/contract/kb-schemas.ts). */
export type DocumentRecord = Document;

/** A chunk as the API answers it (src/contract/kb-schemas.ts). */
/** A stored chunk; `language` (its document's) where the read was for indexing. */
export type ChunkRecord = Chunk & { language?: string | null };

export type NewChunk = Omit<ChunkRecord, 'id' | 'document_id' | 'collection_id'>;

/** What a committed replacement changed, for the indexes to apply. */
export interface CommitResult {
  document: DocumentRecord;
  /** The collection's version after the commit. */
  version: number;
  removedChunkIds: number[];
  added: ChunkRecord[];
  /** The vectors stored with `added`, same order (absent when lexical only). */
  vectors?: Float32Array[];
  /**
   * Set when the version was discarded because the stored one was read later (the newest read
   * wins): nothing changed, `added`/`removedChunkIds` are empty, `version` is the current one.
   */
  superseded?: { read_seq: number; stored_read_seq: number };
}

/** A job item as the API answers it; merged with the server-only fields further down. */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- an interface, so the declaration below can merge into it
export interface JobItem extends JobItemWire {}

/** A job as the API answers it (its items with the server-only fields). */
export interface JobRecord extends Omit<Job, 'items'> {
  items: JobItem[];
}

export interface JobEvent extends Omit<JobEventWire, 'item'> {
  item?: JobItem;
}

// ---- The store (src/kb/kb-store.ts): synchronous better-sqlite3, every multi-row change in one transaction ----

export interface DocumentQuery {
  offset?: number;
  /** Default 50, at most 500. */
  limit?: number;
  status?: DocumentStatus;
  source_prefix?: string;
  type?: string;
  language?: string;
}

/** What replaceDocument writes for one ingested version of a source. */
export interface DocumentVersion {
  source: string;
  source_kind: SourceKind;
  source_key: string;
  filename: string | null;
  content_sha256: string;
  bytes: number;
  type: string;
  title: string | null;
  pages: number | null;
  language: string | null;
  /** The job that ingested it (history). */
  job_id: string | null;
  /**
   * When its bytes were read (KbStoreApi.takeReadSeq, taken just before the fetch or open): a
   * commit older than the stored version's read is discarded. Absent or null: not ordered.
   */
  read_seq?: number | null;
}

export interface KbStoreApi {
  createCollection(name: string, description: string | null, opts?: { chunk_size?: number | null }): CollectionRecord;
  getCollection(name: string): CollectionRecord | null;
  listCollections(): CollectionRecord[];
  collectionStats(collectionId: number): CollectionStats;
  /** Removes the collection with its documents, chunks, history and jobs rows; returns what went. */
  deleteCollection(collectionId: number): { documents: number; chunks: number };

  getDocument(collectionId: number, documentId: string): DocumentRecord | null;
  findDocumentBySourceKey(collectionId: number, sourceKey: string): DocumentRecord | null;
  listDocuments(collectionId: number, q: DocumentQuery): Page<DocumentRecord>;
  /** A pending row for a source about to be ingested (kept as is when the source exists). */
  ensureDocument(collectionId: number, v: Pick<DocumentVersion, 'source' | 'source_kind' | 'source_key' | 'filename'>): DocumentRecord;
  /**
   * One transaction: the document row gets the new version (status ready), its old chunks are
   * deleted and the new ones inserted, the collection's version is bumped, a history row is added.
   */
  replaceDocument(
    collectionId: number,
    documentId: string,
    v: DocumentVersion,
    chunks: NewChunk[],
    /** One vector per chunk, in order, by the collection's embedder (stored so HNSW can be rebuilt). */
    vectors?: Float32Array[],
  ): CommitResult;
  /** Fixes the collection's embedder on its first embedded document. */
  setCollectionEmbedder(collectionId: number, embedderId: string, dimension: number): void;
  /** Records a failed attempt (the previous version's chunks stay) and a history row. */
  markDocumentFailed(collectionId: number, documentId: string, error: DocumentError, jobId: string | null): DocumentRecord;
  /**
   * One transaction: the document and its chunks go; the collection's version is bumped. Its
   * history stays, ending in a 'deleted' row (an audit trail; deleteCollection removes it).
   * `why`: the job that deleted it and the reason, written into that row.
   */
  deleteDocument(collectionId: number, documentId: string, why?: { jobId?: string | null; reason?: string }): { version: number; removedChunkIds: number[] };
  history(documentId: string): HistoryEntry[];
  /** The 'deleted' history row of a document that is gone from the collection (its history outlives it), or null. */
  deletion?(collectionId: number, documentId: string): HistoryEntry | null;
  /**
   * A history row for an unchanged re-read. With `readSeq`: only while the stored version is ready
   * with this content (false: it changed meanwhile), raising its read number to this read.
   */
  recordSkipped(documentId: string, contentSha256: string, jobId: string | null, readSeq?: number | null): boolean | void;

  /** Chunks by id, in the order asked (missing ids left out). */
  getChunks(ids: readonly number[]): ChunkRecord[];
  /** getChunks with each chunk's language (its document's), for building indexes. Optional for stand-in stores. */
  getChunksForIndex?(ids: readonly number[]): ChunkRecord[];
  /** Documents per detected language (the query-language fallback). Optional for stand-in stores. */
  documentLanguages?(collectionId: number): Record<string, number>;
  /**
   * listDocuments(collectionId, { status: 'failed', limit }).items without counting them, and
   * documents by id in one statement: what every collection search reads. Optional for stand-in stores.
   */
  failedDocuments?(collectionId: number, limit: number): DocumentRecord[];
  documentsByIds?(collectionId: number, ids: readonly string[]): DocumentRecord[];
  /** Chunks of one document in order, ord in [fromOrd, toOrd]. */
  documentChunks(documentId: string, fromOrd?: number, toOrd?: number): ChunkRecord[];
  /** Every chunk of a collection in id order, read in batches (index rebuilds). */
  iterateChunks(collectionId: number, batchSize?: number): IterableIterator<ChunkRecord>;
  /** Stored vectors of a collection's chunks, in id order (HNSW rebuilds). */
  iterateVectors(collectionId: number, batchSize?: number): IterableIterator<{ id: number; vector: Float32Array }>;
  /** Ids of the chunks that pass search filters (document-level ones joined from documents). */
  chunkIdsWhere(collectionId: number, filters: NonNullable<CollectionSearchRequest['filters']>): number[];

  createJob(job: JobRecord): void;
  /** Writes the job row (status, reason, counts, timestamps, items as JSON) in one statement. */
  saveJob(job: JobRecord): void;
  getJob(id: string): JobRecord | null;
  listJobs(q: { collection?: string; collections?: readonly string[]; status?: JobStatus; offset?: number; limit?: number }): Page<JobRecord>;
  /** Jobs left queued or running by a process that stopped (read at start-up). */
  unfinishedJobs(): JobRecord[];
  unfinishedJobCount(): number;
  /** Unfinished jobs whose process is gone, claimed for this one (start-up resume). */
  claimOrphanJobs(): JobRecord[];
  /** One job's read-modify-write in one transaction (several processes may update its items). */
  updateJob(id: string, mutate: (job: JobRecord, flags: { cancelRequested: boolean }) => void | false): JobRecord | null;
  jobCancelRequested(id: string): boolean;
  close(): void;
}

// ---- The facade the tools and routes call (src/kb/knowledge-base.ts) ----

export interface AddDocumentsRequest {
  urls?: string[];
  /** Files or folders inside ALLOWED_DIRS (folders are walked recursively). */
  paths?: string[];
  /** Globs matched against the path relative to the folder given (e.g. '**\/*.pdf'). */
  include?: string[];
  exclude?: string[];
  upload?: { bytes: Buffer; filename?: string; contentType?: string };
  ocr?: { mode?: 'auto' | 'always' | 'never'; languages?: string[] };
  /** Create the collection when it does not exist (MCP ingest_documents does). */
  create?: boolean;
  /**
   * Allowed folders for `paths` when ALLOWED_DIRS is unset: MCP over stdio passes the client's
   * roots here (absolute paths or file:// URIs). Ignored when ALLOWED_DIRS is set; never taken
   * from REST input.
   */
  allowedDirs?: string[];
  /** The name of the API key making the request: its share of the queue (tenant-share.ts). */
  tenant?: string;
}

export interface KnowledgeBaseApi {
  /** REDIS_URL set: jobs through the Redis queue, notices over pub/sub (called once Redis answered). */
  attachDistributed?(redis: import('../redis/connection.ts').RedisConnection): Promise<void>;
  createCollection(name: string, description?: string | null, opts?: { chunk_size?: number | null }): CollectionRecord & { stats: CollectionStats };
  listCollections(): Array<CollectionRecord & { stats: CollectionStats }>;
  /** NOT_FOUND when absent. */
  getCollection(name: string): CollectionRecord & { stats: CollectionStats };
  /** Cancels its jobs, deletes rows and index files. */
  deleteCollection(name: string): Promise<{ name: string; documents: number; chunks: number }>;

  /** Returns at once with the queued job (OVERLOADED past INGEST_QUEUE_MAX). */
  addDocuments(collection: string, req: AddDocumentsRequest): Promise<JobRecord>;
  listDocuments(collection: string, q: DocumentQuery): Page<DocumentRecord>;
  getDocument(collection: string, documentId: string): DocumentRecord & { history: ReturnType<KbStoreApi['history']> };
  documentChunks(collection: string, documentId: string, q: { offset?: number; limit?: number }): Page<ChunkRecord>;
  deleteDocument(collection: string, documentId: string, why?: { jobId?: string | null; reason?: string }): Promise<{ document_id: string; chunks: number }>;
  /** A job that ingests the document's source again (forced even when unchanged, for URL and path sources). */
  reingestDocument(collection: string, documentId: string): Promise<JobRecord>;

  getJob(id: string): JobRecord;
  listJobs(q: { collection?: string; collections?: readonly string[]; status?: JobStatus; offset?: number; limit?: number }): Page<JobRecord>;
  /** CONFLICT when the job already ended. */
  cancelJob(id: string): JobRecord | Promise<JobRecord>;
  /** Live events of a job; returns the unsubscribe function. Ended jobs get one final 'job' event. */
  subscribe(jobId: string, listener: (e: JobEvent) => void): () => void;
  /** Resolves with the job when it ends or after `ms`, whichever is first. */
  waitForJob(jobId: string, ms: number, signal?: AbortSignal): Promise<JobRecord>;

  search(collection: string, req: CollectionSearchRequest, ctx: { signal: AbortSignal }): Promise<CollectionSearchResult>;
  /** For get_system_health. */
  stats(): Record<string, unknown>;
  close(): Promise<void>;
}

// ---- Added by the SURFACE helper (MCP roots) ----

/** Merged into AddDocumentsRequest above (declaration merging): an optional member only. */
export interface AddDocumentsRequest {
  /**
   * MCP over stdio: the client's roots (absolute paths or file:// URIs), used as the allowed folders
   * for `paths` when ALLOWED_DIRS is unset (ignored when ALLOWED_DIRS is set).
   */
  allowedDirs?: string[];
}

// ---- Added by the SHARED COLLECTIONS helper (issue 12: several processes on one DATA_DIR) ----

/** Merged into KbStoreApi above (declaration merging): what index catch-up and snapshot leases read. */
export interface KbStoreApi {
  /** Version, embedder and live chunk ids (ascending) of a collection, in one read snapshot; null when it is gone. */
  collectionChunkIds(collectionId: number): { version: number; embedder: string | null; dimension: number | null; ids: number[] } | null;
  /** The collection's version and embedder, or null when it is gone. */
  collectionState(collectionId: number): { version: number; embedder: string | null; dimension: number | null } | null;
  /** Up to `limit` live chunk ids above `afterId`, ascending. */
  chunkIdPage(collectionId: number, afterId: number, limit: number): number[];
  /** How many live chunks of the collection have an id at or below `maxId` (optional: catch-up then diffs every id). */
  chunkCountThrough?(collectionId: number, maxId: number): number;
  /** Stored vectors of these chunks, in the order asked (chunks without one left out). */
  chunkVectors(ids: readonly number[]): Array<{ id: number; vector: Float32Array }>;
  /** Takes or renews a cross-process lease (a meta row, IMMEDIATE transaction); false while another owner holds it. */
  acquireLease(key: string, owner: string, ttlMs: number): boolean;
  releaseLease(key: string, owner: string): void;
  /** The owner of the unexpired lease, or null. */
  leaseHolder(key: string): string | null;
}

// ---- Added for issue 19 items 3-4 (newest read wins; snapshots carry the database identity) ----

/** Merged into KbStoreApi above: optional, so test stores need not have them. */
export interface KbStoreApi {
  /** The next read sequence number (a counter in the database: ordered across processes sharing it). */
  takeReadSeq?(): number;
  /** The database's random identity, made with it; index snapshots carry it. */
  databaseId?(): string;
}

// ---- Added for issue 19 (jobs converge, ownership, storage state) ----

/** The knowledge base's storage as /health reports it: degraded with a reason (never a path). */
export interface StorageState {
  state: 'ok' | 'degraded';
  reason?: string;
}

/** Merged into KbStoreApi above (declaration merging): optional, so test stores need not have them. */
export interface KbStoreApi {
  /** Degraded while the last storage operation failed (disk full, I/O, corrupt) and no write succeeded since. */
  storageState?(): StorageState;
  /** Who runs an unfinished job: this store, another live process, or nobody any more; null when ended or unknown. */
  jobOwner?(id: string): 'this' | 'live' | 'gone' | null;
  /** Claims an unfinished job whose owner is gone (one transaction); null when it ended or a live process runs it. */
  claimJob?(id: string): JobRecord | null;
}

/** Merged into KnowledgeBaseApi above. */
export interface KnowledgeBaseApi {
  /** The storage state for /health: degraded when the database cannot be opened, is corrupt or takes no writes. */
  storageState?(): StorageState;
  /** /ready: collections whose indexes are loading (opening or catching up), and the open ones. */
  indexReadiness?(): { loading: Array<{ collection: string; state: 'opening' | 'catching-up'; since_ms: number }>; open: Array<{ collection: string; source: string; version: number; open_ms: number; approx_bytes: number; opened_by: 'search' | 'commit' }> };
}

// ---- Added for issue 19 items 1-2 (folder walks, race-safe local reads) ----

/** Merged into JobItem above: optional, absent on items of other kinds. */
export interface JobItem {
  /**
   * Local files: the file found by the walk ("dev:ino") and, when its path is not UTF-8, the
   * path's bytes (base64); the read refuses another file at that path. Not part of the API.
   */
  local?: { id?: string; raw?: string };
}

/** Merged into AddDocumentsRequest above. */
export interface AddDocumentsRequest {
  /** The request's signal: folder walks stop when it aborts (timeout, client gone). */
  signal?: AbortSignal;
}

// ---- Added for issue 22 part 4 (folders of any size) ----

/**
 * Where the walk of a job's folders stands (folder-feed.ts): persisted in the job's row with its
 * items, in the same write, so a restart resumes after the last file that became an item.
 */
export interface FeedState {
  /** The folders named (real paths) with the dev:ino seen when the request was taken. */
  roots: Array<{ path: string; id: string }>;
  include?: string[];
  exclude?: string[];
  /** Real paths of the files the request named itself: already items, not reported again by a walk. */
  named: string[];
  /** The root being walked (roots.length: all walked). */
  root: number;
  /** The walk-order place (folder-walk.ts WalkKey, names base64) of the last file taken in that root; null: from the start. */
  after: Array<[0 | 1, string]> | null;
  /** Folders (dev:ino) the walk of that root has walked or noted, so a resumed walk does not walk one twice. */
  walked: string[];
  /** Files found so far (items made from them). */
  found: number;
  /** What the walks left out so far (notes made when the walk completes). */
  leftOut: Array<{ reason: 'too_deep' | 'outside_link' | 'broken_link'; count: number; examples: Array<{ path: string; relative: string }> }>;
  state: 'walking' | 'complete' | 'stopped';
  /** Batches taken so far: a write of a batch checks it, so two feeders never both append one. */
  seq: number;
}

/** Merged into JobRecord above. */
export interface JobRecord {
  /** Jobs that name folders: how far the walk is (`counts.total` grows while `state` is walking). */
  enumeration?: { state: FeedState['state']; files_found: number };
  /** Server only (not part of the API): the walk's resumable state. */
  feed?: FeedState;
}

/** An item as a job is submitted with it (job-runner.ts, folder-feed.ts), before it is a JobItem. */
export interface NewItem {
  source: string;
  source_kind: SourceKind;
  upload?: { bytes: Buffer; contentType?: string };
  /** Local files: what identifies the file found (local-files.ts), checked when it is read. */
  local?: JobItem['local'];
  /** Set: the item is recorded as skipped with this note and never run (e.g. a folder too deep to walk). */
  leftOut?: string;
  /** Set: the item is recorded as failed with this error and never run (a part of a folder walk that failed). */
  failed?: { code: string; message: string };
}

// ---- Added for issue 25 (a source's sync is one job: its deletions are items too) ----

/** A document a source sync removes, with why (file deleted, HTTP 404/410, out of scope). */
export interface DeleteStep {
  document_id: string;
  reason: string;
}

/** Merged into JobItem above. */
export interface JobItem {
  /** Set: this item deletes the document instead of ingesting its source; the reason goes into its history. */
  delete?: DeleteStep;
}

/** Merged into NewItem above. */
export interface NewItem {
  delete?: DeleteStep;
}

/** Merged into AddDocumentsRequest above (server only: source syncs, never REST or MCP input). */
export interface AddDocumentsRequest {
  /** Documents of the collection the job deletes, each an item of the job (counted, cancellable, resumed). */
  deletes?: Array<DeleteStep & { source: string; source_kind: SourceKind }>;
}
