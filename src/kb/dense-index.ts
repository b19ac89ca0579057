/**
 * A collection's dense index: one growing hnswlib-node cosine index whose labels are chunk ids.
 * Chunks come and go without a rebuild: addPoint (the capacity doubles by resizeIndex when full),
 * markDelete on removal (deleted points stay in the graph, never returned). Search takes an
 * optional id filter, run inside hnswlib's search so a filtered query still gets k results.
 *
 * Saved as two files written atomically (temp + fsync + rename): `<file>` (hnswlib's own format)
 * and `<file>.json` (embedder id, dimension, HNSW params, the deleted labels, the index file's size
 * and sha256, the identity of the database whose chunk ids are its labels), so a load checks the
 * index is whole, was made for the embedder the collection uses and, when the loader names its
 * database, labels that database's chunks. hnswlib writes on a worker thread: while a save runs,
 * adds wait and removes are held back (already hidden from searches) and applied once it ends, so
 * the file never sees a half-made change.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { toolError } from '../errors.ts';
import { DEFAULT_HNSW, HNSW_SEED, type Hnsw, type HnswParams } from '../retrieval/store/hnsw.ts';
import { yieldToEventLoopEvery } from '../util/yield.ts';
import { throwIfAborted } from '../util/abort.ts';
import { digestFile, fsyncDir, fsyncFile, tempPathFor, writeFileSynced, type FileDigest } from '../util/atomic-file.ts';
import type hnswlibTypes from 'hnswlib-node';

/** 1: the first layout (index file + JSON sidecar). */
export const DENSE_FORMAT = 1;
const INITIAL_CAPACITY = 1024;

let hnswlib: Promise<typeof hnswlibTypes> | undefined;
const loadHnswlib = async () => (await (hnswlib ??= import('hnswlib-node').then((m) => m.default))).HierarchicalNSW;

export interface DenseIndexOptions {
  embedderId: string;
  dimension: number;
  params?: Partial<HnswParams>;
  /** Points expected (a document's index knows its count): the native index starts that big, not 1,024. */
  capacity?: number;
}

export interface DenseHit {
  id: number;
  score: number;
}

interface DenseMeta {
  format: number;
  embedderId: string;
  dimension: number;
  params: HnswParams;
  /** Labels in the file that are marked deleted. */
  deleted: number[];
  count: number;
  bytes: number;
  sha256: string;
  /** KbStore.databaseId of the chunk ids used as labels; null or absent: not recorded. */
  databaseId?: string | null;
}

export class CollectionDenseIndex {
  readonly embedderId: string;
  readonly dimension: number;
  readonly params: Readonly<HnswParams>;
  private readonly index: Hnsw;
  private readonly live = new Set<number>();
  /** Labels marked deleted in the hnswlib index. */
  private readonly deleted = new Set<number>();
  /** Removed while a save was writing: hidden from searches, marked once the save ends. */
  private readonly pendingDeletes = new Set<number>();
  private writing = false;
  private lock: Promise<unknown> = Promise.resolve();

  private constructor(index: Hnsw, opts: DenseIndexOptions) {
    this.index = index;
    this.embedderId = opts.embedderId;
    this.dimension = opts.dimension;
    this.params = Object.freeze({ ...DEFAULT_HNSW, ...opts.params });
  }

  /** An empty index. */
  static async create(opts: DenseIndexOptions): Promise<CollectionDenseIndex> {
    if (!Number.isInteger(opts.dimension) || opts.dimension <= 0) throw toolError('INTERNAL_ERROR', `Invalid vector dimension ${opts.dimension}`);
    const HierarchicalNSW = await loadHnswlib();
    const index = new HierarchicalNSW('cosine', opts.dimension);
    const params = { ...DEFAULT_HNSW, ...opts.params };
    index.initIndex(Math.max(1, Math.ceil(opts.capacity ?? INITIAL_CAPACITY)), params.M, params.efConstruction, HNSW_SEED);
    index.setEf(params.ef);
    return new CollectionDenseIndex(index, opts);
  }

  /** An index built from scratch from stored vectors (in time slices). */
  static async build(
    opts: DenseIndexOptions,
    items: Iterable<{ id: number; vector: Float32Array }>,
    signal?: AbortSignal,
  ): Promise<CollectionDenseIndex> {
    const idx = await CollectionDenseIndex.create(opts);
    let ids: number[] = [];
    let vectors: Float32Array[] = [];
    for (const item of items) {
      ids.push(item.id);
      vectors.push(item.vector);
      if (ids.length === 512) {
        await idx.add(ids, vectors, signal);
        ids = [];
        vectors = [];
      }
    }
    if (ids.length > 0) await idx.add(ids, vectors, signal);
    return idx;
  }

  /** Live points. */
  get size(): number {
    return this.live.size;
  }

  /** Points marked deleted but still in the graph (a rebuild drops them). */
  get deletedCount(): number {
    return this.deleted.size + this.pendingDeletes.size;
  }

  has(id: number): boolean {
    return this.live.has(id);
  }

  /** True while hnswlib is writing a save (removes are held back meanwhile). */
  get saveInProgress(): boolean {
    return this.writing;
  }

  /** Approximate bytes of the native index (vectors + level-0 links). */
  get approxBytes(): number {
    return this.index.getMaxElements() * (this.dimension * 4 + this.params.M * 2 * 4 + 16);
  }

  /** Adds (or replaces) points, in time slices; waits for a save in progress. */
  async add(ids: readonly number[], vectors: readonly Float32Array[], signal?: AbortSignal): Promise<void> {
    if (ids.length !== vectors.length) throw toolError('INTERNAL_ERROR', `${ids.length} ids but ${vectors.length} vectors`);
    for (const v of vectors) {
      if (v.length !== this.dimension) throw toolError('INTERNAL_ERROR', `Vector of dimension ${v.length}, index has ${this.dimension}`);
    }
    return this.exclusive(async () => {
      const need = this.index.getCurrentCount() + ids.length;
      const max = this.index.getMaxElements();
      if (need > max) this.index.resizeIndex(Math.max(need, max * 2));
      const tick = yieldToEventLoopEvery(8);
      for (let i = 0; i < ids.length; i++) {
        const id = ids[i];
        // Re-adding a deleted label unmarks it and updates its vector (hnswlib's addPoint).
        this.index.addPoint(Array.from(vectors[i]), id);
        this.deleted.delete(id);
        this.live.add(id);
        if (await tick()) throwIfAborted(signal, 'Indexing');
      }
    });
  }

  /** Marks points deleted (unknown ids ignored); returns how many went. */
  remove(ids: Iterable<number>): number {
    let n = 0;
    for (const id of ids) {
      if (!this.live.delete(id)) continue;
      n++;
      if (this.writing) this.pendingDeletes.add(id);
      else this.markDeleted(id);
    }
    return n;
  }

  /** Nearest live points by cosine similarity (1 - distance), best first, ties by id; `ef` for measurements (an ef sweep). */
  search(vector: ArrayLike<number>, k: number, filter?: (id: number) => boolean, ef = this.params.ef): DenseHit[] {
    if (vector.length !== this.dimension) throw toolError('INTERNAL_ERROR', `Query of dimension ${vector.length}, index has ${this.dimension}`);
    const n = Math.min(Math.max(0, Math.floor(k)), this.live.size);
    if (n === 0) return [];
    this.index.setEf(Math.max(ef, n));
    const pending = this.pendingDeletes;
    const admit =
      pending.size > 0 ? (id: number) => !pending.has(id) && (!filter || filter(id)) : filter ? (id: number) => filter(id) : undefined;
    const { neighbors, distances } = this.index.searchKnn(Array.from(vector), n, admit);
    return neighbors.map((id, i) => ({ id, score: 1 - distances[i] })).sort((a, b) => b.score - a.score || a.id - b.id);
  }

  /** Live ids, ascending. */
  ids(): number[] {
    return [...this.live].sort((a, b) => a - b);
  }

  /**
   * Writes `file` and `file.json` atomically (each to a temp file, fsynced, renamed). Adds wait
   * for it; removes made meanwhile are applied after (the file holds the state when it began).
   * Resolves with both files' digests (a snapshot manifest records them without hashing again).
   */
  save(file: string, identity?: { databaseId: string | null }): Promise<{ index: FileDigest; meta: FileDigest }> {
    return this.exclusive(async () => {
      const dir = path.dirname(file);
      await fs.mkdir(dir, { recursive: true });
      const tmpIndex = tempPathFor(file);
      const tmpMeta = tempPathFor(`${file}.json`);
      const deleted = [...this.deleted].sort((a, b) => a - b);
      const count = this.index.getCurrentCount();
      this.writing = true;
      try {
        await this.index.writeIndex(tmpIndex);
      } finally {
        this.writing = false;
        for (const id of this.pendingDeletes) this.markDeleted(id);
        this.pendingDeletes.clear();
      }
      try {
        await fsyncFile(tmpIndex);
        const digest = await digestFile(tmpIndex);
        const meta: DenseMeta = {
          format: DENSE_FORMAT,
          embedderId: this.embedderId,
          dimension: this.dimension,
          params: { ...this.params },
          deleted,
          count,
          ...digest,
          databaseId: identity?.databaseId ?? null,
        };
        const metaDigest = await writeFileSynced(tmpMeta, JSON.stringify(meta), 'wx');
        await fs.rename(tmpIndex, file);
        await fs.rename(tmpMeta, `${file}.json`);
        await fsyncDir(dir);
        return { index: digest, meta: metaDigest };
      } catch (err) {
        await fs.rm(tmpIndex, { force: true }).catch(() => {});
        await fs.rm(tmpMeta, { force: true }).catch(() => {});
        throw err;
      }
    });
  }

  /**
   * The index saved at `file`; INTERNAL_ERROR naming the fault when it is missing, corrupt, or
   * made for another embedder or dimension.
   */
  static async load(
    file: string,
    expect: { embedderId: string; dimension: number; params?: Partial<HnswParams>; databaseId?: string | null },
  ): Promise<CollectionDenseIndex> {
    const bad = (why: string) => toolError('INTERNAL_ERROR', `Dense index snapshot rejected: ${why}`);
    let meta: DenseMeta;
    try {
      meta = JSON.parse(await fs.readFile(`${file}.json`, 'utf8')) as DenseMeta;
    } catch {
      throw bad('its manifest is missing or unreadable');
    }
    if (meta?.format !== DENSE_FORMAT) throw bad(`format ${String(meta?.format)}, expected ${DENSE_FORMAT}`);
    if (meta.embedderId !== expect.embedderId) throw bad(`built for embedder ${meta.embedderId}, not ${expect.embedderId}`);
    if (meta.dimension !== expect.dimension) throw bad(`dimension ${meta.dimension}, expected ${expect.dimension}`);
    // Labels are chunk ids, unique only within one database.
    if (expect.databaseId !== undefined && (meta.databaseId ?? null) !== expect.databaseId) {
      throw bad(`its labels are chunk ids of database ${meta.databaseId ?? '(none recorded)'}, not ${expect.databaseId ?? '(none)'}`);
    }
    const digest = await digestFile(file).catch(() => null);
    if (!digest || digest.bytes !== meta.bytes || digest.sha256 !== meta.sha256) throw bad('index file missing, truncated or corrupt');
    const HierarchicalNSW = await loadHnswlib();
    const index = new HierarchicalNSW('cosine', meta.dimension);
    try {
      await index.readIndex(file);
    } catch (err) {
      throw bad(`hnswlib could not read it (${err instanceof Error ? err.message : String(err)})`);
    }
    if (index.getNumDimensions() !== meta.dimension || index.getCurrentCount() !== meta.count) throw bad('index does not match its manifest');
    const params = { ...meta.params, ...(expect.params?.ef !== undefined ? { ef: expect.params.ef } : {}) };
    // ef is not stored in the index file.
    index.setEf(params.ef);
    const idx = new CollectionDenseIndex(index, { embedderId: meta.embedderId, dimension: meta.dimension, params });
    for (const id of meta.deleted) idx.deleted.add(id);
    for (const id of index.getIdsList()) if (!idx.deleted.has(id)) idx.live.add(id);
    return idx;
  }

  /** Removes a saved index's files (absent files are fine). */
  static async removeFiles(file: string): Promise<void> {
    await fs.rm(file, { force: true });
    await fs.rm(`${file}.json`, { force: true });
  }

  private markDeleted(id: number): void {
    if (this.live.has(id)) return; // re-added meanwhile
    this.index.markDelete(id);
    this.deleted.add(id);
  }

  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.lock.then(fn, fn);
    this.lock = run.catch(() => {});
    return run;
  }
}
