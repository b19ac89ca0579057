/**
 * Per-document search indexes persisted on disk, one folder per key:
 *
 *   <dir>/<key>/dense.hnsw    the dense index (absent for lexical-only indexes), in the collection
 *                             engine's format: CollectionDenseIndex.save (src/kb/dense-index.ts),
 *   <dir>/<key>/dense.hnsw.json  labels are chunk positions; the same HNSW code serves both tools
 *   <dir>/<key>/chunks.json   the chunks, a JSON array with one chunk a line, so a restart skips
 *                             extraction and chunking, and writing or reading them goes in slices
 *   <dir>/<key>/meta.json     the manifest: format, embedder id, dimension, HNSW params, content
 *                             sha256, chunk count, created time, size + sha256 of the other files,
 *                             and a sha256 of itself
 *
 * Writes are atomic at every step: everything goes into a temp folder, each file is fsynced, the
 * manifest is written last, the folder is fsynced and renamed into place (a previous version is
 * moved aside first and put back should the rename fail), then the parent is fsynced. A kill -9
 * between any two steps leaves the old version, the new one, or an old version moved aside, which
 * the start-up sweep (sweepLeftovers) puts back. Loads check every checksum and turn a missing,
 * truncated, corrupt or stale folder into `null` (deleting it when it can never be used), never a
 * crash and never a served index.
 *
 * Temp folders carry the writing process's pid (".tmp-p<pid>-<key>-<hex>"), so the sweep at
 * start-up removes every leftover of a dead process at once while leaving alone the saves in
 * progress of another live worker sharing DATA_DIR.
 *
 * Why these need no database identity (unlike the knowledge base's collection snapshots, which
 * label chunk ids that only mean something in the SQLite file that issued them: kb/collection-
 * index.ts): an index here depends on nothing but the document's bytes, the chunker version, the
 * OCR reading and the embedder. The key names all but the embedder (retrieval-service.ts indexKey:
 * URL hash, content sha256 prefix, CHUNKER_VERSION, OCR part), the manifest holds the full content
 * sha256, the key and the embedder id and dimension, every load checks them against the caller's
 * expectation, and the chunks travel inside the folder (no ids into another store). So a folder
 * from another DATA_DIR under the same key holds the very chunks this process would build from
 * those bytes and is right to serve; one for other bytes, another key, another embedder or an
 * older format (INDEX_FORMAT_VERSION) is refused. What no check here can see: model weights
 * replaced under the same embedder id, or extraction changed without a CHUNKER_VERSION bump.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { diskCondition, storageError } from '../../util/fs-errors.ts';
import { leftoverOwner } from '../../util/temp-sweep.ts';
import { yieldToEventLoopEvery } from '../../util/yield.ts';
import { throwIfAborted } from '../../util/abort.ts';
import { digestFile, fsyncDir as syncDir, writeFileSynced, type FileDigest } from '../../util/atomic-file.ts';
import type { Chunk } from '../types.ts';
import { DEFAULT_HNSW, type HnswParams } from './hnsw.ts';
import { CollectionDenseIndex } from '../../kb/dense-index.ts';

/**
 * 2: a manifest checksum, chunks one per line, pid-tagged temp folders. 3: the dense index in the
 * collection engine's format (dense.hnsw + its manifest). A folder of an older format is not
 * served: the document is indexed again and the folder replaced (its chunker version is in the key,
 * so nothing else differs).
 */
export const INDEX_FORMAT_VERSION = 3;
const INDEX_FILE = 'dense.hnsw';
const INDEX_META_FILE = 'dense.hnsw.json';
const CHUNKS_FILE = 'chunks.json';
const META_FILE = 'meta.json';
const KEY_RE = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;

export type { FileDigest } from '../../util/atomic-file.ts';

export interface IndexMeta {
  format: number;
  key: string;
  embedderId: string | null;
  dimension: number | null;
  contentSha256: string;
  chunkCount: number;
  hnsw: (HnswParams & { space: 'cosine' }) | null;
  createdAt: string;
  files: Record<string, FileDigest>;
  /** sha256 of this manifest serialised without this field. */
  checksum?: string;
}

export interface IndexExpectation {
  embedderId: string | null;
  dimension: number | null;
  contentSha256: string;
}

export interface SaveData {
  chunks: Chunk[];
  /** One L2-normalised vector per chunk, in order; omit for a lexical-only index. */
  vectors?: Float32Array[];
  embedderId: string | null;
  dimension: number | null;
  contentSha256: string;
  hnsw?: Partial<HnswParams>;
}

export interface IndexStoreOptions {
  /** DATA_DIR/indexes */
  dir: string;
  /** Oldest indexes beyond this count are removed after a save. Default 1000. */
  maxEntries?: number;
  /** Told why a stored index was not served (corrupt, truncated, stale...). */
  onReject?: (key: string, why: string) => void;
}

export interface IndexStoreStats {
  dir: string;
  entries: number;
  bytes: number;
  maxEntries: number;
}

/** A loaded (or freshly built) index; closing drops the native HNSW structure. */
export class StoredIndex {
  readonly key: string;
  readonly chunks: Chunk[];
  readonly meta: IndexMeta;
  private hnsw: CollectionDenseIndex | null;
  private closed = false;

  constructor(key: string, chunks: Chunk[], meta: IndexMeta, hnsw: CollectionDenseIndex | null) {
    this.key = key;
    this.chunks = chunks;
    this.meta = meta;
    this.hnsw = hnsw;
  }

  /** Whether the index holds vectors (built by meta.embedderId). */
  get hasDense(): boolean {
    return this.meta.embedderId !== null;
  }

  /** Rough memory held: vectors + graph links + chunk text. */
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

export class IndexStore {
  readonly dir: string;
  readonly maxEntries: number;
  /** Per-key serialisation of load/save/delete inside this process. */
  private readonly locks = new Map<string, Promise<unknown>>();
  private sweep: Promise<SweepReport> | null = null;
  /** Temp folders of saves in progress here, which clear() must not pull from under them. */
  private readonly inFlight = new Set<string>();
  private readonly onReject?: (key: string, why: string) => void;

  constructor(opts: IndexStoreOptions) {
    this.dir = path.resolve(opts.dir);
    this.maxEntries = Math.max(1, Math.floor(opts.maxEntries ?? 1000));
    this.onReject = opts.onReject;
  }

  /**
   * Leftovers of interrupted writes, handled once per store before its first load or save (and
   * called at start-up): a previous version moved aside whose replacement never arrived is put
   * back; temp, trash and superseded folders of dead processes (or of this pid: a restart in a
   * container) are removed whatever their age. Those of another live process are left to it,
   * unless older than an hour (its pid was reused).
   */
  sweepLeftovers(): Promise<SweepReport> {
    this.sweep ??= this.doSweep().catch(() => ({ removed: 0, restored: 0 }));
    return this.sweep;
  }

  /** The meta of a stored index without loading it (null when absent or unreadable). */
  async peekMeta(key: string): Promise<IndexMeta | null> {
    checkKey(key);
    await this.sweepLeftovers();
    return readMeta(path.join(this.dir, key));
  }

  /**
   * Another stored key ending in `suffix` (e.g. the content hash and chunker version), so the same
   * bytes fetched from another URL reuse an index instead of being extracted and embedded again.
   */
  async findKeyBySuffix(suffix: string): Promise<string | null> {
    for (const name of await listDir(this.dir)) {
      if (KEY_RE.test(name) && name.endsWith(suffix)) return name;
    }
    return null;
  }

  /**
   * The stored index for `key` if it matches `expect`; else null. Corrupt or unusable folders are
   * deleted; one built by another embedder is left for the caller's rebuild to replace.
   */
  async load(key: string, expect: IndexExpectation, signal?: AbortSignal): Promise<StoredIndex | null> {
    checkKey(key);
    await this.sweepLeftovers();
    return this.withLock(key, async () => {
      const dir = path.join(this.dir, key);
      if (!(await isDir(dir))) return null;
      const verdict = await verify(dir, key, expect, signal);
      if (verdict.ok) return verdict.index;
      this.onReject?.(key, verdict.why);
      // On a read-only disk the folder stays, but it is checked (and refused) again at every load.
      if (verdict.remove) await removeDir(dir, this.dir).catch(() => undefined);
      return null;
    });
  }

  async save(key: string, data: SaveData, signal?: AbortSignal): Promise<StoredIndex> {
    checkKey(key);
    const params: HnswParams = { ...DEFAULT_HNSW, ...definedOnly(data.hnsw ?? {}) };
    validateSave(data, params);
    await this.sweepLeftovers();
    return this.withLock(key, async () => {
      const tmp = path.join(this.dir, `.tmp-p${process.pid}-${key}-${randomBytes(6).toString('hex')}`);
      try {
        await fs.mkdir(this.dir, { recursive: true });
        await fs.mkdir(tmp);
      } catch (err) {
        throw diskCondition(err) ? storageError('Could not save the index', err) : err;
      }
      this.inFlight.add(tmp);
      try {
        const files: Record<string, FileDigest> = {};
        let hnsw: CollectionDenseIndex | null = null;
        const dense = data.embedderId !== null && data.vectors !== undefined && data.vectors.length > 0;
        if (dense) {
          hnsw = await buildDense(data.vectors!, data.embedderId!, data.dimension!, params, signal);
          const file = path.join(tmp, INDEX_FILE);
          await hnsw.save(file);
          files[INDEX_FILE] = await digestFile(file);
          files[INDEX_META_FILE] = await digestFile(path.join(tmp, INDEX_META_FILE));
        }
        files[CHUNKS_FILE] = await writeChunks(path.join(tmp, CHUNKS_FILE), data.chunks, signal);
        const meta: IndexMeta = {
          format: INDEX_FORMAT_VERSION,
          key,
          embedderId: data.embedderId,
          dimension: data.embedderId === null ? null : data.dimension,
          contentSha256: data.contentSha256,
          chunkCount: data.chunks.length,
          hnsw: data.embedderId === null ? null : { ...params, space: 'cosine' },
          createdAt: new Date().toISOString(),
          files,
        };
        meta.checksum = manifestChecksum(meta);
        await writeFileSynced(path.join(tmp, META_FILE), JSON.stringify(meta, null, 1), 'wx');
        await syncDir(tmp);
        throwIfAborted(signal, 'Saving the index');
        await swapInto(tmp, path.join(this.dir, key), this.dir);
        return new StoredIndex(key, data.chunks, meta, hnsw);
      } catch (err) {
        await fs.rm(tmp, { recursive: true, force: true }).catch(() => undefined);
        throw diskCondition(err) ? storageError('Could not save the index', err) : err;
      } finally {
        this.inFlight.delete(tmp);
      }
    }).then(async (index) => {
      await this.evictOverflow().catch(() => undefined);
      return index;
    });
  }

  async delete(key: string): Promise<boolean> {
    checkKey(key);
    return this.withLock(key, async () => {
      const dir = path.join(this.dir, key);
      if (!(await isDir(dir))) return false;
      await removeDir(dir, this.dir).catch((err) => {
        throw diskCondition(err) ? storageError('Could not delete the index', err) : err;
      });
      return true;
    });
  }

  /** Removes every stored index (and leftovers of interrupted writes); returns how many indexes. */
  async clear(): Promise<number> {
    try {
      return await this.clearAll();
    } catch (err) {
      throw diskCondition(err) ? storageError('Could not clear the stored indexes', err) : err;
    }
  }

  private async clearAll(): Promise<number> {
    let removed = 0;
    for (const name of await listDir(this.dir)) {
      const full = path.join(this.dir, name);
      if (!(await isDir(full))) continue;
      if (KEY_RE.test(name)) {
        await this.withLock(name, () => removeDir(full, this.dir));
        removed++;
      } else if (!this.inFlight.has(full)) {
        const m = LEFTOVER_RE.exec(name);
        const st = m ? await fs.stat(full).catch(() => null) : null;
        // Another live worker's save in progress is its own business.
        if (m && st && leftoverOwner(m[2] ? Number(m[2]) : null, st.mtimeMs) === 'dead') await fs.rm(full, { recursive: true, force: true });
      }
    }
    return removed;
  }

  async stats(): Promise<IndexStoreStats> {
    let entries = 0;
    let bytes = 0;
    for (const name of await listDir(this.dir)) {
      if (!KEY_RE.test(name)) continue;
      const full = path.join(this.dir, name);
      if (!(await isDir(full))) continue;
      entries++;
      for (const f of await listDir(full)) bytes += (await fs.stat(path.join(full, f)).catch(() => null))?.size ?? 0;
    }
    return { dir: this.dir, entries, bytes, maxEntries: this.maxEntries };
  }

  private withLock<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.locks.get(key) ?? Promise.resolve();
    const run = prev.then(fn, fn);
    const tail = run.catch(() => undefined);
    this.locks.set(key, tail);
    void tail.then(() => {
      if (this.locks.get(key) === tail) this.locks.delete(key);
    });
    return run;
  }

  private async doSweep(): Promise<SweepReport> {
    const report: SweepReport = { removed: 0, restored: 0 };
    for (const name of await listDir(this.dir)) {
      const m = LEFTOVER_RE.exec(name);
      if (!m) continue;
      const full = path.join(this.dir, name);
      const st = await fs.stat(full).catch(() => null);
      if (!st || leftoverOwner(m[2] ? Number(m[2]) : null, st.mtimeMs) === 'live') continue;
      // A version moved aside whose replacement never arrived is the only copy: put it back.
      if (m[1] === 'old' && KEY_RE.test(m[3]) && !(await isDir(path.join(this.dir, m[3])))) {
        if (await fs.rename(full, path.join(this.dir, m[3])).then(() => true, () => false)) {
          report.restored++;
          continue;
        }
      }
      await fs.rm(full, { recursive: true, force: true }).catch(() => undefined);
      report.removed++;
    }
    return report;
  }

  private async evictOverflow(): Promise<void> {
    const entries: Array<{ name: string; mtime: number }> = [];
    for (const name of await listDir(this.dir)) {
      if (!KEY_RE.test(name)) continue;
      const st = await fs.stat(path.join(this.dir, name, META_FILE)).catch(() => null);
      entries.push({ name, mtime: st?.mtimeMs ?? 0 });
    }
    if (entries.length <= this.maxEntries) return;
    entries.sort((a, b) => a.mtime - b.mtime);
    for (const e of entries.slice(0, entries.length - this.maxEntries)) {
      await this.withLock(e.name, () => removeDir(path.join(this.dir, e.name), this.dir));
    }
  }
}

export interface SweepReport {
  removed: number;
  restored: number;
}

// ".tmp-p123-<key>-<hex>"; names without "p<pid>-" are from format 1 and count as dead.
const LEFTOVER_RE = /^\.(tmp|old|trash)-(?:p(\d+)-)?(.+?)(?:-[0-9a-f]{12})?$/;

type Verdict = { ok: true; index: StoredIndex } | { ok: false; remove: boolean; why: string };

async function verify(dir: string, key: string, expect: IndexExpectation, signal?: AbortSignal): Promise<Verdict> {
  const bad = (why: string): Verdict => ({ ok: false, remove: true, why });
  const meta = await readMeta(dir);
  if (!meta) return bad('meta.json missing, invalid or failing its checksum');
  if (meta.key !== key) return bad('meta.json names another key');
  if (meta.contentSha256 !== expect.contentSha256) return bad('content hash differs');
  if (meta.embedderId !== expect.embedderId) return { ok: false, remove: false, why: 'built by another embedder' };
  if (expect.dimension !== null && meta.embedderId !== null && meta.dimension !== expect.dimension) {
    return bad('same embedder id, different dimension (the model files changed)');
  }
  for (const [name, digest] of Object.entries(meta.files)) {
    if (name === CHUNKS_FILE) continue; // checked while it is parsed, below
    const actual = await digestFile(path.join(dir, name)).catch(() => null);
    if (!actual || actual.bytes !== digest.bytes || actual.sha256 !== digest.sha256) return bad(`${name} missing or corrupt`);
  }
  let chunks: Chunk[];
  try {
    const read = await readChunks(path.join(dir, CHUNKS_FILE), signal);
    const want = meta.files[CHUNKS_FILE];
    if (read.digest.bytes !== want.bytes || read.digest.sha256 !== want.sha256) return bad(`${CHUNKS_FILE} truncated or corrupt`);
    chunks = read.chunks;
  } catch (err) {
    if (signal?.aborted) throw err;
    return bad(`${CHUNKS_FILE} unreadable`);
  }
  if (chunks.length !== meta.chunkCount || !chunks.every((c) => c && typeof c.text === 'string')) {
    return bad(`${CHUNKS_FILE} does not match meta`);
  }
  let hnsw: CollectionDenseIndex | null = null;
  if (meta.embedderId !== null && meta.chunkCount > 0) {
    if (!meta.files[INDEX_FILE] || !meta.files[INDEX_META_FILE] || !meta.hnsw || !meta.dimension) return bad('dense index without its index file');
    try {
      hnsw = await CollectionDenseIndex.load(path.join(dir, INDEX_FILE), { embedderId: meta.embedderId, dimension: meta.dimension, params: { ef: meta.hnsw.ef } });
    } catch {
      return bad('index file unreadable');
    }
    if (hnsw.size !== meta.chunkCount) return bad('index holds another number of vectors');
  }
  return { ok: true, index: new StoredIndex(key, chunks, meta, hnsw) };
}

function manifestChecksum(meta: IndexMeta): string {
  const { checksum: _, ...rest } = meta;
  return createHash('sha256').update(JSON.stringify(rest)).digest('hex');
}

async function readMeta(dir: string): Promise<IndexMeta | null> {
  try {
    const m = JSON.parse(await fs.readFile(path.join(dir, META_FILE), 'utf8')) as IndexMeta;
    const okNum = (n: unknown) => typeof n === 'number' && Number.isInteger(n) && n >= 0;
    if (
      !m ||
      m.format !== INDEX_FORMAT_VERSION ||
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

function validateSave(data: SaveData, params: HnswParams): void {
  if (!/^[0-9a-f]{64}$/.test(data.contentSha256)) throw new Error('contentSha256 must be a hex sha256');
  if (!Array.isArray(data.chunks)) throw new Error('chunks must be an array');
  for (const [name, v, min] of [['M', params.M, 2], ['efConstruction', params.efConstruction, 1], ['ef', params.ef, 1]] as const) {
    if (!Number.isInteger(v) || v < min || v > 10_000) throw new Error(`invalid HNSW ${name}: ${v}`);
  }
  if (data.embedderId === null) {
    if (data.vectors?.length) throw new Error('vectors given for a lexical-only index (embedderId null)');
    return;
  }
  const dim = data.dimension;
  if (!dim || !Number.isInteger(dim) || dim < 1) throw new Error('a dense index needs a positive dimension');
  const vectors = data.vectors ?? [];
  if (vectors.length !== data.chunks.length) throw new Error(`${vectors.length} vectors for ${data.chunks.length} chunks`);
  vectors.forEach((v, i) => {
    if (v.length !== dim) throw new Error(`vector ${i} has dimension ${v.length}, expected ${dim}`);
    for (let k = 0; k < v.length; k++) if (!Number.isFinite(v[k])) throw new Error(`vector ${i} has a non-finite value`);
  });
}

function checkKey(key: string): void {
  if (!KEY_RE.test(key)) throw new Error(`invalid index key: ${JSON.stringify(key)}`);
}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** The collection engine's dense index over the vectors, labelled by chunk position, sized to them. */
async function buildDense(vectors: Float32Array[], embedderId: string, dimension: number, params: HnswParams, signal?: AbortSignal): Promise<CollectionDenseIndex> {
  const index = await CollectionDenseIndex.create({ embedderId, dimension, params, capacity: vectors.length });
  await index.add(
    vectors.map((_, i) => i),
    vectors,
    signal,
  );
  return index;
}

const WRITE_BATCH_BYTES = 1 << 20;

/**
 * Chunks as a JSON array with one chunk a line ("[", chunks joined by ",\n", "]"), written and
 * hashed in batches with a yield between: a big document has 100k chunks, and one stringify of
 * them all would stall the event loop for a second.
 */
async function writeChunks(file: string, chunks: readonly Chunk[], signal?: AbortSignal): Promise<FileDigest> {
  const hash = createHash('sha256');
  let bytes = 0;
  const fh = await fs.open(file, 'wx');
  try {
    let batch: string[] = ['[\n'];
    let batchChars = 2;
    const flush = async () => {
      const buf = Buffer.from(batch.join(''), 'utf8');
      batch = [];
      batchChars = 0;
      hash.update(buf);
      bytes += buf.byteLength;
      await fh.write(buf);
      throwIfAborted(signal, 'Saving the index');
    };
    for (let i = 0; i < chunks.length; i++) {
      const line = `${JSON.stringify(chunks[i])}${i + 1 < chunks.length ? ',' : ''}\n`;
      batch.push(line);
      batchChars += line.length;
      if (batchChars >= WRITE_BATCH_BYTES) await flush();
    }
    batch.push(']\n');
    await flush();
    await fh.sync();
  } finally {
    await fh.close();
  }
  return { bytes, sha256: hash.digest('hex') };
}

/** Parses chunks.json (the layout writeChunks makes) while hashing it, in slices: one pass, bounded pauses. */
async function readChunks(file: string, signal?: AbortSignal): Promise<{ chunks: Chunk[]; digest: FileDigest }> {
  const hash = createHash('sha256');
  const chunks: Chunk[] = [];
  let bytes = 0;
  let carry: Buffer | null = null;
  let lines = 0;
  let closed = false;
  const tick = yieldToEventLoopEvery(10);
  for await (const piece of createReadStream(file, { highWaterMark: 1 << 20 }) as AsyncIterable<Buffer>) {
    hash.update(piece);
    bytes += piece.byteLength;
    const buf: Buffer = carry ? Buffer.concat([carry, piece]) : piece;
    let start = 0;
    for (let nl = buf.indexOf(10, start); nl >= 0; nl = buf.indexOf(10, start)) {
      const line = buf.toString('utf8', start, nl);
      start = nl + 1;
      if (closed) throw new Error('chunks file continues after its end');
      if (lines++ === 0) {
        if (line !== '[') throw new Error('chunks file does not start an array');
      } else if (line === ']') {
        closed = true;
      } else {
        chunks.push(JSON.parse(line.endsWith(',') ? line.slice(0, -1) : line) as Chunk);
      }
      if (await tick()) throwIfAborted(signal, 'Loading the index');
    }
    carry = start < buf.byteLength ? buf.subarray(start) : null;
  }
  if (carry || !closed) throw new Error('chunks file is truncated');
  return { chunks, digest: { bytes, sha256: hash.digest('hex') } };
}

/** Renames `tmp` to `dest`, moving an existing `dest` aside first (a folder cannot be renamed over a non-empty one). */
async function swapInto(tmp: string, dest: string, parent: string): Promise<void> {
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
      // Put the previous index back rather than lose it.
      if (moved) await fs.rename(old, dest).catch(() => fs.rm(old, { recursive: true, force: true }));
      const code = (err as NodeJS.ErrnoException).code;
      if ((code === 'ENOTEMPTY' || code === 'EEXIST') && attempt < 5) continue;
      throw err;
    }
    if (moved) await fs.rm(old, { recursive: true, force: true });
    await syncDir(parent);
    return;
  }
}

async function removeDir(dir: string, parent: string): Promise<void> {
  // Rename first so a half-deleted folder is never mistaken for an index.
  const trash = path.join(parent, `.trash-p${process.pid}-${path.basename(dir)}-${randomBytes(6).toString('hex')}`);
  const target = await fs.rename(dir, trash).then(
    () => trash,
    () => dir,
  );
  await fs.rm(target, { recursive: true, force: true });
}

async function listDir(dir: string): Promise<string[]> {
  return fs.readdir(dir).catch(() => []);
}

async function isDir(p: string): Promise<boolean> {
  return (await fs.stat(p).catch(() => null))?.isDirectory() ?? false;
}
