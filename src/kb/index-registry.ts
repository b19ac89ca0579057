/**
 * The open collection indexes of one process (taken out of knowledge-base.ts, which now only asks
 * this registry for them): opened lazily and shared, kept at the store's version (commits applied,
 * other processes' commits caught up after their notice or at read), persisted a moment after the
 * last commit, closed least recently used beyond KB_INDEX_CACHE_MB (persisted first).
 *
 * Snapshots kept fresh by the process that commits. Before, a commit to a collection not open
 * here did nothing, so a server that only ingested never refreshed its snapshot and the next start
 * caught up from SQLite (64 s at 502k chunks). Now a commit to a closed collection opens it here
 * when it fits the budget's free room (or nothing else is open), in the background: ingestion
 * does not wait for the open, and the commits that land while it opens are caught up once it is
 * open (the catch-up diffs ids, so a commit half-seen by the open converges). A collection that
 * does not fit is refreshed instead, once commits to it pause (snapshot-refresher.ts).
 *
 * Honest readiness: `loading()` names the collections whose indexes are opening or catching up,
 * and `forSearch` waits for them at most SEARCH_LOAD_WAIT_MS, then answers 503 INDEX_LOADING with
 * Retry-After; the open goes on, and a later search finds it done.
 *
 * Why this size (about 390 lines of class): every method reads or changes one map of open entries
 * (a promise, its persist timer, its bytes, its use order) whose invariants tie opening, applying
 * a commit, catching up after a notice, persisting and evicting together: an entry replaced while
 * an open or a catch-up awaits must be recognised by identity in each of them. Split across
 * classes, each would need that map and its identity checks; what needs none of it has its own
 * file (index-budget.ts: which entries go; snapshot-refresher.ts: collections not kept open).
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { isToolError, toolError } from '../errors.ts';
import type { Bus } from '../redis/bus.ts';
import { errorText } from '../util/error-text.ts';
import { canCatchUp, CollectionIndexes, type CollectionIndexesOptions, type IndexStore } from './collection-index.ts';
import { overBudget } from './index-budget.ts';
import { SnapshotRefresher } from './snapshot-refresher.ts';
import type { CollectionRecord, CommitResult, KbStoreApi } from './types.ts';

/** Milliseconds after the last commit before a collection's indexes are written to disk. */
const PERSIST_DELAY_MS = 2_000;
/** A collection committed to without pause is still persisted this long after its first unsaved commit. */
const PERSIST_MAX_DELAY_MS = 30_000;
/** Notices about one collection arriving within this window are served by one catch-up. */
const NOTICE_DEBOUNCE_MS = 75;
/**
 * Bytes an open index takes per chunk, to judge whether a collection fits before opening it
 * (lexical arrays and postings; measured about 0.8-1.2 KB per chunk from 100k to 1M chunks).
 */
const EST_BYTES_PER_CHUNK = 1_200;
/** Retry-After of INDEX_LOADING at least (seconds). */
const MIN_RETRY_AFTER_S = 1;

export type OpenIndexesFn = (dir: string, collection: CollectionRecord, store: IndexStore, opts: CollectionIndexesOptions) => Promise<CollectionIndexes>;

export interface RegistryLog {
  warn(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  debug?(obj: object, msg?: string): void;
}

export interface IndexRegistryDeps {
  /** The knowledge base folder: indexes live under <kbDir>/indexes/<collection id>. */
  kbDir: string;
  store: KbStoreApi;
  config: { KB_INDEX_CACHE_MB: number; SEARCH_LOAD_WAIT_MS: number; searchWorkers?: number; SEARCH_WORKER_MIN_CHUNKS?: number };
  log?: RegistryLog;
  /** Replaces CollectionIndexes.open (tests: an open that takes as long as they say). */
  openIndexes?: OpenIndexesFn;
}

interface OpenEntry {
  promise: Promise<CollectionIndexes>;
  timer: NodeJS.Timeout | null;
  /** When the oldest commit not yet persisted was applied (PERSIST_MAX_DELAY_MS counts from it). */
  unsavedSince: number | null;
  collectionId: number;
  /** Set once open: its approximate bytes count against KB_INDEX_CACHE_MB. */
  value?: CollectionIndexes;
  bytes: number;
  openedBy: 'search' | 'commit';
  since: number;
  /** Catch-ups in progress for readers (the collection is "catching up" meanwhile). */
  catchUps: number;
}

export interface LoadingCollection {
  collection: string;
  state: 'opening' | 'catching-up';
  since_ms: number;
}

export class IndexRegistry {
  private readonly indexes = new Map<string, OpenEntry>();
  /** Debounced collection notices, per open collection. */
  private readonly notices = new Map<string, { version: number; timer: NodeJS.Timeout | null }>();
  /** Collections not kept open whose snapshot is behind: refreshed once their commits pause (snapshot-refresher.ts). */
  private readonly behind: SnapshotRefresher;
  private bus: Bus | null = null;
  private stopNotices: (() => void) | null = null;
  /** Tells this instance's own collection notices from other processes' (LocalBus and Redis deliver to all). */
  private readonly instanceId = randomBytes(6).toString('hex');
  private readonly openFn: OpenIndexesFn;
  /** Whether the store can catch indexes up (test fakes cannot: commits then wait for an open). */
  private readonly catchUpStore: boolean;
  private closed = false;

  constructor(private readonly deps: IndexRegistryDeps) {
    this.openFn = deps.openIndexes ?? ((dir, c, store, opts) => CollectionIndexes.open(dir, c, store, opts));
    this.catchUpStore = canCatchUp(deps.store);
    this.behind = new SnapshotRefresher({
      store: deps.store,
      open: this.openFn,
      indexDir: (c) => this.indexDir(c),
      isOpen: (name) => this.indexes.has(name),
      ...(deps.log ? { log: deps.log } : {}),
    });
  }

  /** Subscribes to collection notices on `bus` (dropping the previous subscription) and publishes on it. */
  attachBus(bus: Bus): void {
    this.stopNotices?.();
    this.bus = bus;
    this.stopNotices = bus.on('kb:collection', (m) => this.onCollectionNotice(m));
  }

  indexDir(c: Pick<CollectionRecord, 'id'>): string {
    return path.join(this.deps.kbDir, 'indexes', String(c.id));
  }

  /**
   * The collection's indexes for a search: opened (or caught up) if need be, waited for at most
   * SEARCH_LOAD_WAIT_MS; past it INDEX_LOADING (503, Retry-After) while the load goes on.
   */
  async forSearch(c: CollectionRecord): Promise<CollectionIndexes> {
    const ready = this.current(c);
    const wait = this.deps.config.SEARCH_LOAD_WAIT_MS;
    let timer: NodeJS.Timeout | null = null;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const entry = this.indexes.get(c.name);
        const elapsed = entry ? Date.now() - entry.since : wait;
        // As long again as it has taken so far, a fair guess without knowing the snapshot's size.
        const retry = Math.max(MIN_RETRY_AFTER_S, Math.ceil(Math.min(elapsed, 60_000) / 1000));
        const state = entry && !entry.value ? 'loading' : 'catching up with the database';
        const err = toolError('INDEX_LOADING', `The index of collection "${c.name}" is still ${state} (${Math.round(elapsed / 1000)} s so far); retry in ${retry} s`);
        err.retryAfterS = retry;
        reject(err);
      }, wait);
      timer.unref();
    });
    // The load goes on after INDEX_LOADING; its failure is logged where it happens.
    ready.catch(() => undefined);
    try {
      return await Promise.race([ready, late]);
    } finally {
      if (timer) clearTimeout(timer);
    }
  }

  /**
   * The collection's open indexes, caught up first when another process committed since (the
   * version read from the store is ahead of theirs). Concurrent readers share one catch-up; it
   * runs in time slices. A catch-up that fails drops the indexes and opens them again.
   */
  async current(c: CollectionRecord): Promise<CollectionIndexes> {
    const ix = await this.open(c, 'search');
    if (ix.version >= c.version) return ix;
    const entry = this.indexes.get(c.name);
    if (entry) entry.catchUps++;
    try {
      if (await ix.catchUp(c.version)) this.schedulePersist(c.name);
      return ix;
    } catch (err) {
      this.drop(c.name, err);
      if (isToolError(err) && err.code === 'NOT_FOUND') throw toolError('NOT_FOUND', `Collection "${c.name}" not found`);
      const again = this.deps.store.getCollection(c.name);
      if (!again) throw toolError('NOT_FOUND', `Collection "${c.name}" not found`);
      return this.open(again, 'search');
    } finally {
      if (entry) entry.catchUps--;
    }
  }

  /** Collections whose indexes are opening or catching up now. */
  loading(): LoadingCollection[] {
    const now = Date.now();
    const out: LoadingCollection[] = [];
    for (const [name, e] of this.indexes) {
      if (!e.value) out.push({ collection: name, state: 'opening', since_ms: now - e.since });
      else if (e.catchUps > 0) out.push({ collection: name, state: 'catching-up', since_ms: now - e.since });
    }
    return out;
  }

  /** Per open collection: where its indexes came from and how long the open took (bounded by the budget). */
  openStats(): Array<{ collection: string; source: string; version: number; open_ms: number; approx_bytes: number; opened_by: 'search' | 'commit' }> {
    const out = [];
    for (const [name, e] of this.indexes) {
      if (!e.value) continue;
      const s = e.value.stats();
      out.push({ collection: name, source: String(s.source), version: e.value.version, open_ms: Number(s.open_ms), approx_bytes: e.value.approxBytes, opened_by: e.openedBy });
    }
    return out;
  }

  stats(): Record<string, unknown> {
    return {
      indexes_open: this.indexes.size,
      indexes_loading: this.loading().length,
      indexes_approx_bytes: [...this.indexes.values()].reduce((n, o) => n + (o.value ? o.value.approxBytes : 0), 0),
      index_cache_max_bytes: this.budget(),
      snapshots_behind: this.behind.size,
    };
  }

  /**
   * Waits for indexes of the collection that are being opened, for stores that cannot catch up
   * (an open reads the store in batches across awaits, and its commits are then applied as given).
   * With the real store a commit may land during an open: it is caught up once the open ends.
   */
  async settled(name: string): Promise<void> {
    if (this.catchUpStore) return;
    const open = this.indexes.get(name);
    if (open) await open.promise.catch(() => undefined);
  }

  /** A commit landed in the store: tells other processes, and brings (or opens) the indexes here. */
  async applyCommit(c: CollectionRecord, commit: CommitResult): Promise<void> {
    // Other processes (API replicas) catch their open indexes up.
    this.publish(c, commit.version);
    if (this.closed) return;
    const open = this.entryOf(c);
    if (!open) {
      this.keepFresh(c);
      return;
    }
    if (!open.value && this.catchUpStore) {
      // Landed while the indexes were opening: caught up once open. Not awaited, so ingestion
      // never waits for an open.
      void this.catchUpWhenOpen(c.name, open, commit.version);
      return;
    }
    try {
      const ix = await open.promise;
      await ix.apply(commit, c);
      this.schedulePersist(c.name);
      this.enforceBudget(c.name);
    } catch (err) {
      // The commit is in SQLite; indexes that missed it are reopened from there.
      this.drop(c.name, err);
    }
  }

  /** A document was deleted (the store has removed its chunks): the same as a commit for the indexes. */
  async removeChunks(c: CollectionRecord, version: number, ids: readonly number[]): Promise<void> {
    this.publish(c, version);
    const open = this.entryOf(c);
    if (!open) {
      if (!this.closed) this.keepFresh(c, false);
      return;
    }
    if (!open.value && this.catchUpStore) {
      void this.catchUpWhenOpen(c.name, open, version);
      return;
    }
    try {
      const ix = await open.promise;
      await ix.removeChunks(version, ids);
      this.schedulePersist(c.name);
    } catch (err) {
      this.drop(c.name, err);
    }
  }

  /** The collection was deleted from the store: its indexes and snapshot files go, other processes are told. */
  async removed(c: CollectionRecord): Promise<void> {
    const open = this.indexes.get(c.name);
    this.indexes.delete(c.name);
    if (open?.timer) clearTimeout(open.timer);
    this.behind.clear(c.name);
    this.publish(c, c.version, true);
    if (open) {
      const ix = await open.promise.catch(() => null);
      if (ix) await Promise.resolve(ix.destroy()).catch(() => undefined);
    }
    // Index files of a collection never opened in this process.
    await fs.rm(this.indexDir(c), { recursive: true, force: true }).catch(() => undefined);
  }

  /** Persists every open index (and lets pending refreshes go: the open ones are saved here). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stopNotices?.();
    for (const n of this.notices.values()) if (n.timer) clearTimeout(n.timer);
    this.notices.clear();
    await this.behind.close();
    const open = [...this.indexes.entries()];
    this.indexes.clear();
    for (const [, o] of open) {
      if (o.timer) clearTimeout(o.timer);
      const ix = await o.promise.catch(() => null);
      if (ix) await Promise.resolve(ix.persist()).catch((err) => this.deps.log?.warn({ event: 'kb.persist_failed', err: errorText(err) }, 'index not saved; it is rebuilt at the next start'));
    }
  }

  /** Tells every process (this one included, which ignores its own) that a collection changed. */
  publish(c: Pick<CollectionRecord, 'id' | 'name'>, version: number, deleted = false): void {
    try {
      this.bus?.publish('kb:collection', { collection: c.name, collection_id: c.id, version, ...(deleted ? { deleted: true } : {}), origin: this.instanceId });
    } catch {
      // Best effort: the version check on read covers a lost notice.
    }
  }

  // ---- internals ----

  private budget(): number {
    return this.deps.config.KB_INDEX_CACHE_MB * 1024 * 1024;
  }

  /** The open entry of this very collection (a same-named older one is dropped). */
  private entryOf(c: CollectionRecord): OpenEntry | undefined {
    const open = this.indexes.get(c.name);
    if (open && open.collectionId !== c.id) {
      this.drop(c.name, null);
      return undefined;
    }
    return open;
  }

  private open(c: CollectionRecord, by: 'search' | 'commit'): Promise<CollectionIndexes> {
    let open = this.entryOf(c);
    if (!open) {
      if (this.closed) return Promise.reject(toolError('SHUTTING_DOWN', 'The server is stopping'));
      this.behind.clear(c.name);
      const { searchWorkers, SEARCH_WORKER_MIN_CHUNKS } = this.deps.config;
      const promise = this.openFn(this.indexDir(c), c, this.deps.store, {
        ...(this.deps.log ? { log: this.deps.log } : {}),
        // With search workers, a large index is shared with them again after each persist.
        ...(searchWorkers ? { shareFromChunks: SEARCH_WORKER_MIN_CHUNKS } : {}),
        // A rebuilt or caught-up index is saved PERSIST_DELAY_MS later (below), not at once: the
        // search that opened it is answered first instead of sharing the loop with a 1M-chunk
        // serialize and checksum (~1.5 s in slices).
        persistAfterRebuild: false,
      });
      const entry: OpenEntry = { promise, timer: null, unsavedSince: null, collectionId: c.id, bytes: 0, openedBy: by, since: Date.now(), catchUps: 0 };
      open = entry;
      this.indexes.set(c.name, entry);
      promise.then(
        (ix) => {
          if (this.indexes.get(c.name) !== entry) return;
          entry.value = ix;
          if (ix.unsaved) this.schedulePersist(c.name);
          this.enforceBudget(c.name);
        },
        (err) => {
          if (this.indexes.get(c.name) === entry) this.drop(c.name, err);
        },
      );
    } else {
      // Use order: the Map's last entries are the most recently used (index-budget.ts).
      this.indexes.delete(c.name);
      this.indexes.set(c.name, open);
      if (by === 'search') open.openedBy = 'search';
      if (open.value) this.enforceBudget(c.name);
    }
    return open.promise;
  }

  private async catchUpWhenOpen(name: string, open: OpenEntry, version: number): Promise<void> {
    try {
      const ix = await open.promise;
      if (this.indexes.get(name) !== open || this.closed) return;
      if (await ix.catchUp(version)) this.schedulePersist(name);
    } catch (err) {
      if (this.indexes.get(name) === open) this.drop(name, isToolError(err) && err.code === 'NOT_FOUND' ? null : err);
    }
  }

  /**
   * A commit to a collection not open here. Opened now (in the background, from its snapshot,
   * caught up, and that catch-up persisted) when it fits the budget's free room or nothing else is
   * open; else its snapshot is refreshed once commits pause (see the file comment).
   */
  private keepFresh(c: CollectionRecord, mayOpen = true): void {
    if (this.behind.has(c.name)) return this.behind.mark(c);
    let fits = this.indexes.size === 0;
    if (!fits && mayOpen) {
      let used = 0;
      for (const o of this.indexes.values()) used += o.value ? o.value.approxBytes : 0;
      let chunks = 0;
      try {
        chunks = this.deps.store.collectionStats(c.id).chunks;
      } catch {
        return; // the store failed: the next open reads it anyway
      }
      fits = used + chunks * EST_BYTES_PER_CHUNK <= this.budget();
    }
    if (fits && mayOpen) {
      void this.open(c, 'commit').catch(() => undefined);
      return;
    }
    this.behind.mark(c);
  }

  /**
   * Closes the least recently used open indexes beyond KB_INDEX_CACHE_MB. An evicted index with
   * commits not yet in its snapshot is persisted first (in the background), so its next open loads
   * the snapshot instead of catching up; searches already holding it finish on it.
   */
  private enforceBudget(justUsed: string): void {
    for (const o of this.indexes.values()) if (o.value) o.bytes = o.value.approxBytes;
    for (const name of overBudget(this.indexes, this.budget(), justUsed)) {
      const open = this.indexes.get(name)!;
      this.indexes.delete(name);
      if (open.timer) clearTimeout(open.timer);
      const ix = open.value!;
      this.deps.log?.debug?.({ event: 'kb.indexes_evicted', collection: name, approx_bytes: open.bytes }, 'collection indexes closed (KB_INDEX_CACHE_MB)');
      if (!this.closed) void ix.persist().catch((err) => this.persistFailed(name, err));
    }
  }

  private drop(name: string, err: unknown): void {
    const open = this.indexes.get(name);
    if (!open) return;
    this.indexes.delete(name);
    if (open.timer) clearTimeout(open.timer);
    if (err) this.deps.log?.warn({ event: 'kb.indexes_dropped', collection: name, err: errorText(err) }, 'collection indexes dropped; they are reopened (and rebuilt) on next use');
  }

  private persistFailed(name: string, err: unknown): void {
    this.deps.log?.warn({ event: 'kb.persist_failed', collection: name, err: errorText(err) }, 'index snapshot not saved; it is rebuilt from SQLite when needed');
  }

  /** Persists PERSIST_DELAY_MS after the last change, and no later than PERSIST_MAX_DELAY_MS after the first unsaved one. */
  private schedulePersist(name: string): void {
    const open = this.indexes.get(name);
    if (!open || this.closed) return;
    const now = Date.now();
    open.unsavedSince ??= now;
    if (open.timer) clearTimeout(open.timer);
    const delay = Math.max(0, Math.min(PERSIST_DELAY_MS, open.unsavedSince + PERSIST_MAX_DELAY_MS - now));
    open.timer = setTimeout(() => {
      open.timer = null;
      open.unsavedSince = null;
      void open.promise
        .then(async (ix) => {
          await ix.persist();
          // Another process was writing this snapshot: try again after the delay (bounded by its lease).
          if (ix.persistPending && this.indexes.get(name) === open) this.schedulePersist(name);
        })
        .catch((err) => this.persistFailed(name, err));
    }, delay);
    open.timer.unref();
  }

  // ---- notices from other processes ----

  /**
   * Another process changed a collection: if its indexes are open here, they are caught up
   * after a short debounce (one catch-up for a burst of commits) or dropped when it was deleted.
   * Notices for collections not open here are ignored (their next open reads the store).
   */
  private onCollectionNotice(m: Record<string, unknown>): void {
    const name = m.collection;
    const id = m.collection_id;
    const version = m.version;
    if (typeof name !== 'string' || typeof id !== 'number' || typeof version !== 'number' || m.origin === this.instanceId || this.closed) return;
    const open = this.indexes.get(name);
    if (!open || open.collectionId !== id) return;
    if (m.deleted === true) {
      this.drop(name, null);
      void open.promise.then((ix) => ix.retire()).catch(() => undefined);
      return;
    }
    // One entry per open collection at most: bounded by the indexes map.
    const pending = this.notices.get(name);
    if (pending) {
      pending.version = Math.max(pending.version, version);
      return;
    }
    const entry = { version, timer: null as NodeJS.Timeout | null };
    entry.timer = setTimeout(() => {
      this.notices.delete(name);
      void this.catchUpWhenOpen(name, open, entry.version);
    }, NOTICE_DEBOUNCE_MS);
    entry.timer.unref();
    this.notices.set(name, entry);
  }
}
