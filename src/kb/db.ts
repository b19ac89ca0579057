/**
 * Opens the knowledge base's SQLite file (DATA_DIR/kb/kb.sqlite) with the settings the store relies
 * on, and turns every way that can fail into one coded error (STORAGE_UNAVAILABLE) that names the
 * condition, never the path: a folder that cannot be created or written, a file that is not a
 * database, a database that fails its integrity check.
 *
 * Settings and why:
 * - journal_mode=WAL: readers never block the one writer, and a commit is one append to the WAL.
 * - synchronous=NORMAL: in WAL mode a commit is written to the WAL (the OS page cache) before
 *   COMMIT returns and only fsynced at checkpoints. That is durable against a process crash or
 *   kill -9 (the OS still holds the pages; the next open replays the WAL), and the database is never
 *   corrupted even by a power loss; a power loss may only drop the last few committed transactions.
 *   FULL would fsync on every commit (several ms each) for that last guarantee only.
 * - foreign_keys=ON: chunks, vectors and history go with their document or collection (CASCADE).
 * - busy_timeout: another connection (a second process, a backup tool) holding the write lock
 *   briefly is waited for instead of failing at once.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { isToolError, toolError, type ToolError } from '../errors.ts';
import { describeFsError } from '../util/fs-errors.ts';
import { nativeAddonError } from '../native-addons.ts';

export type KbDatabase = Database.Database;

/** The database file's name inside the knowledge base folder. */
export const KB_DB_FILE = 'kb.sqlite';

export const BUSY_TIMEOUT_MS = 5_000;

export interface OpenKbDatabaseOptions {
  /**
   * 'after-crash' (default): PRAGMA quick_check on open when the last process that had the file
   * open did not close it (kill -9, crash, power loss), read from the meta table's shutdown mark;
   * 'quick': on every open; 'none': never (salvage tools). quick_check reads the whole file: about
   * a second per few hundred MB, too slow for every start of a large knowledge base, and a clean
   * shutdown leaves nothing to find (SQLite still reports any corrupt page it meets later).
   */
  integrityCheck?: 'after-crash' | 'quick' | 'none';
  /**
   * Opens the connection; better-sqlite3's constructor by default. Tests only: one that throws as
   * a better-sqlite3 built for another Node.js does (NATIVE_ADDON_MISMATCH).
   */
  openDatabase?: (file: string, options: Database.Options) => KbDatabase;
}

const openWithBetterSqlite = (file: string, options: Database.Options): KbDatabase => new Database(file, options);

/** The meta row that tells whether the file was closed cleanly ('clean') or is in use ('running'). */
const SHUTDOWN_KEY = 'shutdown';

/**
 * Several processes may have the file open at once (replicas and workers on one DATA_DIR), so
 * besides the shutdown mark each open handle has a row `open:<nonce>` = {host, pid, start,
 * instance, beat}: added at open, its beat renewed every HEARTBEAT_MS, removed at close. The
 * handle key is also the owner of the jobs that store runs (kb-store.ts), so this is the one
 * liveness rule for both the shutdown mark and job ownership. A handle is dead when:
 * - its beat is older than STALE_MS (any host: a process that stopped beating, or one on a host
 *   whose processes cannot be looked at);
 * - same host, this pid: its instance id (random, made once per process start) is not this
 *   process's, or it is but this process no longer has that store open (a store that never closed);
 * - same host, another pid: that pid is not running, or it is running but started at another time
 *   than the row says (Linux: /proc/<pid>/stat field 22), i.e. the pid was reused by a new process.
 * A pid alone is not an identity: after kill -9 the kernel hands the number to the next process.
 */
const HANDLE_PREFIX = 'open:';
export const HEARTBEAT_MS = 30_000;
export const STALE_MS = 4 * HEARTBEAT_MS;

/** This process's identity among the handle rows: random, made once per process start. */
export const PROCESS_INSTANCE = randomBytes(8).toString('hex');

/** Handle keys of the stores this process has open (several in one process: tests, tools). */
const ownHandles = new Set<string>();

interface HandleRow {
  key: string;
  value: string;
}

/** Whether a process with this pid runs (EPERM: it exists but is someone else's). */
export function pidRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The start time of a process in clock ticks since boot (/proc/<pid>/stat field 22), as text, or
 * null where /proc is not there (not Linux) or the process is gone. Field 2 (the command name) may
 * hold spaces and parentheses, so fields are counted after its last ')'.
 */
export function processStartTime(pid: number): string | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields[0] is field 3 (state): field 22 is fields[19].
    return fields[19] ?? null;
  } catch {
    return null;
  }
}

const OWN_START = processStartTime(process.pid);

function handleRows(db: KbDatabase): HandleRow[] {
  return db.prepare("SELECT key, value FROM meta WHERE key >= 'open:' AND key < 'open;'").all() as HandleRow[];
}

/** The liveness rule of the module comment, for one handle row. */
function isDead(row: HandleRow, now: number): boolean {
  let h: { host?: unknown; pid?: unknown; beat?: unknown; start?: unknown; instance?: unknown };
  try {
    h = JSON.parse(row.value) as typeof h;
  } catch {
    return true;
  }
  if (typeof h.pid !== 'number' || typeof h.beat !== 'number') return true;
  if (now - h.beat > STALE_MS) return true;
  if (h.host !== os.hostname()) return false;
  if (h.pid === process.pid) {
    // A predecessor with this very pid (a container restarted), or a store of this process that never closed.
    if (typeof h.instance === 'string' && h.instance !== PROCESS_INSTANCE) return true;
    return !ownHandles.has(row.key);
  }
  if (!pidRunning(h.pid)) return true;
  // The pid runs, but is it the same process? Rows from before start times were recorded cannot tell.
  if (typeof h.start === 'string') {
    const start = processStartTime(h.pid);
    if (start !== null && start !== h.start) return true;
  }
  return false;
}

/** Whether the handle `key` (a job's owner) belongs to a process that still has the file open. */
export function handleIsLive(db: KbDatabase, key: string): boolean {
  const row = db.prepare('SELECT key, value FROM meta WHERE key = ?').get(key) as HandleRow | undefined;
  return row !== undefined && !isDead(row, Date.now());
}

/** Handles of processes that ended without closing the file. */
function deadHandles(db: KbDatabase, except?: string): string[] {
  const now = Date.now();
  return handleRows(db).filter((r) => r.key !== except && isDead(r, now)).map((r) => r.key);
}

/** Keys of the handles whose process still has the file open (this process's included). */
export function liveHandleKeys(db: KbDatabase): Set<string> {
  const now = Date.now();
  return new Set(handleRows(db).filter((r) => !isDead(r, now)).map((r) => r.key));
}

/** This process's handle row (after migrations); returns its key. Rows of dead processes go. */
export function registerHandle(db: KbDatabase): string {
  const key = `${HANDLE_PREFIX}${randomBytes(6).toString('hex')}`;
  db.transaction(() => {
    for (const dead of deadHandles(db)) db.prepare('DELETE FROM meta WHERE key = ?').run(dead);
    db.prepare('INSERT INTO meta (key, value) VALUES (?, ?)').run(key, handleValue());
  }).immediate();
  ownHandles.add(key);
  return key;
}

export function beatHandle(db: KbDatabase, key: string): void {
  db.prepare('UPDATE meta SET value = ? WHERE key = ?').run(handleValue(), key);
}

/** Removes this handle; marks the file clean when no other live process has it open. */
export function releaseHandle(db: KbDatabase, key: string): void {
  ownHandles.delete(key);
  db.transaction(() => {
    db.prepare('DELETE FROM meta WHERE key = ?').run(key);
    const now = Date.now();
    const others = handleRows(db).filter((r) => !isDead(r, now));
    if (others.length === 0) markShutdown(db, 'clean');
  }).immediate();
}

function handleValue(): string {
  return JSON.stringify({ host: os.hostname(), pid: process.pid, start: OWN_START, instance: PROCESS_INSTANCE, beat: Date.now() });
}

/**
 * True when a process that had the file open did not close it: a handle row of a process that is
 * gone, or (a file from before handle rows) the shutdown mark left at 'running'.
 */
function closedUncleanly(db: KbDatabase): boolean {
  const hasMeta = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'").get();
  if (!hasMeta) return false; // a new file (or one from before the mark): nothing written yet
  if (deadHandles(db).length > 0) return true;
  const mark = db.prepare('SELECT value FROM meta WHERE key = ?').pluck().get(SHUTDOWN_KEY);
  const live = handleRows(db).length;
  return live === 0 && mark !== undefined && mark !== 'clean';
}

/** Marks the file in use (after migrations) or cleanly closed (just before closing it). */
export function markShutdown(db: KbDatabase, state: 'running' | 'clean'): void {
  db.prepare('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value').run(SHUTDOWN_KEY, state);
}

/**
 * The marker that this knowledge base has had collections: `kb.sqlite.marker`, written
 * atomically next to the database when the first collection is created (and at open for a file
 * that has collections but no marker yet, as one from before the marker). With the marker there,
 * a database file that exists but is empty (0 bytes, or no tables: truncated, or replaced by an
 * empty file) is refused, never taken for a new knowledge base: its documents would silently
 * vanish from view. A missing file is a deliberate move (what the integrity-check message
 * advises), so it still starts empty. Deleting every collection keeps the marker.
 */
export const KB_MARKER_FILE = `${KB_DB_FILE}.marker`;

export function hasCollectionsMarker(dir: string): boolean {
  return fs.existsSync(path.join(dir, KB_MARKER_FILE));
}

/** Writes the marker (temp file, fsync, rename) when absent; best effort (a full disk leaves it for the next time). */
export function writeCollectionsMarker(dir: string): void {
  const file = path.join(dir, KB_MARKER_FILE);
  if (fs.existsSync(file)) return;
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    const fd = fs.openSync(tmp, 'w');
    try {
      fs.writeSync(fd, `${JSON.stringify({ collections_existed: true, since: new Date().toISOString() })}\n`);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(tmp, file);
  } catch {
    fs.rmSync(tmp, { force: true });
  }
}

function emptyDatabaseError(how: string): ToolError {
  return toolError(
    'STORAGE_UNAVAILABLE',
    `knowledge base database file is empty (${how}) although this knowledge base had collections: restore DATA_DIR/kb/${KB_DB_FILE} from a backup; ` +
      `to start empty on purpose, delete both ${KB_DB_FILE} and ${KB_MARKER_FILE} in DATA_DIR/kb`,
  );
}

/** Whether openKbDatabase ran quick_check, per handle (for health reports and tests). */
export const integrityChecked = new WeakMap<KbDatabase, boolean>();

const sqliteCode = (err: unknown): string =>
  err && typeof err === 'object' && typeof (err as { code?: unknown }).code === 'string' ? (err as { code: string }).code : '';

/** STORAGE_UNAVAILABLE for an SQLite or file-system failure, worded by condition and without paths. */
export function kbStorageError(what: string, err: unknown): ToolError {
  if (isToolError(err)) return err;
  const code = sqliteCode(err);
  let why: string;
  if (code === 'SQLITE_NOTADB') why = 'the file is not an SQLite database';
  else if (code.startsWith('SQLITE_CORRUPT')) why = 'the database file is corrupt';
  else if (code === 'SQLITE_FULL') why = 'no space left on the data disk';
  else if (code.startsWith('SQLITE_READONLY')) why = 'the database is read-only (file or folder not writable)';
  else if (code.startsWith('SQLITE_CANTOPEN')) why = 'the database file cannot be opened (folder missing or not writable)';
  else if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) why = 'the database is locked by another process';
  else if (code.startsWith('SQLITE_IOERR')) why = `a disk I/O error occurred (${code})`;
  else why = describeFsError(err);
  return toolError('STORAGE_UNAVAILABLE', `knowledge base ${what}: ${why} (DATA_DIR/kb/${KB_DB_FILE})`, err);
}

/** True for the SQLite errors that mean the storage failed (as opposed to a constraint or a bug). */
export function isStorageFailure(err: unknown): boolean {
  const code = sqliteCode(err);
  return /^SQLITE_(NOTADB|CORRUPT|FULL|READONLY|CANTOPEN|BUSY|LOCKED|IOERR|PROTOCOL|NOMEM)/.test(code) || /^E[A-Z]+$/.test(code);
}

function fileSize(file: string): number | null {
  try {
    return fs.statSync(file).size;
  } catch {
    return null;
  }
}

/**
 * journal_mode = WAL, retried for up to BUSY_TIMEOUT_MS while another connection holds the file:
 * when several processes open a new database at once, SQLite answers this switch SQLITE_BUSY at
 * once instead of calling the busy handler (four processes opening together failed one in a while).
 */
function enableWal(db: KbDatabase): unknown {
  const deadline = Date.now() + BUSY_TIMEOUT_MS;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (let waitMs = 5; ; waitMs = Math.min(waitMs * 2, 100)) {
    try {
      return db.pragma('journal_mode = WAL', { simple: true });
    } catch (err) {
      if ((err as { code?: string }).code !== 'SQLITE_BUSY' || Date.now() > deadline) throw err;
      // Opening is synchronous (KbStore's constructor): a short blocking pause, bounded above.
      Atomics.wait(pause, 0, 0, waitMs);
    }
  }
}

/**
 * Opens (creating when absent) `dir/kb.sqlite` with WAL, synchronous=NORMAL, foreign keys and a
 * busy timeout, checks it can take writes and runs quick_check (by default after an unclean
 * shutdown only). Throws
 * STORAGE_UNAVAILABLE with the reason otherwise (NATIVE_ADDON_MISMATCH when better-sqlite3 was
 * built for another Node.js); the handle is closed on every failure.
 */
export function openKbDatabase(dir: string, opts: OpenKbDatabaseOptions = {}): KbDatabase {
  try {
    fs.mkdirSync(dir, { recursive: true });
    fs.accessSync(dir, fs.constants.W_OK);
  } catch (err) {
    throw kbStorageError('folder cannot be created or written', err);
  }
  // Checked before opening: opening an empty file would write a new header into it.
  // A file that is not there at all (moved away on purpose) is created anew, marker or not.
  const marked = hasCollectionsMarker(dir) && fileSize(path.join(dir, KB_DB_FILE)) !== null;
  if (marked && fileSize(path.join(dir, KB_DB_FILE)) === 0) throw emptyDatabaseError('0 bytes');
  let db: KbDatabase;
  try {
    db = (opts.openDatabase ?? openWithBetterSqlite)(path.join(dir, KB_DB_FILE), { timeout: BUSY_TIMEOUT_MS });
  } catch (err) {
    // better-sqlite3 loads its binary here: built for another Node.js, it is not a storage fault.
    throw nativeAddonError('better-sqlite3', 'the knowledge base', err) ?? kbStorageError('cannot be opened', err);
  }
  try {
    // The first statement reads the header: a file that is not a database fails here (SQLITE_NOTADB).
    if (marked && db.prepare('SELECT COUNT(*) FROM sqlite_master').pluck().get() === 0) throw emptyDatabaseError('no tables');
    const journal = enableWal(db);
    if (journal !== 'wal') throw toolError('STORAGE_UNAVAILABLE', `knowledge base cannot use WAL mode (the file system gave '${String(journal)}')`);
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = ON');
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    // A file or folder the process may not write opens read-only; taking the write lock tells.
    db.exec('BEGIN IMMEDIATE');
    db.exec('ROLLBACK');
    const mode = opts.integrityCheck ?? 'after-crash';
    const check = mode === 'quick' || (mode === 'after-crash' && closedUncleanly(db));
    integrityChecked.set(db, check);
    if (check) {
      const result = db.pragma('quick_check(1)', { simple: true });
      if (result !== 'ok') {
        throw toolError('STORAGE_UNAVAILABLE', `knowledge base failed its integrity check: ${String(result).slice(0, 200)} (DATA_DIR/kb/${KB_DB_FILE}; restore a backup or move the file away to start empty)`);
      }
    }
    return db;
  } catch (err) {
    try {
      db.close();
    } catch {
      // already unusable
    }
    throw kbStorageError('cannot be used', err);
  }
}
