/**
 * The one on-disk format of a search index, for a collection (src/kb/collection-index.ts) and for
 * one document of retrieve_chunks (src/retrieval/store/index-store.ts) alike. A snapshot is a folder:
 *
 *   lexical.bin          CollectionLexicalIndex.serialize() (its own header, analyzer, sha256 trailer)
 *   dense.hnsw(.json)    CollectionDenseIndex.save() (hnswlib's file + its manifest); absent when
 *                        the index has no vectors
 *   <extra files>        what the owner needs beside the indexes (a document: chunks.json, since it
 *                        has no SQLite rows)
 *   manifest.json        written last: format, kind, the owner's identity (a collection: database
 *                        id, collection id, version; a document: key, content sha256, chunker
 *                        version, language), analyzer, embedder, dimension, HNSW params, chunk
 *                        count, size + sha256 of every other file, and a sha256 of itself
 *
 * Writes are atomic at every step: everything goes into a temp folder beside the destination
 * (".tmp-p<pid>-<name>-<hex>", so a start-up sweep tells a dead writer's leftovers from a live
 * one's), each file is fsynced, the manifest comes last, the folder is fsynced and renamed into
 * place (a previous version is moved aside first as ".old-p<pid>-..." and put back should the
 * rename fail), then the parent is fsynced. A kill -9 between any two steps leaves the old
 * version, the new one, or an old version moved aside, which sweepSnapshotLeftovers puts back.
 *
 * Loads check the manifest's own checksum, then every file against it as it is read (lexical.bin
 * is hashed from the bytes read; dense.hnsw once, by the dense loader, against its manifest whose
 * digest must equal this one's), and report why a snapshot is refused: never a crash, never a
 * half-read index served.
 */
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Analyzer } from '../retrieval/tokenizer.ts';
import type { HnswParams } from '../retrieval/store/hnsw.ts';
import { throwIfAborted } from '../util/abort.ts';
import { fsyncDir, fsyncFile, writeFileSynced, type FileDigest } from '../util/atomic-file.ts';
import { leftoverOwner } from '../util/temp-sweep.ts';
import { errorText } from '../util/error-text.ts';
import { CollectionLexicalIndex, type SerializeOptions, type SnapshotIdentity } from './lexical-index.ts';
import { CollectionDenseIndex } from './dense-index.ts';

/**
 * 4: one format for collections and documents (before: collection manifests of format 1-2,
 * per-document meta.json of format 1-3).
 */
export const SNAPSHOT_FORMAT = 4;
export const MANIFEST_FILE = 'manifest.json';
export const LEXICAL_FILE = 'lexical.bin';
export const DENSE_FILE = 'dense.hnsw';
export const DENSE_META_FILE = 'dense.hnsw.json';

export type { FileDigest } from '../util/atomic-file.ts';

export interface SnapshotManifest {
  format: number;
  kind: 'collection' | 'document';
  /** Collections: the store's databaseId() (null for a store without one). Documents: null. */
  database_id: string | null;
  collection_id: number | null;
  version: number | null;
  /** Documents: the index key, the full content sha256, the chunker version, the language the text was analyzed in. */
  key: string | null;
  content_sha256: string | null;
  chunker_version: number | null;
  language: string | null;
  analyzer: string;
  embedder: string | null;
  dimension: number | null;
  hnsw: (HnswParams & { space: 'cosine' }) | null;
  chunks: number;
  files: Record<string, FileDigest>;
  saved_at: string;
  /** sha256 of this manifest serialised without this field. */
  checksum?: string;
}

/** What the owner says about its snapshot; the writer adds format, files, time and checksum. */
export type ManifestFields = Omit<SnapshotManifest, 'format' | 'files' | 'saved_at' | 'checksum'>;

export function manifestChecksum(m: object): string {
  const { checksum: _, ...rest } = m as { checksum?: unknown };
  return createHash('sha256').update(JSON.stringify(rest)).digest('hex');
}

/** A file of a snapshot that does not match its manifest (or cannot be read): the reason says which. */
export class SnapshotFault extends Error {}

/**
 * A snapshot being written in a temp folder beside its destination; commit() publishes it, abort()
 * removes it. Files are written and hashed in pieces with a turn of the event loop between.
 */
export class SnapshotWriter {
  private readonly files: Record<string, FileDigest> = {};

  private constructor(
    readonly dest: string,
    /** The temp folder. */
    readonly dir: string,
    /** Whether files and folders are fsynced (see `begin`). */
    readonly durable: boolean,
  ) {}

  /**
   * `durable: false` skips every fsync, for snapshots that are a cache of something kept
   * elsewhere (retrieve_chunks' per-document indexes, rebuilt from their document): the rename
   * still makes a crash leave the old folder or the new one, and a power cut that tears a file is
   * caught at load by the manifest's sha256 of every file, so it costs a rebuild, never a wrong
   * answer. What it saves is the answer's wait on the disk (five fsyncs per save, each tens of ms
   * while the disk is flushing other writes).
   */
  static async begin(dest: string, options: { durable?: boolean } = {}): Promise<SnapshotWriter> {
    const parent = path.dirname(dest);
    await fs.mkdir(parent, { recursive: true });
    const dir = path.join(parent, `.tmp-p${process.pid}-${path.basename(dest)}-${randomBytes(6).toString('hex')}`);
    await fs.mkdir(dir);
    return new SnapshotWriter(dest, dir, options.durable !== false);
  }

  path(name: string): string {
    return path.join(this.dir, name);
  }

  /** Records a file the caller wrote (and fsynced) into the temp folder itself. */
  record(name: string, digest: FileDigest): void {
    this.files[name] = digest;
  }

  /** Writes, fsyncs and records one file (in pieces: a collection's lexical.bin is tens of MB). */
  async writeFile(name: string, data: Uint8Array | string, signal?: AbortSignal): Promise<FileDigest> {
    const digest = await writeFileSynced(this.path(name), data, 'wx', signal, 'Saving the index', this.durable);
    this.files[name] = digest;
    return digest;
  }

  /** Returns the bytes written (in shared memory: see CollectionLexicalIndex.serialize). */
  async writeLexical(lexical: CollectionLexicalIndex, identity?: SnapshotIdentity, signal?: AbortSignal, opts: SerializeOptions = {}): Promise<Buffer> {
    const bytes = await lexical.serializeSliced(identity, opts);
    await this.writeFile(LEXICAL_FILE, bytes, signal);
    return bytes;
  }

  async writeDense(dense: CollectionDenseIndex, identity?: SnapshotIdentity): Promise<void> {
    const written = await dense.save(this.path(DENSE_FILE), identity);
    this.files[DENSE_FILE] = written.index;
    this.files[DENSE_META_FILE] = written.meta;
  }

  /**
   * Carries a file of a verified snapshot over unchanged (a migration): hard-linked (files of a
   * snapshot are never changed in place, only replaced), copied where links are refused.
   */
  async carry(fromDir: string, name: string, digest: FileDigest): Promise<void> {
    const to = this.path(name);
    await fs.link(path.join(fromDir, name), to).catch(async () => {
      await fs.copyFile(path.join(fromDir, name), to);
      await fsyncFile(to);
    });
    this.files[name] = digest;
  }

  /**
   * Writes the manifest, fsyncs the folder, runs `beforePublish` (a lease check may throw to stop
   * the publication) and renames the folder into place. On failure the temp folder is removed.
   */
  async commit(fields: ManifestFields, beforePublish?: () => void): Promise<SnapshotManifest> {
    const manifest: SnapshotManifest = { format: SNAPSHOT_FORMAT, ...fields, files: { ...this.files }, saved_at: new Date().toISOString() };
    manifest.checksum = manifestChecksum(manifest);
    try {
      await writeFileSynced(this.path(MANIFEST_FILE), JSON.stringify(manifest, null, 1), 'wx', undefined, 'Saving the index', this.durable);
      if (this.durable) await fsyncDir(this.dir);
      beforePublish?.();
      await swapInto(this.dir, this.dest, this.durable);
    } catch (err) {
      await this.abort();
      throw err;
    }
    return manifest;
  }

  async abort(): Promise<void> {
    await fs.rm(this.dir, { recursive: true, force: true }).catch(() => undefined);
  }
}

/** `raw`: a whole manifest (its checksum holds) of another format, for an owner that still reads it. */
export type ManifestRead = { ok: true; manifest: SnapshotManifest } | { ok: false; absent: boolean; reason: string; raw?: Record<string, unknown> };

/** The manifest of the snapshot in `dir`, whole and of this format, or why not. */
export async function readManifest(dir: string): Promise<ManifestRead> {
  const no = (reason: string, absent = false): ManifestRead => ({ ok: false, absent, reason });
  let raw: string;
  try {
    raw = await fs.readFile(path.join(dir, MANIFEST_FILE), 'utf8');
  } catch {
    return no('no snapshot', true);
  }
  let m: SnapshotManifest;
  try {
    m = JSON.parse(raw) as SnapshotManifest;
  } catch {
    return no('snapshot manifest unreadable');
  }
  if (typeof m !== 'object' || m === null || m.checksum !== manifestChecksum(m)) return no('snapshot manifest fails its checksum');
  if (m.format !== SNAPSHOT_FORMAT) return { ok: false, absent: false, reason: `snapshot format ${m.format}, expected ${SNAPSHOT_FORMAT}`, raw: m as unknown as Record<string, unknown> };
  const okNum = (n: unknown) => typeof n === 'number' && Number.isInteger(n) && n >= 0;
  if (
    (m.kind !== 'collection' && m.kind !== 'document') ||
    typeof m.analyzer !== 'string' ||
    !okNum(m.chunks) ||
    !(m.embedder === null || typeof m.embedder === 'string') ||
    !(m.dimension === null || okNum(m.dimension)) ||
    !m.files ||
    typeof m.files !== 'object' ||
    !m.files[LEXICAL_FILE]
  ) {
    return no('snapshot manifest incomplete');
  }
  return { ok: true, manifest: m };
}

const HASH_PIECE = 4 << 20;

/**
 * A file of the snapshot, read whole and checked against the manifest. It is read in pieces into
 * one buffer of the manifest's size, and each piece is hashed while the next one is read (the disk
 * and the hash overlap: a restart of a million-chunk collection reads and hashes ~0.5 GB), with a
 * turn of the event loop between pieces.
 */
export async function readFileVerified(dir: string, m: SnapshotManifest, name: string, signal?: AbortSignal, opts: { shared?: boolean } = {}): Promise<Buffer> {
  const want = m.files[name];
  if (!want) throw new SnapshotFault(`${name} is not in the manifest`);
  let fh: fs.FileHandle;
  try {
    fh = await fs.open(path.join(dir, name), 'r');
  } catch {
    throw new SnapshotFault(`${name} missing`);
  }
  try {
    if ((await fh.stat()).size !== want.bytes) throw new SnapshotFault(`${name} truncated or corrupt (size differs from the manifest)`);
    // `shared`: in a SharedArrayBuffer, which worker threads can read without a copy.
    const buf = opts.shared ? Buffer.from(new SharedArrayBuffer(want.bytes)) : Buffer.allocUnsafe(want.bytes);
    const hash = createHash('sha256');
    const readPiece = async (at: number): Promise<number> => {
      const len = Math.min(HASH_PIECE, want.bytes - at);
      let got = 0;
      while (got < len) {
        const { bytesRead } = await fh.read(buf, at + got, len - got, at + got);
        if (bytesRead === 0) throw new SnapshotFault(`${name} truncated or corrupt (shorter than the manifest)`);
        got += bytesRead;
      }
      return len;
    };
    let at = 0;
    let pending = want.bytes > 0 ? readPiece(0) : null;
    while (pending) {
      const len = await pending;
      const next = at + len;
      pending = next < want.bytes ? readPiece(next) : null;
      hash.update(buf.subarray(at, next));
      at = next;
      if (pending && signal?.aborted) {
        // The read in flight settles first: an error of it would otherwise be a rejection nobody handles.
        await pending.catch(() => undefined);
        throwIfAborted(signal, 'Loading the index');
      }
    }
    if (hash.digest('hex') !== want.sha256) throw new SnapshotFault(`${name} corrupt (checksum mismatch with the manifest)`);
    return buf;
  } catch (err) {
    if (err instanceof SnapshotFault || signal?.aborted) throw err;
    throw new SnapshotFault(`${name} unreadable: ${errorText(err)}`);
  } finally {
    await fh.close().catch(() => undefined);
  }
}

/**
 * The lexical index of the snapshot, checked against the manifest and built by `analyzer` (a
 * snapshot of another analyzer throws: the caller rebuilds it from its chunks).
 */
export async function loadLexical(dir: string, m: SnapshotManifest, analyzer: Analyzer, signal?: AbortSignal, identity?: SnapshotIdentity): Promise<CollectionLexicalIndex> {
  // Shared memory: the search worker threads (search-pool.ts) open these very bytes.
  const buf = await readFileVerified(dir, m, LEXICAL_FILE, signal, { shared: true });
  let lexical: CollectionLexicalIndex;
  try {
    // Every byte was just checked against the manifest's sha256: the file's own trailer checksum
    // (for files read without a manifest) would hash the same bytes a second time.
    lexical = await CollectionLexicalIndex.deserializeSliced(buf, analyzer, signal, identity, { verified: true });
  } catch (err) {
    if (signal?.aborted) throw err;
    throw new SnapshotFault(errorText(err));
  }
  if (lexical.size !== m.chunks) throw new SnapshotFault(`${LEXICAL_FILE} holds ${lexical.size} chunks, the manifest ${m.chunks}`);
  return lexical;
}

/**
 * The dense index of the snapshot. Its small manifest is checked against this one; the index file
 * is hashed once, by CollectionDenseIndex.load, against that manifest, whose digest must be this
 * one's.
 */
export async function loadDense(
  dir: string,
  m: SnapshotManifest,
  expect: { embedderId: string; dimension: number; params?: Partial<HnswParams>; databaseId?: string | null },
): Promise<CollectionDenseIndex> {
  const want = m.files[DENSE_FILE];
  if (!want || !m.files[DENSE_META_FILE]) throw new SnapshotFault('dense index files missing from the manifest');
  const metaBuf = await readFileVerified(dir, m, DENSE_META_FILE);
  let inner: { bytes?: unknown; sha256?: unknown };
  try {
    inner = JSON.parse(metaBuf.toString('utf8')) as typeof inner;
  } catch {
    throw new SnapshotFault(`${DENSE_META_FILE} unreadable`);
  }
  if (inner.bytes !== want.bytes || inner.sha256 !== want.sha256) throw new SnapshotFault(`${DENSE_FILE} does not match the manifest`);
  try {
    return await CollectionDenseIndex.load(path.join(dir, DENSE_FILE), expect);
  } catch (err) {
    throw new SnapshotFault(errorText(err));
  }
}

/** Renames `tmp` to `dest`, moving an existing `dest` aside first (a folder cannot be renamed over a non-empty one). */
export async function swapInto(tmp: string, dest: string, durable = true): Promise<void> {
  const parent = path.dirname(dest);
  for (let attempt = 0; ; attempt++) {
    const old = path.join(parent, `.old-p${process.pid}-${path.basename(dest)}-${randomBytes(6).toString('hex')}`);
    const moved = await fs.rename(dest, old).then(
      () => true,
      (err: NodeJS.ErrnoException) => {
        if (err.code === 'ENOENT') return false;
        throw err;
      },
    );
    try {
      await fs.rename(tmp, dest);
    } catch (err) {
      // Put the previous version back rather than lose it.
      if (moved) await fs.rename(old, dest).catch(() => fs.rm(old, { recursive: true, force: true }));
      const code = (err as NodeJS.ErrnoException).code;
      if ((code === 'ENOTEMPTY' || code === 'EEXIST') && attempt < 5) continue;
      throw err;
    }
    if (moved) await fs.rm(old, { recursive: true, force: true });
    if (durable) await fsyncDir(parent);
    return;
  }
}

/** Removes a snapshot folder, renaming it first so a half-deleted folder is never read as a snapshot. */
export async function removeSnapshotDir(dir: string): Promise<void> {
  const trash = path.join(path.dirname(dir), `.trash-p${process.pid}-${path.basename(dir)}-${randomBytes(6).toString('hex')}`);
  const target = await fs.rename(dir, trash).then(
    () => trash,
    () => dir,
  );
  await fs.rm(target, { recursive: true, force: true });
}

// ".tmp-p123-<name>-<hex>"; names without "p<pid>-" are from per-document format 1 and count as dead.
export const LEFTOVER_RE = /^\.(tmp|old|trash)-(?:p(\d+)-)?(.+?)(?:-[0-9a-f]{12})?$/;

export interface SweepReport {
  removed: number;
  restored: number;
}

/** Whether `name` in a snapshot parent is a leftover of an interrupted write that may be swept now. */
export async function deadLeftover(parent: string, name: string): Promise<RegExpExecArray | null> {
  const m = LEFTOVER_RE.exec(name);
  if (!m) return null;
  const st = await fs.stat(path.join(parent, name)).catch(() => null);
  if (!st || leftoverOwner(m[2] ? Number(m[2]) : null, st.mtimeMs) === 'live') return null;
  return m;
}

/**
 * Leftovers of interrupted writes in a folder of snapshots: a version moved aside whose
 * replacement never arrived is put back (when `restorable` accepts its name); temp, trash and
 * superseded folders of dead processes (or of this pid: a restart in a container) are removed
 * whatever their age. Those of another live process are left to it, unless older than an hour
 * (its pid was reused).
 */
export async function sweepSnapshotLeftovers(parent: string, restorable: (name: string) => boolean = () => true): Promise<SweepReport> {
  const report: SweepReport = { removed: 0, restored: 0 };
  for (const name of await fs.readdir(parent).catch(() => [] as string[])) {
    const m = await deadLeftover(parent, name);
    if (!m) continue;
    const full = path.join(parent, name);
    if (m[1] === 'old' && restorable(m[3]!) && !(await fs.stat(path.join(parent, m[3]!)).then(() => true, () => false))) {
      if (await fs.rename(full, path.join(parent, m[3]!)).then(() => true, () => false)) {
        report.restored++;
        continue;
      }
    }
    await fs.rm(full, { recursive: true, force: true }).catch(() => undefined);
    report.removed++;
  }
  return report;
}

const swept = new Map<string, Promise<SweepReport>>();

/** sweepSnapshotLeftovers once per folder per process (before the first snapshot there is read). */
export function sweepOnce(parent: string, restorable?: (name: string) => boolean): Promise<SweepReport> {
  const key = path.resolve(parent);
  let p = swept.get(key);
  if (!p) {
    p = sweepSnapshotLeftovers(key, restorable).catch(() => ({ removed: 0, restored: 0 }));
    swept.set(key, p);
  }
  return p;
}
