/**
 * The knowledge base schema, versioned in code. PRAGMA user_version holds the last migration
 * applied; each migration runs in its own transaction together with the user_version bump, so a
 * crash leaves the file at one version or the next, never between. A file written by a newer
 * server (user_version above the last migration known here) is refused, not guessed at.
 */
import { randomBytes } from 'node:crypto';
import { toolError } from '../errors.ts';
import type { KbDatabase } from './db.ts';

export interface Migration {
  version: number;
  name: string;
  up(db: KbDatabase): void;
}

const V1_SCHEMA = `
-- Small facts about the file itself, e.g. shutdown = 'running' | 'clean' (see db.ts).
CREATE TABLE meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
) STRICT;

CREATE TABLE collections (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  name        TEXT NOT NULL UNIQUE,
  description TEXT,
  version     INTEGER NOT NULL DEFAULT 0,
  embedder    TEXT,
  dimension   INTEGER,
  chunk_size  INTEGER,
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL
) STRICT;

-- seq: insertion order for listing (stable, unlike created_at ties); id: the public handle.
CREATE TABLE documents (
  seq            INTEGER PRIMARY KEY AUTOINCREMENT,
  id             TEXT NOT NULL UNIQUE,
  collection_id  INTEGER NOT NULL REFERENCES collections(id) ON DELETE CASCADE,
  source         TEXT NOT NULL,
  source_kind    TEXT NOT NULL CHECK (source_kind IN ('url', 'upload', 'path')),
  source_key     TEXT NOT NULL,
  filename       TEXT,
  content_sha256 TEXT,
  bytes          INTEGER,
  type           TEXT,
  title          TEXT,
  pages          INTEGER,
  language       TEXT,
  status         TEXT NOT NULL CHECK (status IN ('pending', 'ready', 'failed')),
  error_code     TEXT,
  error_message  TEXT,
  chunk_count    INTEGER NOT NULL DEFAULT 0,
  revision       INTEGER NOT NULL DEFAULT 0,
  created_at     TEXT NOT NULL,
  updated_at     TEXT NOT NULL,
  ingested_at    TEXT,
  UNIQUE (collection_id, source_key)
) STRICT;
CREATE INDEX documents_by_collection_seq ON documents(collection_id, seq);
-- Every search lists its collection's failed documents (the answer's errors[]): without this it scans the table.
CREATE INDEX documents_by_collection_status ON documents(collection_id, status, seq);

-- AUTOINCREMENT: a chunk id is never reused, even after its rows are deleted (it labels HNSW points).
CREATE TABLE chunks (
  id            INTEGER PRIMARY KEY AUTOINCREMENT,
  document_id   TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
  collection_id INTEGER NOT NULL REFERENCES collections(id) ON DELETE CASCADE,
  ord           INTEGER NOT NULL,
  text          TEXT NOT NULL,
  page_start    INTEGER,
  page_end      INTEGER,
  heading_path  TEXT NOT NULL DEFAULT '[]',
  char_start    INTEGER NOT NULL,
  char_end      INTEGER NOT NULL,
  importance    REAL NOT NULL,
  content_type  TEXT NOT NULL
) STRICT;
CREATE INDEX chunks_by_document_ord ON chunks(document_id, ord);
CREATE INDEX chunks_by_collection_id ON chunks(collection_id, id);
-- Covers every chunk-level search filter, so chunkIdsWhere reads this small index, not the rows' text.
CREATE INDEX chunks_filter ON chunks(collection_id, document_id, content_type, page_start, page_end);

-- float32 little-endian, one per chunk of a collection with an embedder.
CREATE TABLE chunk_vectors (
  chunk_id INTEGER PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
  vector   BLOB NOT NULL
) STRICT;

-- No foreign key to documents: a deleted document keeps its trail, ending in a 'deleted' row.
CREATE TABLE history (
  id             INTEGER PRIMARY KEY AUTOINCREMENT,
  document_id    TEXT NOT NULL,
  collection_id  INTEGER NOT NULL REFERENCES collections(id) ON DELETE CASCADE,
  at             TEXT NOT NULL,
  action         TEXT NOT NULL CHECK (action IN ('ingested', 'skipped', 'failed', 'deleted')),
  content_sha256 TEXT,
  job_id         TEXT,
  detail         TEXT
) STRICT;
CREATE INDEX history_by_document ON history(document_id, id);

CREATE TABLE jobs (
  id          TEXT PRIMARY KEY,
  collection  TEXT NOT NULL,
  status      TEXT NOT NULL CHECK (status IN ('queued', 'running', 'succeeded', 'partial', 'failed', 'cancelled')),
  reason      TEXT,
  items       TEXT NOT NULL,
  counts      TEXT NOT NULL,
  created_at  TEXT NOT NULL,
  started_at  TEXT,
  finished_at TEXT,
  resumed     INTEGER NOT NULL DEFAULT 0
) STRICT;
CREATE INDEX jobs_by_collection_created ON jobs(collection, created_at);
CREATE INDEX jobs_by_status ON jobs(status, created_at);
`;

/** In order; a migration's version is its position + 1. Never edit a released one: add the next. */
export const MIGRATIONS: readonly Migration[] = [
  { version: 1, name: 'initial schema', up: (db) => db.exec(V1_SCHEMA) },
  // Cancelling is asked by one process (an API replica) and seen by another (the worker running
  // the document), so the request lives in the job's row, not in process memory.
  { version: 2, name: 'jobs.cancel_requested', up: (db) => db.exec('ALTER TABLE jobs ADD COLUMN cancel_requested INTEGER NOT NULL DEFAULT 0') },
  // The open handle (db.ts) of the process running an in-process job: at start a process resumes
  // only jobs whose process is gone, not those another live process (--workers N) is running.
  { version: 3, name: 'jobs.owner', up: (db) => db.exec('ALTER TABLE jobs ADD COLUMN owner TEXT') },
  // Two facts the indexes and the commit path need (issue 19):
  // - meta 'database_id': a random id made once with the database (here, for new and existing
  //   files alike). Index snapshots carry it, so a snapshot left by another database in the same
  //   folder (kb.sqlite moved away, indexes/ kept) is rebuilt, not "caught up" by chunk ids that
  //   a new database hands out again from 1.
  // - documents.read_seq and meta 'read_seq': a counter taken when a document's bytes are read
  //   (takeReadSeq), stored with the version committed. A commit carrying an older read than the
  //   stored one is discarded (kb-store.ts, replaceDocument). Rows from before stay NULL: older
  //   than any read made from now on.
  { version: 4, name: 'database identity and read order', up: (db) => migrateReadOrder(db) },
  // A job that names folders walks them in parts as its documents drain (folder-feed.ts): where
  // the walk stands is written in the job's row with its items, in one statement.
  { version: 5, name: 'jobs.feed', up: (db) => db.exec('ALTER TABLE jobs ADD COLUMN feed TEXT') },
  // Sources that keep a collection in step with a folder, a site or a list of URLs (issue 25,
  // src/kb/sources/): their settings and last sync, a lease so one sync of a source runs at a time
  // across processes, and per source what each key (path or normalised URL) last was.
  { version: 6, name: 'sources', up: (db) => db.exec(V6_SOURCES) },
];

const V6_SOURCES = `
CREATE TABLE sources (
  id             TEXT PRIMARY KEY,
  collection_id  INTEGER NOT NULL REFERENCES collections(id) ON DELETE CASCADE,
  kind           TEXT NOT NULL CHECK (kind IN ('folder', 'site', 'urls')),
  settings       TEXT NOT NULL,
  sync_every     INTEGER,
  watch          INTEGER NOT NULL DEFAULT 0,
  created_at     TEXT NOT NULL,
  updated_at     TEXT NOT NULL,
  sync_seq       INTEGER NOT NULL DEFAULT 0,
  last_sync_at   TEXT,
  last_status    TEXT,
  last_job_id    TEXT,
  counts         TEXT,
  last_error     TEXT,
  notes          TEXT,
  lease_owner    TEXT,
  lease_expires  INTEGER
) STRICT;
CREATE INDEX sources_by_collection ON sources(collection_id, created_at);

-- key: the file's real path or the normalised URL; stamp: size:mtime of a file (a cheap unchanged check).
CREATE TABLE source_documents (
  source_id      TEXT NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
  key            TEXT NOT NULL,
  document_id    TEXT,
  content_sha256 TEXT,
  etag           TEXT,
  last_modified  TEXT,
  stamp          TEXT,
  last_seen_sync INTEGER NOT NULL,
  PRIMARY KEY (source_id, key)
) STRICT;
`;

function migrateReadOrder(db: KbDatabase): void {
  db.exec('ALTER TABLE documents ADD COLUMN read_seq INTEGER');
  const put = db.prepare('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING');
  put.run(DATABASE_ID_KEY, randomBytes(16).toString('hex'));
  put.run(READ_SEQ_KEY, '0');
}

/** meta key of the database's random identity (32 hex characters). */
export const DATABASE_ID_KEY = 'database_id';
/** meta key of the last read sequence number handed out (an integer as text). */
export const READ_SEQ_KEY = 'read_seq';

/** The schema version this code writes. */
export const SCHEMA_VERSION = MIGRATIONS.length;

export function schemaVersion(db: KbDatabase): number {
  return Number(db.pragma('user_version', { simple: true }));
}

/**
 * Applies the migrations the file lacks, each in its own transaction with its user_version bump.
 * Idempotent: a file already at the current version is left untouched. Throws STORAGE_UNAVAILABLE
 * for a file from a newer server.
 */
export function migrate(db: KbDatabase, migrations: readonly Migration[] = MIGRATIONS): { from: number; to: number } {
  migrations.forEach((m, i) => {
    if (m.version !== i + 1) throw new Error(`migration ${m.name} has version ${m.version}, expected ${i + 1}`);
  });
  const latest = migrations.length;
  const from = schemaVersion(db);
  if (from > latest) {
    throw toolError(
      'STORAGE_UNAVAILABLE',
      `knowledge base database is at schema version ${from}, newer than this server understands (${latest}): run the newer server, or move DATA_DIR/kb away to start empty`,
    );
  }
  // The version is read again under the write lock: processes starting together on one DATA_DIR
  // (replicas, workers) would otherwise both see an old file and both apply the same migration.
  for (;;) {
    const applied = db.transaction(() => {
      const at = schemaVersion(db);
      const m = migrations[at];
      if (!m) return false;
      m.up(db);
      db.pragma(`user_version = ${m.version}`);
      return true;
    }).immediate();
    if (!applied) break;
  }
  return { from, to: latest };
}
