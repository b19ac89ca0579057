/**
 * Snapshots of collections the index registry does not keep open (they do not fit
 * KB_INDEX_CACHE_MB's free room): a commit marks the collection behind, and once its commits
 * pause (REFRESH_IDLE_MS, at most REFRESH_MAX_DELAY_MS after the first unsaved one) its indexes
 * are opened outside the cache, caught up, persisted and let go, one collection at a time so the
 * extra memory is one index. Without it a server that only ingests never refreshes its snapshots
 * and the next start catches up from SQLite (64 s at 502k chunks).
 */
import { errorText } from '../util/error-text.ts';
import type { CollectionIndexes, CollectionIndexesOptions, IndexStore } from './collection-index.ts';
import type { CollectionRecord, KbStoreApi } from './types.ts';

/** A collection too large to keep open is refreshed on disk once its commits pause this long... */
const REFRESH_IDLE_MS = 5_000;
/** ...or at the latest this long after its first commit not in the snapshot. */
const REFRESH_MAX_DELAY_MS = 120_000;

export interface SnapshotRefresherDeps {
  store: KbStoreApi;
  open(dir: string, collection: CollectionRecord, store: IndexStore, opts: CollectionIndexesOptions): Promise<CollectionIndexes>;
  indexDir(c: Pick<CollectionRecord, 'id'>): string;
  /** Open in the registry meanwhile: its own persists keep it fresh. */
  isOpen(name: string): boolean;
  log?: { warn(obj: object, msg?: string): void; info(obj: object, msg?: string): void };
}

export class SnapshotRefresher {
  private readonly behind = new Map<string, { id: number; first: number; timer: NodeJS.Timeout | null }>();
  /** One refresh at a time (each holds one collection's indexes outside the budget). */
  private refreshing: Promise<void> = Promise.resolve();
  private readonly stop = new AbortController();

  constructor(private readonly deps: SnapshotRefresherDeps) {}

  /** Collections whose snapshot is behind the store. */
  get size(): number {
    return this.behind.size;
  }

  has(name: string): boolean {
    return this.behind.has(name);
  }

  /** A commit to a collection not kept open: its refresh waits for its commits to pause. */
  mark(c: CollectionRecord): void {
    const now = Date.now();
    let d = this.behind.get(c.name);
    if (!d) {
      d = { id: c.id, first: now, timer: null };
      this.behind.set(c.name, d);
    }
    if (d.timer) clearTimeout(d.timer);
    const delay = Math.max(0, Math.min(REFRESH_IDLE_MS, d.first + REFRESH_MAX_DELAY_MS - now));
    d.timer = setTimeout(() => this.refresh(c.name), delay);
    d.timer.unref();
  }

  /** Opened by the registry, or deleted: no refresh. */
  clear(name: string): void {
    const d = this.behind.get(name);
    if (d?.timer) clearTimeout(d.timer);
    this.behind.delete(name);
  }

  /** Lets pending refreshes go and waits for the one under way to stop. */
  async close(): Promise<void> {
    for (const d of this.behind.values()) if (d.timer) clearTimeout(d.timer);
    this.behind.clear();
    this.stop.abort();
    await this.refreshing;
  }

  /** Opens a collection's indexes outside the cache, catches them up, persists them and lets them go. */
  private refresh(name: string): void {
    const d = this.behind.get(name);
    if (!d) return;
    d.timer = null;
    this.refreshing = this.refreshing.then(async () => {
      // Still wanted? (opened meanwhile: its own persists keep it fresh; deleted; closing)
      if (this.behind.get(name) !== d || this.stop.signal.aborted) return;
      this.behind.delete(name);
      const c = this.deps.store.getCollection(name);
      if (!c || c.id !== d.id || this.deps.isOpen(name)) return;
      const started = performance.now();
      try {
        const ix = await this.deps.open(this.deps.indexDir(c), c, this.deps.store, {
          ...(this.deps.log ? { log: this.deps.log } : {}),
          signal: this.stop.signal,
          persistAfterRebuild: false,
        });
        await ix.persist();
        this.deps.log?.info({ event: 'kb.snapshot_refreshed', collection: name, version: ix.version, ms: Math.round(performance.now() - started) }, 'collection snapshot brought up to date (not kept open: KB_INDEX_CACHE_MB)');
      } catch (err) {
        if (!this.stop.signal.aborted) this.deps.log?.warn({ event: 'kb.snapshot_refresh_failed', collection: name, err: errorText(err) }, 'collection snapshot not refreshed; the next open catches up from SQLite');
      }
    });
  }
}
