/**
 * The open indexes of one collection: its lexical index (always) and its dense index (when the
 * collection has an embedder), kept at the collection's version by applying each commit, and
 * persisted as snapshots tagged with that version so a restart loads them instead of re-reading
 * every chunk from SQLite. A snapshot is the one index format (src/kb/index-snapshot.ts), the
 * same as a retrieve_chunks document's, written in a temp folder and swapped in atomically:
 *
 *   <dir>/lexical.bin        CollectionLexicalIndex.serialize() (its own format, analyzer, sha256)
 *   <dir>/dense.hnsw(.json)  CollectionDenseIndex.save() (hnswlib file + its manifest)
 *   <dir>/manifest.json      written last: format, kind "collection", database id, collection id,
 *                            version, analyzer, embedder, size + sha256 of every file, and a sha256
 *                            of itself (the per-document fields are null)
 *
 * A snapshot is served only when the manifest is whole, names this database and this collection at
 * its current version, and every file matches it; anything else (missing, stale, corrupt, another
 * database, analyzer or embedder) is logged with the reason and rebuilt from the store in time
 * slices. Commits, removals and persists run one at a time in order (one queue), so a snapshot
 * never mixes two versions.
 *
 * The database id (KbStore.databaseId: random, made with the database) is what makes collection
 * id, version and chunk ids mean anything: a new database (kb.sqlite moved away, indexes/ kept)
 * hands out collection id 1, versions and chunk ids from 1 again, and an old snapshot that matched
 * on those alone would be "caught up" into an index of the old chunks under the new ids. So every
 * file carries it (manifest, lexical header, dense manifest) and a mismatch means rebuild; so do
 * snapshots of format 1, written before the id existed.
 *
 * Several processes on one DATA_DIR (API replicas, ingestion workers) commit to the same SQLite
 * file, so an open index can fall behind the store. Catch-up brings it to the store's version by
 * diffing id sets: chunk rows are immutable once committed and ids never reused (kb-store.ts), so
 * the held ids missing from the store are removed and the store's ids missing here are read (rows
 * and vectors, in batches) and added; the result scores exactly as a rebuild (BM25 statistics are
 * exact; HNSW gets the same points, inserted in another order). A snapshot at an OLDER version of
 * the same collection is loaded and caught up rather than rebuilt. A store without the catch-up
 * reads (test fakes) keeps the old behaviour: stale snapshots are rebuilt, commits applied as given.
 *
 * Snapshot writers exclude each other across processes with a lease row in SQLite's meta table
 * (KbStore.acquireLease: an IMMEDIATE transaction, so exactly one process holds it; a dead holder's
 * lease expires after LEASE_TTL_MS). The writer renews it before each file and checks it before the
 * folder rename that publishes the snapshot, skips the write when the folder already holds a
 * snapshot at its version or newer (replicas catching up the same commit write once), and a
 * persist that finds the lease taken leaves `persistPending` set for its caller to retry. SQLite is
 * the one lock every process on the volume already shares, so no Redis and no lock files (which
 * need stale detection by pid or mtime that a shared volume makes unreliable). A reader that finds
 * a mismatched snapshot while another process holds the lease waits for it and reads once more.
 *
 * Why this size (a class of about 460 lines): the lexical and the dense index of a collection must
 * stay at one version together, so opening (snapshot or rebuild), applying a commit, catching up,
 * removing chunks and persisting all run through one ordered queue over the same two indexes and
 * the same version and persisted-version fields; split apart, each piece would need that queue
 * and those fields to keep a snapshot from mixing two versions. The snapshot format itself
 * (index-snapshot.ts), each index (lexical-index.ts, dense-index.ts) and the choice of what to
 * keep open (index-registry.ts) have their own files.
 */
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setImmediate as yieldTurn, setTimeout as sleep } from 'node:timers/promises';
import { toolError } from '../errors.ts';
import { Analyzer, SERVER_ANALYZER } from '../retrieval/tokenizer.ts';
import type { HnswParams } from '../retrieval/store/hnsw.ts';
import { errorText } from '../util/error-text.ts';
import { CollectionLexicalIndex, type LexicalChunk } from './lexical-index.ts';
import { CollectionDenseIndex } from './dense-index.ts';
import { DENSE_FILE, LEXICAL_FILE, SnapshotFault, SnapshotWriter, loadDense, loadLexical, readManifest, sweepOnce, type SnapshotManifest } from './index-snapshot.ts';
import type { CollectionRecord, CommitResult, KbStoreApi } from './types.ts';
import { pidRunning } from './db.ts';

/**
 * 1: manifest + lexical.bin + dense.hnsw. 2: every file carries the database id. 4: the shared
 * snapshot format (src/kb/index-snapshot.ts). Format 2 is still read (and written again in 4);
 * format 1 is rebuilt from the store.
 */
export { SNAPSHOT_FORMAT as COLLECTION_INDEX_FORMAT } from './index-snapshot.ts';
const REBUILD_BATCH = 2048;
/** Chunks read from the store per catch-up step (rows and vectors of new ids). */
const CATCH_UP_BATCH = 512;
/** Live ids read per page while listing a collection (~2 ms each), and tries before one big read. */
const ID_PAGE = 8192;
const ID_PAGE_TRIES = 3;
/** Ids checked per turn of the event loop in the diff. */
const DIFF_STEP = 16384;
/** A snapshot writer's lease; renewed before each file, so it only lapses when a writer stalls this long. */
const LEASE_TTL_MS = 60_000;
/** How long an open waits for another process's snapshot write before it rebuilds. */
const LEASE_WAIT_MS = 10_000;

/** Store reads beyond the rebuild's: diffing ids, reading new rows and vectors, and the snapshot lease. */
export type CatchUpStore = Pick<
  KbStoreApi,
  'collectionChunkIds' | 'collectionState' | 'chunkIdPage' | 'chunkCountThrough' | 'getChunks' | 'getChunksForIndex' | 'chunkVectors' | 'acquireLease' | 'releaseLease' | 'leaseHolder'
>;
/**
 * What the indexes read from the store; without the catch-up reads, stale indexes are rebuilt.
 * Without databaseId (test fakes) snapshots are tied to no database (database_id null).
 */
export type IndexStore = Pick<KbStoreApi, 'iterateChunks' | 'iterateVectors' | 'databaseId'> & Partial<CatchUpStore> & { getCollectionById?(collectionId: number): CollectionRecord | null };

/**
 * Which moved-aside snapshot folders the start-up sweep may put back: those of collections that
 * exist. A version moved aside for a collection deleted since (its id gone from the store) is
 * removed instead of being restored as a folder nothing would ever read or remove. Without the
 * lookup (test fakes), or when the store cannot answer, every one is put back, as before.
 */
function restorableIn(store: IndexStore): (name: string) => boolean {
  return (name) => {
    if (!store.getCollectionById) return true;
    if (!/^\d+$/.test(name)) return false;
    try {
      return store.getCollectionById(Number(name)) !== null;
    } catch {
      return true;
    }
  };
}

/** Whether `store` has the reads a catch-up needs (the real store does; test fakes may not). */
export function canCatchUp(store: IndexStore): boolean {
  return catchUpStore(store) !== null;
}

function catchUpStore(store: IndexStore): CatchUpStore | null {
  const s = store as Partial<CatchUpStore>;
  return s.collectionChunkIds && s.collectionState && s.chunkIdPage && s.getChunks && s.chunkVectors && s.acquireLease && s.releaseLease && s.leaseHolder ? (store as CatchUpStore) : null;
}

/** What one catch-up did. */
export interface CatchUpResult {
  from: number;
  to: number;
  added: number;
  removed: number;
  ms: number;
}

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
  /**
   * From this many chunks, a persist reopens the lexical index from the bytes it just wrote, which
   * sit in shared memory: search worker threads then search it again (search-pool.ts) after the
   * commits that had made it the main thread's own. Unset: never.
   */
  shareFromChunks?: number;
}

export type IndexSource = 'snapshot' | 'snapshot+catch-up' | 'rebuild';

export class CollectionIndexes {
  readonly dir: string;
  readonly collectionId: number;
  readonly collectionName: string;
  private lex: CollectionLexicalIndex;
  private den: CollectionDenseIndex | null;
  private ver: number;
  /** CollectionIndexesOptions.shareFromChunks. */
  private shareFromChunks = Infinity;
  private persistedVersion: number | null = null;
  private queue: Promise<unknown> = Promise.resolve();
  /** A persist queued but not started yet: later calls share it. */
  private queuedPersist: Promise<void> | null = null;
  /** A catch-up queued but not started yet: later calls share it (it reads the store when it starts). */
  private queuedCatchUp: Promise<CatchUpResult | null> | null = null;
  private destroyed = false;
  /** The last persist found another process writing this folder: the caller retries later. */
  private persistBusy = false;
  private readonly sync: CatchUpStore | null;
  /** This instance as a lease owner (host, pid, random: two indexes in one process differ). */
  private readonly owner = `${os.hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  /** The store's database identity, written into every snapshot file (set by open). */
  private databaseId: string | null = null;
  private readonly log?: IndexLog;
  private lastCatchUp: CatchUpResult | null = null;
  private readonly info: { source: IndexSource; reason: string | null; open_ms: number; last_persist_ms: number | null; persisted_at: string | null };

  private constructor(
    dir: string,
    collection: CollectionRecord,
    lexical: CollectionLexicalIndex,
    dense: CollectionDenseIndex | null,
    version: number,
    log: IndexLog | undefined,
    info: CollectionIndexes['info'],
    sync: CatchUpStore | null = null,
  ) {
    this.sync = sync;
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
    store: IndexStore,
    opts: CollectionIndexesOptions = {},
  ): Promise<CollectionIndexes> {
    const started = performance.now();
    const analyzer = opts.analyzer ?? new Analyzer(SERVER_ANALYZER);
    const sync = catchUpStore(store);
    const databaseId = store.databaseId?.() ?? null;
    // Once per folder per process, before the first snapshot there is read.
    await sweepOnce(path.dirname(dir), restorableIn(store));
    let loaded = await loadSnapshot(dir, collection, databaseId, analyzer, opts.hnsw, opts.signal, sync !== null);
    // 'no snapshot' too: a writer swapping its folder in leaves none for an instant, and a first
    // snapshot being written is worth the wait (without a writer, waitForWriter returns at once).
    if (!loaded.ok && sync && (await waitForWriter(sync, leaseKey(collection.id), opts.signal))) {
      // Read while another process was writing it: read again now that the write is over.
      loaded = await loadSnapshot(dir, collection, databaseId, analyzer, opts.hnsw, opts.signal, true);
    }
    if (loaded.ok) {
      const ix: CollectionIndexes = new CollectionIndexes(dir, collection, loaded.lexical, loaded.dense, loaded.version, opts.log, {
        source: 'snapshot',
        reason: null,
        open_ms: 0,
        last_persist_ms: null,
        persisted_at: null,
      }, sync);
      ix.databaseId = databaseId;
      // A snapshot of format 2 counts as not saved: the next persist writes it in the current format.
      ix.persistedVersion = loaded.legacy ? null : loaded.version;
      ix.shareFromChunks = opts.shareFromChunks ?? Infinity;
      let caughtUp: CatchUpResult | null = null;
      if (sync) {
        try {
          // Nobody else holds the object yet: the queue is empty, run it directly.
          caughtUp = await ix.runCatchUp(opts.signal);
        } catch (err) {
          if (opts.signal?.aborted || (err as { code?: string }).code === 'NOT_FOUND') throw err;
          loaded = { ok: false, reason: `catch-up from the snapshot at version ${loaded.version} failed: ${errorText(err)}` };
        }
      }
      if (loaded.ok) {
        if (caughtUp) ix.info.source = 'snapshot+catch-up';
        ix.info.open_ms = Math.round(performance.now() - started);
        opts.log?.info(
          {
            event: 'kb.index_loaded',
            collection: collection.name,
            version: ix.ver,
            snapshot_version: loaded.version,
            chunks: ix.lex.size,
            ...(caughtUp ? { caught_up: { added: caughtUp.added, removed: caughtUp.removed, ms: caughtUp.ms } } : {}),
            ms: ix.info.open_ms,
          },
          caughtUp ? 'collection index loaded from an older snapshot and caught up with the store' : 'collection index loaded from its snapshot',
        );
        if ((caughtUp || loaded.legacy) && opts.persistAfterRebuild !== false) ix.persistInBackground();
        return ix;
      }
    }
    opts.log?.warn({ event: 'kb.index_rebuild', collection: collection.name, version: collection.version, reason: loaded.reason }, `rebuilding the collection index: ${loaded.reason}`);
    const lexical = new CollectionLexicalIndex(analyzer);
    let batch: LexicalChunk[] = [];
    for (const c of store.iterateChunks(collection.id, REBUILD_BATCH)) {
      batch.push({ id: c.id, text: c.text, heading_path: c.heading_path, language: c.language });
      if (batch.length === REBUILD_BATCH) {
        await lexical.addSliced(batch, opts.signal);
        batch = [];
      }
    }
    if (batch.length > 0) await lexical.addSliced(batch, opts.signal);
    let dense: CollectionDenseIndex | null = null;
    // Only chunks the lexical pass saw: a commit by another process between the passes must not
    // leave dense points the lexical index lacks (catch-up relies on dense ids ⊆ lexical ids).
    if (collection.embedder) dense = await rebuildDense(collection, store, opts.hnsw, opts.signal, (id) => lexical.has(id));
    // Tagged with the version read before the batches: a commit by another process during them may
    // be partly in, and its higher version makes the next check catch up (the diff converges).
    const ix: CollectionIndexes = new CollectionIndexes(dir, collection, lexical, dense, collection.version, opts.log, {
      source: 'rebuild',
      reason: loaded.reason,
      open_ms: Math.round(performance.now() - started),
      last_persist_ms: null,
      persisted_at: null,
    }, sync);
    ix.databaseId = databaseId;
    opts.log?.info(
      { event: 'kb.index_rebuilt', collection: collection.name, version: collection.version, chunks: lexical.size, vectors: dense?.size ?? null, ms: ix.info.open_ms },
      'collection index rebuilt from the store',
    );
    ix.shareFromChunks = opts.shareFromChunks ?? Infinity;
    if (opts.persistAfterRebuild !== false) ix.persistInBackground();
    return ix;
  }

  private persistInBackground(): void {
    this.persist().catch((err) =>
      this.log?.warn({ event: 'kb.persist_failed', collection: this.collectionName, err: errorText(err) }, 'index snapshot not saved; it is rebuilt again at the next open'),
    );
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
      if (this.sync && commit.version !== this.ver + 1) {
        // Another process committed in between: applying this one alone would claim its version
        // without the ones before it. The catch-up reads the store, which holds them all.
        await this.runCatchUp();
        return;
      }
      await this.removeFromBoth(commit.removedChunkIds);
      // The document's language picks the analyzer's rules for its chunks.
      const language = commit.document.language;
      await this.lex.addSliced(language ? commit.added.map((c) => ({ ...c, language })) : commit.added);
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
      if (this.sync && version !== this.ver + 1) {
        await this.runCatchUp();
        return;
      }
      await this.removeFromBoth(ids);
      this.ver = version;
    });
  }

  /**
   * Brings the indexes to the store's current version (see the file comment), unless they are at
   * `minVersion` already. Coalesced: calls made while one is waiting to start share it, and it
   * reads the store when it starts, so it covers every version its callers saw. Resolves with what
   * it did (null: nothing to do); NOT_FOUND when the collection is gone. Runs in time slices.
   */
  catchUp(minVersion?: number): Promise<CatchUpResult | null> {
    if (!this.sync) return Promise.reject(toolError('INTERNAL_ERROR', 'This store cannot catch indexes up; reopen them'));
    if (minVersion !== undefined && this.ver >= minVersion) return Promise.resolve(null);
    if (this.queuedCatchUp) return this.queuedCatchUp;
    let result: CatchUpResult | null = null;
    const p = this.enqueue(async () => {
      this.queuedCatchUp = null;
      if (this.destroyed) return;
      result = await this.runCatchUp();
    }).then(() => result);
    this.queuedCatchUp = p;
    return p;
  }

  /** The diff itself; callers hold the queue (or own the object, at open). */
  private async runCatchUp(signal?: AbortSignal): Promise<CatchUpResult | null> {
    const store = this.sync!;
    const started = performance.now();
    const changes = await this.readChanges(store);
    if (!changes) throw toolError('NOT_FOUND', `Collection "${this.collectionName}" no longer exists`);
    if (changes.version <= this.ver) return null;
    const from = this.ver;
    const { added, removed } = changes;
    this.lex.remove(removed, { deferCompaction: true });
    this.den?.remove(removed);
    if (this.lex.needsCompaction) await this.lex.compactSliced();
    if (!this.den && changes.embedder && changes.dimension) {
      this.den = await CollectionDenseIndex.create({ embedderId: changes.embedder, dimension: changes.dimension });
    }
    let addedCount = 0;
    for (let i = 0; i < added.length; i += CATCH_UP_BATCH) {
      const ids = added.slice(i, i + CATCH_UP_BATCH);
      // A row deleted since the id list was read is simply absent; that commit's higher version
      // makes the next check run again.
      const rows = store.getChunksForIndex ? store.getChunksForIndex(ids) : store.getChunks(ids);
      await this.lex.addSliced(
        rows.map((c) => ({ id: c.id, text: c.text, heading_path: c.heading_path, language: c.language })),
        signal,
      );
      addedCount += rows.length;
      if (this.den) {
        const vectors = store.chunkVectors(rows.map((c) => c.id));
        if (vectors.length > 0) {
          await this.den.add(
            vectors.map((v) => v.id),
            vectors.map((v) => v.vector),
            signal,
          );
        }
      }
      await yieldTurn();
    }
    this.ver = changes.version;
    const result: CatchUpResult = { from, to: changes.version, added: addedCount, removed: removed.length, ms: Math.round(performance.now() - started) };
    this.lastCatchUp = result;
    this.log?.info({ event: 'kb.index_caught_up', collection: this.collectionName, ...result }, 'collection index caught up with the store');
    return result;
  }

  /**
   * What the store changed since this index's version: ids to add and ids to remove. Chunk ids
   * only grow (AUTOINCREMENT, never reused) and a commit's new ids all lie above every id that
   * existed before it, so an index holds every live id at or below the highest id it has held: it
   * saw each of them made (a rebuild reading pages while another process committed sees a commit's
   * ids whole, they all lie past the pages it read before). So when the store counts as many live
   * ids at or below that highest one as the index holds, none was removed, and the changes are the
   * ids above it: a seek and a count instead of listing and diffing every id (1M chunks: ~1 s of a
   * restart behind a stale snapshot). Otherwise the full diff of id sets says which went.
   */
  private async readChanges(store: CatchUpStore): Promise<{ version: number; embedder: string | null; dimension: number | null; added: number[]; removed: number[] } | null> {
    if (store.chunkCountThrough && this.lex.size > 0) {
      const maxHeld = this.lex.highestId;
      for (let attempt = 0; attempt < ID_PAGE_TRIES; attempt++) {
        const head = store.collectionState(this.collectionId);
        if (!head) return null;
        if (head.version <= this.ver) return { ...head, added: [], removed: [] };
        const added: number[] = [];
        for (let last = maxHeld; ; ) {
          const page = store.chunkIdPage(this.collectionId, last, ID_PAGE);
          for (const id of page) added.push(id);
          if (page.length < ID_PAGE) break;
          last = page[page.length - 1]!;
          await yieldTurn();
        }
        const through = store.chunkCountThrough(this.collectionId, maxHeld);
        const tail = store.collectionState(this.collectionId);
        if (!tail) return null;
        if (tail.version !== head.version) continue;
        if (through === this.lex.size) return { ...head, added, removed: [] };
        break;
      }
    }
    const live = await this.readLiveIds(store);
    if (!live) return null;
    if (live.version <= this.ver) return { ...live, added: [], removed: [] };
    // New: live ids this index lacks. Removed: held ids no longer live, looked for only when the
    // counts say some are (a commit that only added leaves none). The dense index holds a subset
    // of the lexical one's ids (every path adds both, the rebuild filters), so one list serves both.
    const added: number[] = [];
    for (let i = 0; i < live.ids.length; i++) {
      const id = live.ids[i]!;
      if (!this.lex.has(id)) added.push(id);
      if (i % DIFF_STEP === DIFF_STEP - 1) await yieldTurn();
    }
    let removed: number[] = [];
    if (this.lex.size > live.ids.length - added.length) {
      const liveSet = new Set<number>();
      for (let i = 0; i < live.ids.length; i++) {
        liveSet.add(live.ids[i]!);
        if (i % DIFF_STEP === DIFF_STEP - 1) await yieldTurn();
      }
      removed = this.lex.ids().filter((id) => !liveSet.has(id));
      await yieldTurn();
    }
    return { version: live.version, embedder: live.embedder, dimension: live.dimension, added, removed };
  }

  /**
   * The collection's live ids with the version they belong to. Read in pages (the event loop gets
   * a turn between them) and kept when the version is the same after the last page as before the
   * first: every change of chunks bumps it in the same transaction, so the pages saw one state.
   * After ID_PAGE_TRIES busy tries, one read transaction (one WAL snapshot) does it at once.
   */
  private async readLiveIds(store: CatchUpStore): Promise<{ version: number; embedder: string | null; dimension: number | null; ids: number[] } | null> {
    for (let attempt = 0; attempt < ID_PAGE_TRIES; attempt++) {
      const head = store.collectionState(this.collectionId);
      if (!head) return null;
      if (head.version <= this.ver) return { ...head, ids: [] };
      const ids: number[] = [];
      for (let last = 0; ; ) {
        const page = store.chunkIdPage(this.collectionId, last, ID_PAGE);
        for (const id of page) ids.push(id);
        if (page.length < ID_PAGE) break;
        last = page[page.length - 1]!;
        await yieldTurn();
      }
      const tail = store.collectionState(this.collectionId);
      if (!tail) return null;
      if (tail.version === head.version) return { ...head, ids };
    }
    return store.collectionChunkIds(this.collectionId);
  }

  /** Approximate bytes held in memory (lexical arrays and the native HNSW index): KB_INDEX_CACHE_MB counts these. */
  get approxBytes(): number {
    return this.lex.approxBytes + (this.den?.approxBytes ?? 0);
  }

  /** Whether the indexes hold changes their snapshot lacks (rebuilt, caught up or changed since the last persist). */
  get unsaved(): boolean {
    return this.persistedVersion !== this.ver && !this.destroyed;
  }

  /** Whether the last persist was skipped because another process was writing the snapshot. */
  get persistPending(): boolean {
    return this.persistBusy && this.persistedVersion !== this.ver && !this.destroyed;
  }

  /** Stops future persists without touching the files (another process deleted the collection). */
  retire(): void {
    this.destroyed = true;
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
      last_catch_up: this.lastCatchUp,
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

  /** writeSnapshot under the cross-process lease (see the file comment); without a lease store, directly. */
  private async writeSnapshot(): Promise<void> {
    this.persistBusy = false;
    const store = this.sync;
    if (!store) return this.writeSnapshotFiles(() => {});
    const key = leaseKey(this.collectionId);
    if (!store.acquireLease(key, this.owner, LEASE_TTL_MS)) {
      this.persistBusy = true;
      return;
    }
    try {
      if (store.collectionState(this.collectionId) === null) {
        this.destroyed = true; // deleted by another process: nothing to save
        return;
      }
      const onDisk = await readManifestVersion(this.dir, this.collectionId, this.databaseId);
      if (onDisk !== null && onDisk >= this.ver) {
        // Another process saved this version (or a newer one) already.
        this.persistedVersion = this.ver;
        return;
      }
      await this.writeSnapshotFiles(() => {
        if (!store.acquireLease(key, this.owner, LEASE_TTL_MS)) throw toolError('INTERNAL_ERROR', 'The index snapshot lease lapsed during the write; another process took it');
      });
      // Deleted by another process meanwhile: its folder removal may have run before our files.
      if (store.collectionState(this.collectionId) === null) {
        this.destroyed = true;
        await fs.rm(this.dir, { recursive: true, force: true });
      }
    } finally {
      try {
        store.releaseLease(key, this.owner);
      } catch {
        // it expires by itself
      }
    }
  }

  private async writeSnapshotFiles(renew: () => void): Promise<void> {
    const started = performance.now();
    const version = this.ver;
    const identity = { databaseId: this.databaseId };
    const w = await SnapshotWriter.begin(this.dir);
    let manifest: SnapshotManifest;
    let lexBytes: Buffer;
    try {
      lexBytes = await w.writeLexical(this.lex, identity);
      renew();
      if (this.den) await w.writeDense(this.den, identity);
      renew();
      manifest = await w.commit(
        {
          kind: 'collection',
          database_id: this.databaseId,
          collection_id: this.collectionId,
          version,
          key: null,
          content_sha256: null,
          chunker_version: null,
          language: null,
          analyzer: this.lex.analyzer.signature,
          embedder: this.den?.embedderId ?? null,
          dimension: this.den?.dimension ?? null,
          hnsw: this.den ? { ...this.den.params, space: 'cosine' } : null,
          chunks: this.lex.size,
        },
        // The lease is checked once more right before the rename that publishes the snapshot.
        renew,
      );
    } catch (err) {
      await w.abort();
      throw err;
    }
    this.persistedVersion = version;
    this.info.last_persist_ms = Math.round(performance.now() - started);
    this.info.persisted_at = manifest.saved_at;
    // Inside the queue: no commit ran since the bytes were made, so they describe the index exactly.
    if (this.lex.size >= this.shareFromChunks && this.lex.sharedSnapshot === null) {
      this.lex = await CollectionLexicalIndex.deserializeSliced(lexBytes, this.lex.analyzer, undefined, identity, { verified: true });
    }
  }
}

/** `legacy`: read from a snapshot of format 2, to be written again in the current one. */
type Loaded = { ok: true; lexical: CollectionLexicalIndex; dense: CollectionDenseIndex | null; version: number; legacy?: true } | { ok: false; reason: string };

/**
 * The snapshots under `dir` when they are whole and at the collection's version (or, with
 * `allowOlder`, at an older one, to be caught up), else why not.
 */
async function loadSnapshot(
  dir: string,
  c: CollectionRecord,
  databaseId: string | null,
  analyzer: Analyzer,
  hnsw?: Partial<HnswParams>,
  signal?: AbortSignal,
  allowOlder = false,
): Promise<Loaded> {
  const no = (reason: string): Loaded => ({ ok: false, reason });
  const read = await readManifest(dir);
  if (!read.ok) {
    if (read.raw?.format === 2) return loadFormat2(dir, read.raw as unknown as Format2Manifest, c, databaseId, analyzer, hnsw, signal, allowOlder);
    return no(read.reason);
  }
  const m = read.manifest;
  if (m.kind !== 'collection') return no(`snapshot of a ${m.kind}, not a collection`);
  const mismatch = identityMismatch(m, c, databaseId, analyzer, allowOlder);
  if (mismatch) return no(mismatch);
  if (typeof m.version !== 'number') return no('snapshot without a version');
  let lexical: CollectionLexicalIndex;
  try {
    lexical = await loadLexical(dir, m, analyzer, signal, { databaseId });
  } catch (err) {
    if (!(err instanceof SnapshotFault)) throw err;
    return no(`lexical snapshot unusable: ${err.message}`);
  }
  let dense: CollectionDenseIndex | null = null;
  if (c.embedder && m.embedder !== null) {
    if (m.dimension === null) return no('dense snapshot missing');
    try {
      dense = await loadDense(dir, m, { embedderId: c.embedder, dimension: c.dimension ?? m.dimension, params: hnsw, databaseId });
    } catch (err) {
      if (!(err instanceof SnapshotFault)) throw err;
      return no(`dense snapshot unusable: ${err.message}`);
    }
  }
  return { ok: true, lexical, dense, version: m.version };
}

/** Why a snapshot's identity does not fit this collection, or null when it does. */
function identityMismatch(
  m: Pick<SnapshotManifest, 'database_id' | 'collection_id' | 'version' | 'analyzer' | 'embedder'>,
  c: CollectionRecord,
  databaseId: string | null,
  analyzer: Analyzer,
  allowOlder: boolean,
): string | null {
  // Before the collection id: in another database the same id is another collection.
  if ((m.database_id ?? null) !== databaseId) return `snapshot of another database (${m.database_id ?? 'none recorded'}), not this one (${databaseId ?? 'none'})`;
  if (m.collection_id !== c.id) return `snapshot of collection ${m.collection_id}, not ${c.id}`;
  if (typeof m.version !== 'number' || m.version > c.version || (!allowOlder && m.version !== c.version)) return `snapshot at version ${m.version}, collection at ${c.version}`;
  if (m.analyzer !== analyzer.signature) return `snapshot built by analyzer ${m.analyzer}, not ${analyzer.signature}`;
  // An older snapshot of a then lexical-only collection may lack the embedder chosen since: caught up.
  const embedderFits = (m.embedder ?? null) === (c.embedder ?? null) || (allowOlder && m.version < c.version && m.embedder === null);
  if (!embedderFits) return `snapshot for embedder ${m.embedder ?? 'none'}, collection uses ${c.embedder ?? 'none'}`;
  return null;
}

/** The manifest of format 2 (files written in place, before the shared snapshot format). */
interface Format2Manifest {
  format: 2;
  database_id: string | null;
  collection_id: number;
  version: number;
  analyzer: string;
  embedder: string | null;
  dimension: number | null;
  chunks: number;
  lexical: { bytes: number; checksum: string };
  dense: { sha256: string } | null;
}

/**
 * A snapshot of format 2, checked as that version did (lexical.bin's size and own trailer, the
 * dense manifest's sha256), so an upgrade does not rebuild every collection; the caller writes it
 * again in the current format. To be removed once no data folder of that version is left.
 */
async function loadFormat2(
  dir: string,
  m: Format2Manifest,
  c: CollectionRecord,
  databaseId: string | null,
  analyzer: Analyzer,
  hnsw: Partial<HnswParams> | undefined,
  signal: AbortSignal | undefined,
  allowOlder: boolean,
): Promise<Loaded> {
  const no = (reason: string): Loaded => ({ ok: false, reason: `snapshot of format 2: ${reason}` });
  const mismatch = identityMismatch(m, c, databaseId, analyzer, allowOlder);
  if (mismatch) return no(mismatch);
  let lexical: CollectionLexicalIndex;
  try {
    const buf = await fs.readFile(path.join(dir, LEXICAL_FILE));
    if (buf.length !== m.lexical?.bytes || buf.subarray(buf.length - 32).toString('hex') !== m.lexical.checksum) return no('lexical snapshot does not match its manifest');
    lexical = await CollectionLexicalIndex.deserializeSliced(buf, analyzer, signal, { databaseId });
  } catch (err) {
    if (signal?.aborted) throw err;
    return no(`lexical snapshot unusable: ${errorText(err)}`);
  }
  if (lexical.size !== m.chunks) return no('lexical snapshot does not match its manifest');
  let dense: CollectionDenseIndex | null = null;
  if (c.embedder && m.embedder !== null) {
    if (!m.dense || m.dimension === null) return no('dense snapshot missing');
    try {
      const file = path.join(dir, DENSE_FILE);
      if (createHash('sha256').update(await fs.readFile(`${file}.json`)).digest('hex') !== m.dense.sha256) return no('dense snapshot does not match its manifest');
      dense = await CollectionDenseIndex.load(file, { embedderId: c.embedder, dimension: c.dimension ?? m.dimension, params: hnsw, databaseId });
    } catch (err) {
      return no(`dense snapshot unusable: ${errorText(err)}`);
    }
  }
  return { ok: true, lexical, dense, version: m.version, legacy: true };
}

function leaseKey(collectionId: number): string {
  return `index-snapshot:${collectionId}`;
}

/** Waits (bounded) while another process holds the snapshot lease; true when one did. */
async function waitForWriter(store: CatchUpStore, key: string, signal?: AbortSignal): Promise<boolean> {
  const holder = store.leaseHolder(key);
  // A writer killed mid-write (kill -9) leaves its lease until the TTL: not worth waiting for.
  if (holder === null || !holderMayRun(holder)) return false;
  const until = Date.now() + LEASE_WAIT_MS;
  while (store.leaseHolder(key) !== null && Date.now() < until) {
    await sleep(50, undefined, signal ? { signal } : {});
  }
  return true;
}

/**
 * Whether a lease owner (`host:pid:random`, see `owner`) may still be running: false only for an
 * owner on this host whose pid is gone. Another host's owner, or a malformed name, may run.
 */
function holderMayRun(owner: string): boolean {
  const [host, pid] = owner.split(':');
  if (host !== os.hostname() || !/^\d+$/.test(pid ?? '')) return true;
  return pidRunning(Number(pid));
}

/**
 * The version of the whole manifest in `dir` for this collection of this database, or null. A
 * snapshot of another database never counts as saved, whatever its version: it is overwritten.
 */
async function readManifestVersion(dir: string, collectionId: number, databaseId: string | null): Promise<number | null> {
  const read = await readManifest(dir);
  if (!read.ok) return null;
  const m = read.manifest;
  if (m.kind !== 'collection' || (m.database_id ?? null) !== databaseId || m.collection_id !== collectionId) return null;
  return m.version;
}

async function rebuildDense(
  c: CollectionRecord,
  store: Pick<IndexStore, 'iterateVectors'>,
  hnsw: Partial<HnswParams> | undefined,
  signal?: AbortSignal,
  accept: (id: number) => boolean = () => true,
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
    if (!accept(id)) continue;
    ids.push(id);
    vectors.push(vector);
    if (ids.length === REBUILD_BATCH) await flush();
  }
  if (ids.length > 0) await flush();
  return dense;
}
