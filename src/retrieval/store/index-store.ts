/**
 * Per-document search indexes persisted on disk, one folder per key, each a snapshot in the one
 * index format the collection engine uses too (src/kb/index-snapshot.ts):
 *
 *   <dir>/<key>/lexical.bin      the document's BM25F index (CollectionLexicalIndex.serialize), so a
 *                                restart loads it instead of tokenizing every chunk again
 *   <dir>/<key>/dense.hnsw(.json)  the dense index (absent for lexical-only indexes):
 *                                CollectionDenseIndex.save, labels are chunk positions
 *   <dir>/<key>/chunks.json      the chunks (a document has no SQLite rows), a JSON array with one
 *                                chunk a line, so a restart skips extraction and chunking, and
 *                                writing or reading them goes in slices
 *   <dir>/<key>/manifest.json    written last: kind "document", key, content sha256, chunker
 *                                version, language, analyzer, embedder, dimension, HNSW params,
 *                                chunk count, size + sha256 of the other files, and a sha256 of
 *                                itself (the collection-only fields are null)
 *
 * Writes are atomic at every step: everything goes into a temp folder, the manifest is written
 * last, the folder is renamed into place (a previous version is moved aside first and put back
 * should the rename fail). Nothing is fsynced: these folders are a cache of their documents, and
 * a power cut that tears a file is caught by the checksums at load and costs a rebuild, so a cold
 * retrieve_chunks answer does not wait on the disk (SnapshotWriter.begin's `durable`). A kill -9
 * between any two steps leaves the old version, the new one, or an old version moved aside, which
 * the start-up sweep (sweepLeftovers) puts back. Loads check every checksum and turn a missing,
 * truncated, corrupt or stale folder into `null` (deleting it when it can never be used), never a
 * crash and never a served index.
 *
 * Temp folders carry the writing process's pid (".tmp-p<pid>-<key>-<hex>"), so the sweep at
 * start-up removes every leftover of a dead process at once while leaving alone the saves in
 * progress of another live worker sharing DATA_DIR.
 *
 * Older folders: the previous per-document layout (meta.json of format 3 + chunks.json +
 * dense.hnsw) is verified as it was, its lexical index built from its chunks, and the folder
 * rewritten in the current format (chunks and dense files carried over unchanged), without user
 * action and without extracting or embedding again. Formats 1 and 2 are refused: the document is
 * indexed again and the folder replaced. A snapshot whose lexical index was built by another
 * analyzer or BM25 parameters gets its lexical index rebuilt from its chunks and rewritten alike.
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
import fs from 'node:fs/promises';
import path from 'node:path';
import { diskCondition, storageError } from '../../util/fs-errors.ts';
import { throwIfAborted } from '../../util/abort.ts';
import type { Chunk } from '../types.ts';
import { DEFAULT_HNSW, type HnswParams } from './hnsw.ts';
import { CollectionDenseIndex } from '../../kb/dense-index.ts';
import {
  DENSE_FILE,
  DENSE_META_FILE,
  LEFTOVER_RE,
  MANIFEST_FILE,
  SNAPSHOT_FORMAT,
  SnapshotFault,
  SnapshotWriter,
  deadLeftover,
  loadDense,
  loadLexical,
  readManifest,
  removeSnapshotDir,
  sweepSnapshotLeftovers,
  type SweepReport,
} from '../../kb/index-snapshot.ts';
import { DocumentLexicalIndex } from '../document-lexical-index.ts';
import { Analyzer, SERVER_ANALYZER, type AnalyzerOptions } from '../tokenizer.ts';
import { DEFAULT_BM25_PARAMS, type Bm25Params } from '../bm25.ts';
import { CHUNKS_FILE, writeChunks } from './chunks-file.ts';
import { LEGACY_META_FILE, readLegacyMeta, verifyLegacy } from './legacy-folder.ts';
import { StoredIndex, chunkerVersionOf, documentFields, metaOf, readChunksChecked, type IndexExpectation, type IndexMeta, type LexicalSettings, type Rewrite, type Verdict } from './stored-index.ts';

/** The folder format: the shared snapshot's (src/kb/index-snapshot.ts). */
export const INDEX_FORMAT_VERSION = SNAPSHOT_FORMAT;
export { LEGACY_INDEX_FORMAT } from './legacy-folder.ts';
export { StoredIndex, type IndexExpectation, type IndexMeta, type LexicalSettings } from './stored-index.ts';
const KEY_RE = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;
/** A document's index is never added to after a load: its snapshot needs no room to grow. */
const DOCUMENT_INDEX_FORMAT = { growable: false } as const;

export type { FileDigest } from '../../util/atomic-file.ts';
export type { SweepReport } from '../../kb/index-snapshot.ts';

export interface SaveData {
  chunks: Chunk[];
  /** One L2-normalised vector per chunk, in order; omit for a lexical-only index. */
  vectors?: Float32Array[];
  embedderId: string | null;
  dimension: number | null;
  contentSha256: string;
  hnsw?: Partial<HnswParams>;
  /** The lexical index of `chunks` (DocumentLexicalIndex.forDocument); built here with the store's settings when absent. */
  lexical?: DocumentLexicalIndex;
  /** Recorded in the manifest; default: read from the key ("-c<version>"). */
  chunkerVersion?: number;
}

export interface IndexStoreOptions {
  /** DATA_DIR/indexes */
  dir: string;
  /** Oldest indexes beyond this count are removed after a save. Default 1000. */
  maxEntries?: number;
  /** Told why a stored index was not served (corrupt, truncated, stale...). */
  onReject?: (key: string, why: string) => void;
  /** Lexical settings of saves without a lexical index and loads that name none. Default: the server's. */
  analyzer?: AnalyzerOptions;
  bm25?: Partial<Bm25Params>;
}

export interface IndexStoreStats {
  dir: string;
  entries: number;
  bytes: number;
  maxEntries: number;
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
  private readonly lexicalDefaults: LexicalSettings;

  constructor(opts: IndexStoreOptions) {
    this.dir = path.resolve(opts.dir);
    this.maxEntries = Math.max(1, Math.floor(opts.maxEntries ?? 1000));
    this.onReject = opts.onReject;
    this.lexicalDefaults = { analyzer: new Analyzer(opts.analyzer ?? SERVER_ANALYZER), ...(opts.bm25 ? { bm25: opts.bm25 } : {}) };
  }

  /**
   * Leftovers of interrupted writes, handled once per store before its first load or save (and
   * called at start-up): a previous version moved aside whose replacement never arrived is put
   * back; temp, trash and superseded folders of dead processes (or of this pid: a restart in a
   * container) are removed whatever their age. Those of another live process are left to it,
   * unless older than an hour (its pid was reused).
   */
  sweepLeftovers(): Promise<SweepReport> {
    this.sweep ??= sweepSnapshotLeftovers(this.dir, (name) => KEY_RE.test(name)).catch(() => ({ removed: 0, restored: 0 }));
    return this.sweep;
  }

  /** The meta of a stored index without loading it (null when absent, unreadable or of a format that is not served). */
  async peekMeta(key: string): Promise<IndexMeta | null> {
    checkKey(key);
    await this.sweepLeftovers();
    const dir = path.join(this.dir, key);
    const read = await readManifest(dir);
    if (read.ok) return read.manifest.kind === 'document' ? metaOf(read.manifest) : null;
    return read.absent ? readLegacyMeta(dir) : null;
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
   * deleted; one built by another embedder is left for the caller's rebuild to replace. A folder of
   * the previous layout is served and rewritten in the current one.
   */
  async load(key: string, expect: IndexExpectation, signal?: AbortSignal): Promise<StoredIndex | null> {
    checkKey(key);
    await this.sweepLeftovers();
    const lexical = expect.lexical ?? this.lexicalDefaults;
    return this.withLock(key, async () => {
      const dir = path.join(this.dir, key);
      if (!(await isDir(dir))) return null;
      const verdict = await verify(dir, key, expect, lexical, signal);
      if (verdict.ok) {
        if (verdict.rewrite) await this.rewrite(dir, verdict.index, verdict.rewrite, signal);
        return verdict.index;
      }
      this.onReject?.(key, verdict.why);
      // On a read-only disk the folder stays, but it is checked (and refused) again at every load.
      if (verdict.remove) await removeSnapshotDir(dir).catch(() => undefined);
      return null;
    });
  }

  /**
   * Writes a verified folder again in the current format with its new lexical index, carrying its
   * chunks and dense files over. A failure leaves the folder as it was (it is verified and
   * rewritten again at the next load); the index is served either way.
   */
  private async rewrite(dir: string, index: StoredIndex, plan: Rewrite, signal?: AbortSignal): Promise<void> {
    let w: SnapshotWriter | null = null;
    try {
      w = await SnapshotWriter.begin(dir, { durable: false });
      this.inFlight.add(w.dir);
      await w.carry(dir, CHUNKS_FILE, plan.chunks);
      if (plan.dense) {
        await w.carry(dir, DENSE_FILE, plan.dense.index);
        await w.carry(dir, DENSE_META_FILE, plan.dense.meta);
      }
      await w.writeLexical(index.lexical.index, undefined, signal, DOCUMENT_INDEX_FORMAT);
      const m = await w.commit(plan.fields, () => throwIfAborted(signal, 'Saving the index'));
      Object.assign(index.meta, metaOf(m));
    } catch (err) {
      await w?.abort();
      if (signal?.aborted) throw err;
    } finally {
      if (w) this.inFlight.delete(w.dir);
    }
  }

  async save(key: string, data: SaveData, signal?: AbortSignal): Promise<StoredIndex> {
    checkKey(key);
    const params: HnswParams = { ...DEFAULT_HNSW, ...definedOnly(data.hnsw ?? {}) };
    validateSave(data, params);
    await this.sweepLeftovers();
    if (data.lexical && data.lexical.size !== data.chunks.length) throw new Error(`a lexical index of ${data.lexical.size} chunks for ${data.chunks.length} chunks`);
    return this.withLock(key, async () => {
      const lexical = data.lexical ?? (await DocumentLexicalIndex.forDocument(data.chunks, this.lexicalDefaults.analyzer, this.lexicalDefaults.bm25, signal));
      let w: SnapshotWriter;
      try {
        w = await SnapshotWriter.begin(path.join(this.dir, key), { durable: false });
      } catch (err) {
        throw diskCondition(err) ? storageError('Could not save the index', err) : err;
      }
      this.inFlight.add(w.dir);
      try {
        let hnsw: CollectionDenseIndex | null = null;
        const dense = data.embedderId !== null && data.vectors !== undefined && data.vectors.length > 0;
        if (dense) {
          hnsw = await buildDense(data.vectors!, data.embedderId!, data.dimension!, params, signal);
          await w.writeDense(hnsw);
        }
        w.record(CHUNKS_FILE, await writeChunks(w.path(CHUNKS_FILE), data.chunks, signal, w.durable));
        await w.writeLexical(lexical.index, undefined, signal, DOCUMENT_INDEX_FORMAT);
        throwIfAborted(signal, 'Saving the index');
        const manifest = await w.commit(
          documentFields(key, {
            contentSha256: data.contentSha256,
            chunkerVersion: data.chunkerVersion ?? chunkerVersionOf(key),
            language: lexical.language,
            analyzer: lexical.analyzer.signature,
            embedderId: data.embedderId,
            dimension: data.embedderId === null ? null : data.dimension,
            hnsw: data.embedderId === null ? null : { ...params, space: 'cosine' },
            chunks: data.chunks.length,
          }),
          () => throwIfAborted(signal, 'Saving the index'),
        );
        return new StoredIndex(key, data.chunks, metaOf(manifest), hnsw, lexical);
      } catch (err) {
        await w.abort();
        throw diskCondition(err) ? storageError('Could not save the index', err) : err;
      } finally {
        this.inFlight.delete(w.dir);
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
      await removeSnapshotDir(dir).catch((err) => {
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
        await this.withLock(name, () => removeSnapshotDir(full));
        removed++;
      } else if (!this.inFlight.has(full) && LEFTOVER_RE.test(name)) {
        // Another live worker's save in progress is its own business.
        if (await deadLeftover(this.dir, name)) await fs.rm(full, { recursive: true, force: true });
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

  private async evictOverflow(): Promise<void> {
    const entries: Array<{ name: string; mtime: number }> = [];
    for (const name of await listDir(this.dir)) {
      if (!KEY_RE.test(name)) continue;
      const st = (await fs.stat(path.join(this.dir, name, MANIFEST_FILE)).catch(() => null)) ?? (await fs.stat(path.join(this.dir, name, LEGACY_META_FILE)).catch(() => null));
      entries.push({ name, mtime: st?.mtimeMs ?? 0 });
    }
    if (entries.length <= this.maxEntries) return;
    entries.sort((a, b) => a.mtime - b.mtime);
    for (const e of entries.slice(0, entries.length - this.maxEntries)) {
      await this.withLock(e.name, () => removeSnapshotDir(path.join(this.dir, e.name)));
    }
  }
}

const sameParams = (a: Readonly<Bm25Params>, b: Readonly<Bm25Params>) => (Object.keys(b) as Array<keyof Bm25Params>).every((k) => a[k] === b[k]);

async function verify(dir: string, key: string, expect: IndexExpectation, lex: LexicalSettings, signal?: AbortSignal): Promise<Verdict> {
  const bad = (why: string): Verdict => ({ ok: false, remove: true, why });
  const read = await readManifest(dir);
  if (!read.ok) return read.absent ? verifyLegacy(dir, key, expect, lex, signal) : bad(`${MANIFEST_FILE}: ${read.reason}`);
  const m = read.manifest;
  if (m.kind !== 'document' || m.key !== key) return bad(`${MANIFEST_FILE} names another key`);
  if (m.content_sha256 !== expect.contentSha256) return bad('content hash differs');
  if (m.embedder !== expect.embedderId) return { ok: false, remove: false, why: 'built by another embedder' };
  if (expect.dimension !== null && m.embedder !== null && m.dimension !== expect.dimension) {
    return bad('same embedder id, different dimension (the model files changed)');
  }
  const chunksDigest = m.files[CHUNKS_FILE];
  if (!chunksDigest) return bad(`${CHUNKS_FILE} missing from the manifest`);
  const chunks = await readChunksChecked(dir, chunksDigest, m.chunks, signal);
  if (typeof chunks === 'string') return bad(chunks);
  let hnsw: CollectionDenseIndex | null = null;
  if (m.embedder !== null && m.chunks > 0) {
    if (!m.hnsw || !m.dimension) return bad('dense index without its parameters');
    try {
      hnsw = await loadDense(dir, m, { embedderId: m.embedder, dimension: m.dimension, params: { ef: m.hnsw.ef } });
    } catch (err) {
      if (!(err instanceof SnapshotFault)) throw err;
      return bad(`dense index unusable: ${err.message}`);
    }
    if (hnsw.size !== m.chunks) return bad('index holds another number of vectors');
  }
  const language = m.language ?? null;
  const wanted = { ...DEFAULT_BM25_PARAMS, ...lex.bm25 };
  let lexical: DocumentLexicalIndex | null = null;
  if (m.analyzer === lex.analyzer.signature) {
    try {
      const index = await loadLexical(dir, m, DocumentLexicalIndex.analyzerFor(lex.analyzer, language), signal);
      if (sameParams(index.params, wanted)) lexical = DocumentLexicalIndex.fromSnapshot(index, language);
    } catch (err) {
      if (!(err instanceof SnapshotFault)) throw err;
      return bad(`lexical index unusable: ${err.message}`);
    }
  }
  const meta = metaOf(m);
  if (lexical) return { ok: true, index: new StoredIndex(key, chunks, meta, hnsw, lexical) };
  // Built by another analyzer or other BM25 parameters: rebuilt from the chunks, written again.
  const rebuilt = await DocumentLexicalIndex.forDocument(chunks, lex.analyzer, lex.bm25, signal);
  const dense = m.files[DENSE_FILE] && m.files[DENSE_META_FILE] ? { index: m.files[DENSE_FILE], meta: m.files[DENSE_META_FILE] } : null;
  const { format: _f, files: _fs, saved_at: _s, checksum: _c, ...fields } = m;
  return {
    ok: true,
    index: new StoredIndex(key, chunks, meta, hnsw, rebuilt),
    rewrite: { fields: { ...fields, language: rebuilt.language, analyzer: rebuilt.analyzer.signature }, chunks: chunksDigest, dense },
  };
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

async function listDir(dir: string): Promise<string[]> {
  return fs.readdir(dir).catch(() => []);
}

async function isDir(p: string): Promise<boolean> {
  return (await fs.stat(p).catch(() => null))?.isDirectory() ?? false;
}
