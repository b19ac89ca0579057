/**
 * The sources of collections and what each of their keys last was (migration 6), on a connection
 * of its own to the knowledge base's file: the store (kb-store.ts) applies the migrations when it
 * opens, this one only reads and writes its two tables. Synchronous better-sqlite3, multi-row
 * changes in one transaction. The lease (lease_owner, lease_expires) is what keeps one sync of a
 * source running at a time across processes sharing DATA_DIR: taken and renewed by an UPDATE
 * that only succeeds while it is free, expired, or already this owner's.
 */
import Database from 'better-sqlite3';
import { toolError } from '../../errors.ts';
import { BUSY_TIMEOUT_MS, type KbDatabase } from '../db.ts';
import { schemaVersion } from '../migrations.ts';
import type { SourceKind, SourceSettings, SyncCounts, SyncStatus } from '../../contract/source-schemas.ts';

/** The first schema version with the sources tables. */
const SOURCES_SCHEMA = 6;

export interface SourceRow {
  id: string;
  collection_id: number;
  collection: string;
  kind: SourceKind;
  settings: SourceSettings;
  sync_every: number | null;
  watch: boolean;
  created_at: string;
  updated_at: string;
  sync_seq: number;
  last_sync_at: string | null;
  last_status: SyncStatus | null;
  last_job_id: string | null;
  counts: SyncCounts | null;
  last_error: string | null;
  notes: string[];
  lease_owner: string | null;
  lease_expires: number | null;
}

export interface SourceDocRow {
  key: string;
  document_id: string | null;
  content_sha256: string | null;
  etag: string | null;
  last_modified: string | null;
  stamp: string | null;
  last_seen_sync: number;
}

interface RawSource {
  id: string;
  collection_id: number;
  collection: string;
  kind: SourceKind;
  settings: string;
  sync_every: number | null;
  watch: number;
  created_at: string;
  updated_at: string;
  sync_seq: number;
  last_sync_at: string | null;
  last_status: SyncStatus | null;
  last_job_id: string | null;
  counts: string | null;
  last_error: string | null;
  notes: string | null;
  lease_owner: string | null;
  lease_expires: number | null;
}

const SELECT = `SELECT s.*, c.name AS collection FROM sources s JOIN collections c ON c.id = s.collection_id`;

function rowOf(r: RawSource): SourceRow {
  return {
    ...r,
    settings: JSON.parse(r.settings) as SourceSettings,
    watch: r.watch === 1,
    counts: r.counts ? (JSON.parse(r.counts) as SyncCounts) : null,
    notes: r.notes ? (JSON.parse(r.notes) as string[]) : [],
  };
}

export class SourceStore {
  private readonly db: KbDatabase;

  constructor(file: string) {
    let db: KbDatabase;
    try {
      db = new Database(file, { fileMustExist: true });
      db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
      db.pragma('foreign_keys = ON');
    } catch (err) {
      throw toolError('STORAGE_UNAVAILABLE', 'knowledge base sources cannot be opened (the knowledge base database is missing or unreadable)', err);
    }
    if (schemaVersion(db) < SOURCES_SCHEMA) {
      db.close();
      throw toolError('STORAGE_UNAVAILABLE', 'knowledge base database predates sources (schema version below 6)');
    }
    this.db = db;
  }

  close(): void {
    if (this.db.open) this.db.close();
  }

  collectionId(name: string): number | null {
    const r = this.db.prepare('SELECT id FROM collections WHERE name = ?').get(name) as { id: number } | undefined;
    return r?.id ?? null;
  }

  create(s: { id: string; collection_id: number; kind: SourceKind; settings: SourceSettings; sync_every: number | null; watch: boolean }): SourceRow {
    const now = new Date().toISOString();
    this.db
      .prepare('INSERT INTO sources (id, collection_id, kind, settings, sync_every, watch, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)')
      .run(s.id, s.collection_id, s.kind, JSON.stringify(s.settings), s.sync_every, s.watch ? 1 : 0, now, now);
    return this.get(s.id)!;
  }

  get(id: string): SourceRow | null {
    const r = this.db.prepare(`${SELECT} WHERE s.id = ?`).get(id) as RawSource | undefined;
    return r ? rowOf(r) : null;
  }

  list(collectionId: number): SourceRow[] {
    return (this.db.prepare(`${SELECT} WHERE s.collection_id = ? ORDER BY s.created_at, s.id`).all(collectionId) as RawSource[]).map(rowOf);
  }

  all(): SourceRow[] {
    return (this.db.prepare(`${SELECT} ORDER BY s.created_at, s.id`).all() as RawSource[]).map(rowOf);
  }

  update(id: string, change: { settings?: SourceSettings; sync_every?: number | null; watch?: boolean }): SourceRow | null {
    const cur = this.get(id);
    if (!cur) return null;
    this.db
      .prepare('UPDATE sources SET settings = ?, sync_every = ?, watch = ?, updated_at = ? WHERE id = ?')
      .run(
        JSON.stringify(change.settings ?? cur.settings),
        change.sync_every === undefined ? cur.sync_every : change.sync_every,
        (change.watch ?? cur.watch) ? 1 : 0,
        new Date().toISOString(),
        id,
      );
    return this.get(id);
  }

  /** Removes the source and its key records (the documents stay in the collection). */
  remove(id: string): boolean {
    return this.db.prepare('DELETE FROM sources WHERE id = ?').run(id).changes === 1;
  }

  /** Takes or renews the source's lease; false while another owner holds an unexpired one. */
  acquireLease(id: string, owner: string, ttlMs: number, now = Date.now()): boolean {
    const r = this.db
      .prepare('UPDATE sources SET lease_owner = ?, lease_expires = ? WHERE id = ? AND (lease_owner IS NULL OR lease_expires IS NULL OR lease_expires < ? OR lease_owner = ?)')
      .run(owner, now + ttlMs, id, now, owner);
    return r.changes === 1;
  }

  releaseLease(id: string, owner: string): void {
    this.db.prepare('UPDATE sources SET lease_owner = NULL, lease_expires = NULL WHERE id = ? AND lease_owner = ?').run(id, owner);
  }

  /** A sync starts: its number (the keys it sees are stamped with it). */
  beginSync(id: string): number {
    return this.db.transaction(() => {
      this.db.prepare("UPDATE sources SET sync_seq = sync_seq + 1, last_status = 'running', last_error = NULL WHERE id = ?").run(id);
      return (this.db.prepare('SELECT sync_seq FROM sources WHERE id = ?').get(id) as { sync_seq: number }).sync_seq;
    })();
  }

  setJob(id: string, jobId: string | null): void {
    this.db.prepare('UPDATE sources SET last_job_id = ? WHERE id = ?').run(jobId, id);
  }

  endSync(id: string, r: { status: SyncStatus; counts: SyncCounts; error: string | null; notes: string[] }): void {
    this.db
      .prepare('UPDATE sources SET last_status = ?, counts = ?, last_error = ?, notes = ?, last_sync_at = ? WHERE id = ?')
      .run(r.status, JSON.stringify(r.counts), r.error, JSON.stringify(r.notes), new Date().toISOString(), id);
  }

  documents(sourceId: string): Map<string, SourceDocRow> {
    const rows = this.db.prepare('SELECT key, document_id, content_sha256, etag, last_modified, stamp, last_seen_sync FROM source_documents WHERE source_id = ?').all(sourceId) as SourceDocRow[];
    return new Map(rows.map((r) => [r.key, r]));
  }

  /** Writes key records in one transaction. */
  putDocuments(sourceId: string, rows: readonly SourceDocRow[]): void {
    if (rows.length === 0) return;
    const put = this.db.prepare(
      `INSERT INTO source_documents (source_id, key, document_id, content_sha256, etag, last_modified, stamp, last_seen_sync) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (source_id, key) DO UPDATE SET document_id = excluded.document_id, content_sha256 = excluded.content_sha256, etag = excluded.etag,
         last_modified = excluded.last_modified, stamp = excluded.stamp, last_seen_sync = excluded.last_seen_sync`,
    );
    this.db.transaction(() => {
      for (const r of rows) put.run(sourceId, r.key, r.document_id, r.content_sha256, r.etag, r.last_modified, r.stamp, r.last_seen_sync);
    })();
  }

  removeDocuments(sourceId: string, keys: readonly string[]): void {
    if (keys.length === 0) return;
    const del = this.db.prepare('DELETE FROM source_documents WHERE source_id = ? AND key = ?');
    this.db.transaction(() => {
      for (const k of keys) del.run(sourceId, k);
    })();
  }
}
