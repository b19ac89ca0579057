/**
 * The open indexes of one collection: its lexical index (always) and its dense index (when the
 * collection has an embedder), kept at the collection's version by applying each commit, and
 * persisted as snapshots tagged with that version so a restart loads them instead of re-reading
 * every chunk from SQLite.
 *
 *   <dir>/lexical.bin        CollectionLexicalIndex.serialize() (its own format, analyzer, sha256)
 *   <dir>/dense.hnsw(.json)  CollectionDenseIndex.save() (hnswlib file + its manifest)
 *   <dir>/manifest.json      written last: format, collection id, version, analyzer, embedder,
 *                            the lexical snapshot's checksum, the dense manifest's sha256, and a
 *                            sha256 of itself
 *
 * A snapshot is served only when the manifest is whole, names this collection at its current
 * version, and every file matches it; anything else (missing, stale, corrupt, another analyzer or
 * embedder) is logged with the reason and rebuilt from the store in time slices. Commits, removals
 * and persists run one at a time in order (one queue), so a snapshot never mixes two versions.
 */
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { toolError } from '../errors.ts';
import { Analyzer } from '../retrieval/tokenizer.ts';
import type { HnswParams } from '../retrieval/store/hnsw.ts';
import { errorText } from '../util/error-text.ts';
import { CollectionLexicalIndex, type LexicalChunk } from './lexical-index.ts';
import { CollectionDenseIndex, fsyncDir, writeFileSynced } from './dense-index.ts';
import type { CollectionRecord, CommitResult, KbStoreApi } from './types.ts';

/** 1: manifest + lexical.bin + dense.hnsw. */
export const COLLECTION_INDEX_FORMAT = 1;
const MANIFEST = 'manifest.json';
const LEXICAL = 'lexical.bin';
const DENSE = 'dense.hnsw';
const REBUILD_BATCH = 2048;

export interface IndexLog {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

export interface CollectionIndexesOptions {
  analyzer?: Analyzer;
  signal?: AbortSignal;
  log?: IndexLog;
  hnsw?: Partial<HnswParams>;
  /** Save snapshots right after a rebuild (in the background), so the next start loads them. Default true. */
  persistAfterRebuild?: boolean;
}

interface Manifest {
  format: number;
  collection_id: number;
  version: number;
  analyzer: string;
  embedder: string | null;
  dimension: number | null;
  chunks: number;
  lexical: { bytes: number; checksum: string };
  dense: { sha256: string } | null;
  saved_at: string;
  checksum?: string;
}

export type IndexSource = 'snapshot' | 'rebuild';

export class CollectionIndexes {
  readonly dir: string;
  readonly collectionId: number;
  readonly collectionName: string;
  private lex: CollectionLexicalIndex;
  private den: CollectionDenseIndex | null;
  private ver: number;
  private persistedVersion: number | null = null;
  private queue: Promise<unknown> = Promise.resolve();
  /** A persist queued but not started yet: later calls share it. */
  private queuedPersist: Promise<void> | null = null;
  private destroyed = false;
  private readonly log?: IndexLog;
  private readonly info: { source: IndexSource; reason: string | null; open_ms: number; last_persist_ms: number | null; persisted_at: string | null };

  private constructor(
    dir: string,
    collection: CollectionRecord,
    lexical: CollectionLexicalIndex,
    dense: CollectionDenseIndex | null,
    version: number,
    log: IndexLog | undefined,
    info: CollectionIndexes['info'],
  ) {
    this.dir = dir;
    this.collectionId = collection.id;
    this.collectionName = collection.name;
    this.lex = lexical;
    this.den = dense;
    this.ver = version;
    this.log = log;
    this.info = info;
  }

  /**
   * Loads the snapshots under `dir` when they are at `collection.version`, else rebuilds from the
   * store (lexical from its chunks, dense from its stored vectors when the collection has an
   * embedder) in time slices, stopping with the coded abort error when `signal` fires.
   */
  static async open(
    dir: string,
    collection: CollectionRecord,
    store: Pick<KbStoreApi, 'iterateChunks' | 'iterateVectors'>,
    opts: CollectionIndexesOptions = {},
  ): Promise<CollectionIndexes> {
    const started = performance.now();
    const analyzer = opts.analyzer ?? new Analyzer();
    const loaded = await loadSnapshot(dir, collection, analyzer, opts.hnsw, opts.signal);
    if (loaded.ok) {
      const ix = new CollectionIndexes(dir, collection, loaded.lexical, loaded.dense, collection.version, opts.log, {
        source: 'snapshot',
        reason: null,
        open_ms: Math.round(performance.now() - started),
        last_persist_ms: null,
        persisted_at: null,
      });
      ix.persistedVersion = collection.version;
      opts.log?.info(
        { event: 'kb.index_loaded', collection: collection.name, version: collection.version, chunks: ix.lex.size, ms: ix.info.open_ms },
        'collection index loaded from its snapshot',
      );
      return ix;
    }
    opts.log?.warn({ event: 'kb.index_rebuild', collection: collection.name, version: collection.version, reason: loaded.reason }, `rebuilding the collection index: ${loaded.reason}`);
    const lexical = new CollectionLexicalIndex(analyzer);
    let batch: LexicalChunk[] = [];
    for (const c of store.iterateChunks(collection.id, REBUILD_BATCH)) {
      batch.push({ id: c.id, text: c.text, heading_path: c.heading_path });
      if (batch.length === REBUILD_BATCH) {
        await lexical.addSliced(batch, opts.signal);
        batch = [];
      }
    }
    if (batch.length > 0) await lexical.addSliced(batch, opts.signal);
    let dense: CollectionDenseIndex | null = null;
    if (collection.embedder) dense = await rebuildDense(collection, store, opts.hnsw, opts.signal);
    const ix = new CollectionIndexes(dir, collection, lexical, dense, collection.version, opts.log, {
      source: 'rebuild',
      reason: loaded.reason,
      open_ms: Math.round(performance.now() - started),
      last_persist_ms: null,
      persisted_at: null,
    });
    opts.log?.info(
      { event: 'kb.index_rebuilt', collection: collection.name, version: collection.version, chunks: lexical.size, vectors: dense?.size ?? null, ms: ix.info.open_ms },
      'collection index rebuilt from the store',
    );
    if (opts.persistAfterRebuild !== false) {
      ix.persist().catch((err) =>
        opts.log?.warn({ event: 'kb.persist_failed', collection: collection.name, err: errorText(err) }, 'index snapshot not saved; it is rebuilt again at the next open'),
      );
    }
    return ix;
  }

  get version(): number {
    return this.ver;
  }

  get lexical(): CollectionLexicalIndex {
    return this.lex;
  }

  /** null while the collection is lexical only. */
  get dense(): CollectionDenseIndex | null {
    return this.den;
  }

  /**
   * Applies a committed replacement: its removed chunks go, its added chunks (and vectors) come,
   * the version becomes the commit's. A commit at or below the current version is already in
   * (an index opened after it) and is skipped. `collection` (read after the commit) lets the first
   * embedded document create the dense index; without it such a commit fails, and the caller
   * reopens (rebuilds) the indexes.
   */
  apply(commit: CommitResult, collection?: Pick<CollectionRecord, 'embedder' | 'dimension'>): Promise<void> {
    return this.enqueue(async () => {
      if (commit.version <= this.ver) return;
      await this.removeFromBoth(commit.removedChunkIds);
      await this.lex.addSliced(commit.added);
      if (commit.vectors && commit.vectors.length > 0) {
        if (commit.vectors.length !== commit.added.length) throw toolError('INTERNAL_ERROR', `Commit has ${commit.added.length} chunks but ${commit.vectors.length} vectors`);
        if (!this.den) {
          if (!collection?.embedder) throw toolError('INTERNAL_ERROR', 'A commit brought vectors to a lexical-only index; the indexes must be reopened');
          this.den = await CollectionDenseIndex.create({ embedderId: collection.embedder, dimension: collection.dimension ?? commit.vectors[0].length });
        }
        await this.den.add(
          commit.added.map((c) => c.id),
          commit.vectors,
        );
      } else if (this.den && commit.added.length > 0) {
        // Searchable lexically; a rebuild from stored vectors would not have them either.
        this.log?.warn({ event: 'kb.index_no_vectors', collection: this.collectionName, chunks: commit.added.length }, 'a commit to an embedded collection came without vectors');
      }
      this.ver = commit.version;
    });
  }

  /** Removes chunks (a deleted document) and sets the version. */
  removeChunks(version: number, ids: readonly number[]): Promise<void> {
    return this.enqueue(async () => {
      if (version <= this.ver) return;
      await this.removeFromBoth(ids);
      this.ver = version;
    });
  }

  /** Removes from both indexes; a compaction that falls due runs in time slices. */
  private async removeFromBoth(ids: readonly number[]): Promise<void> {
    this.lex.remove(ids, { deferCompaction: true });
    this.den?.remove(ids);
    if (this.lex.needsCompaction) await this.lex.compactSliced();
  }

  /**
   * Writes both snapshots and then the manifest, each atomically, tagged with the version. Cheap
   * when nothing changed since the last persist; overlapping calls are serialized, and calls made
   * while one is waiting to start share it.
   */
  persist(): Promise<void> {
    if (this.queuedPersist) return this.queuedPersist;
    const p = this.enqueue(async () => {
      this.queuedPersist = null;
      if (this.destroyed || this.persistedVersion === this.ver) return;
      await this.writeSnapshot();
    });
    this.queuedPersist = p;
    return p;
  }

  /** Removes the snapshot files (the collection is gone); later persists do nothing. */
  destroy(): Promise<void> {
    this.destroyed = true;
    return this.enqueue(async () => {
      await fs.rm(this.dir, { recursive: true, force: true });
    });
  }

  stats(): Record<string, unknown> {
    return {
      version: this.ver,
      persisted_version: this.persistedVersion,
      source: this.info.source,
      rebuild_reason: this.info.reason,
      open_ms: this.info.open_ms,
      last_persist_ms: this.info.last_persist_ms,
      persisted_at: this.info.persisted_at,
      lexical: { chunks: this.lex.size, tombstones: this.lex.tombstones, approx_bytes: this.lex.approxBytes },
      dense: this.den
        ? { embedder: this.den.embedderId, dimension: this.den.dimension, vectors: this.den.size, deleted: this.den.deletedCount, approx_bytes: this.den.approxBytes }
        : null,
    };
  }

  private enqueue(fn: () => Promise<void>): Promise<void> {
    const run = this.queue.then(fn);
    this.queue = run.catch(() => {});
    return run;
  }

  private async writeSnapshot(): Promise<void> {
    const started = performance.now();
    const version = this.ver;
    await fs.mkdir(this.dir, { recursive: true });
    const tag = `.tmp-p${process.pid}-${randomBytes(4).toString('hex')}`;
    const lexFile = path.join(this.dir, LEXICAL);
    const buf = await this.lex.serializeSliced();
    const tmp = lexFile + tag;
    try {
      await writeFileSynced(tmp, buf);
      await fs.rename(tmp, lexFile);
    } catch (err) {
      await fs.rm(tmp, { force: true }).catch(() => {});
      throw err;
    }
    let dense: Manifest['dense'] = null;
    const denseFile = path.join(this.dir, DENSE);
    if (this.den) {
      await this.den.save(denseFile);
      dense = { sha256: sha256(await fs.readFile(`${denseFile}.json`)) };
    } else {
      await CollectionDenseIndex.removeFiles(denseFile);
    }
    const manifest: Manifest = {
      format: COLLECTION_INDEX_FORMAT,
      collection_id: this.collectionId,
      version,
      analyzer: this.lex.analyzer.signature,
      embedder: this.den?.embedderId ?? null,
      dimension: this.den?.dimension ?? null,
      chunks: this.lex.size,
      lexical: { bytes: buf.length, checksum: buf.subarray(buf.length - 32).toString('hex') },
      dense,
      saved_at: new Date().toISOString(),
    };
    manifest.checksum = manifestChecksum(manifest);
    const mFile = path.join(this.dir, MANIFEST);
    const mTmp = mFile + tag;
    try {
      await writeFileSynced(mTmp, JSON.stringify(manifest));
      await fs.rename(mTmp, mFile);
      await fsyncDir(this.dir);
    } catch (err) {
      await fs.rm(mTmp, { force: true }).catch(() => {});
      throw err;
    }
    this.persistedVersion = version;
    this.info.last_persist_ms = Math.round(performance.now() - started);
    this.info.persisted_at = manifest.saved_at;
  }
}

type Loaded = { ok: true; lexical: CollectionLexicalIndex; dense: CollectionDenseIndex | null } | { ok: false; reason: string };

/** The snapshots under `dir` when they are whole and at the collection's version, else why not. */
async function loadSnapshot(dir: string, c: CollectionRecord, analyzer: Analyzer, hnsw?: Partial<HnswParams>, signal?: AbortSignal): Promise<Loaded> {
  const no = (reason: string): Loaded => ({ ok: false, reason });
  let raw: string;
  try {
    raw = await fs.readFile(path.join(dir, MANIFEST), 'utf8');
  } catch {
    return no('no snapshot');
  }
  let m: Manifest;
  try {
    m = JSON.parse(raw) as Manifest;
  } catch {
    return no('snapshot manifest unreadable');
  }
  if (typeof m !== 'object' || m === null || m.checksum !== manifestChecksum(m)) return no('snapshot manifest fails its checksum');
  if (m.format !== COLLECTION_INDEX_FORMAT) return no(`snapshot format ${m.format}, expected ${COLLECTION_INDEX_FORMAT}`);
  if (m.collection_id !== c.id) return no(`snapshot of collection ${m.collection_id}, not ${c.id}`);
  if (m.version !== c.version) return no(`snapshot at version ${m.version}, collection at ${c.version}`);
  if (m.analyzer !== analyzer.signature) return no(`snapshot built by analyzer ${m.analyzer}, not ${analyzer.signature}`);
  if ((m.embedder ?? null) !== (c.embedder ?? null)) return no(`snapshot for embedder ${m.embedder ?? 'none'}, collection uses ${c.embedder ?? 'none'}`);
  let lexical: CollectionLexicalIndex;
  try {
    const buf = await fs.readFile(path.join(dir, LEXICAL));
    if (buf.length !== m.lexical.bytes || buf.subarray(buf.length - 32).toString('hex') !== m.lexical.checksum) return no('lexical snapshot does not match its manifest');
    lexical = await CollectionLexicalIndex.deserializeSliced(buf, analyzer, signal);
  } catch (err) {
    if (signal?.aborted) throw err;
    return no(`lexical snapshot unusable: ${errorText(err)}`);
  }
  if (lexical.size !== m.chunks) return no('lexical snapshot does not match its manifest');
  let dense: CollectionDenseIndex | null = null;
  if (c.embedder) {
    if (!m.dense || m.dimension === null) return no('dense snapshot missing');
    try {
      const denseFile = path.join(dir, DENSE);
      if (sha256(await fs.readFile(`${denseFile}.json`)) !== m.dense.sha256) return no('dense snapshot does not match its manifest');
      dense = await CollectionDenseIndex.load(denseFile, { embedderId: c.embedder, dimension: c.dimension ?? m.dimension, params: hnsw });
    } catch (err) {
      return no(`dense snapshot unusable: ${errorText(err)}`);
    }
  }
  return { ok: true, lexical, dense };
}

async function rebuildDense(
  c: CollectionRecord,
  store: Pick<KbStoreApi, 'iterateVectors'>,
  hnsw: Partial<HnswParams> | undefined,
  signal?: AbortSignal,
): Promise<CollectionDenseIndex | null> {
  let dense: CollectionDenseIndex | null = c.dimension ? await CollectionDenseIndex.create({ embedderId: c.embedder!, dimension: c.dimension, params: hnsw }) : null;
  let ids: number[] = [];
  let vectors: Float32Array[] = [];
  const flush = async () => {
    dense ??= await CollectionDenseIndex.create({ embedderId: c.embedder!, dimension: vectors[0].length, params: hnsw });
    await dense.add(ids, vectors, signal);
    ids = [];
    vectors = [];
  };
  for (const { id, vector } of store.iterateVectors(c.id, REBUILD_BATCH)) {
    ids.push(id);
    vectors.push(vector);
    if (ids.length === REBUILD_BATCH) await flush();
  }
  if (ids.length > 0) await flush();
  return dense;
}

function sha256(data: Uint8Array | string): string {
  return createHash('sha256').update(data).digest('hex');
}

function manifestChecksum(m: Manifest): string {
  const { checksum: _, ...rest } = m;
  return sha256(JSON.stringify(rest));
}
