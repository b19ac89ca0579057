/**
 * A collection's sources (issue 25): what the tools call to list, add, change, remove and sync
 * them, and the triggers that sync them without a call: a schedule per source (sync_every), and
 * for folders with watch on a debounced fs.watch plus a periodic rescan as the safety net.
 *
 * One sync of a source runs at a time across processes: a sync first takes the source's lease
 * (source-store.ts), renews it while it runs and releases it at the end; a process that dies
 * mid-sync leaves a lease that expires after SOURCES_LEASE_SECONDS. A sync's documents and its
 * deletions are one job of the knowledge base's runner, which resumes after a restart like any
 * job; once the dead process's lease expires, the sync is taken up again here (resumeInterrupted):
 * it waits for that job, then reconciles what it left (the walk and the deletions are idempotent).
 *
 * Why one class of about 400 lines: the calls (add, update, remove, sync) and the three triggers
 * (schedule tick, file watch, resumption after a dead process) share one piece of state, the map of
 * this process's running syncs with their leases, timers and watchers, and every path must see the
 * same map to keep "one sync of a source at a time". Split by trigger, each file would take that
 * map and the lease rules as parameters; what is separate without it already lives apart (the
 * store in source-store.ts, the reconcile in sync.ts, a deletion step in delete-step.ts, the
 * crawler in site-crawler.ts).
 */
import { randomBytes } from 'node:crypto';
import fsSync from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { isToolError, toolError } from '../../errors.ts';
import type { Config } from '../../config.ts';
import { parseDocumentUrl } from '../../documents/url-policy.ts';
import { KB_DB_FILE } from '../db.ts';
import { compileGlobs, isInside, realFolders } from '../local-files.ts';
import type { KnowledgeBaseApi } from '../types.ts';
import type { Source, SourceKind, SourceSettings } from '../../contract/source-schemas.ts';
import { SourceStore, type SourceRow } from './source-store.ts';
import { runSync, type Probe, type SyncResult } from './sync.ts';

export interface SourceServiceDeps {
  config: Readonly<Config>;
  kb: KnowledgeBaseApi;
  probe: Probe;
  log?: { info(obj: object, msg?: string): void; warn(obj: object, msg?: string): void };
  /** Replaces the store (tests). */
  openStore?: () => SourceStore;
  /** The scheduler's clock, for what is due (tests inject one); absent: Date.now. Leases, shared across processes, keep the wall clock. */
  now?: () => number;
}

/** What add_source and update_source take besides the collection (the tools' input). */
export interface SourceInput {
  kind?: SourceKind;
  path?: string;
  include?: string[];
  exclude?: string[];
  urls?: string[];
  start_url?: string;
  scope?: SourceSettings['scope'];
  max_depth?: number;
  max_pages?: number;
  max_bytes?: number;
  sitemap?: boolean;
  sync_every?: number | null;
  watch?: boolean;
}

export type SyncTrigger = 'demand' | 'schedule' | 'watch' | 'rescan' | 'added' | 'resume';

interface Running {
  promise: Promise<SyncResult>;
  controller: AbortController;
}

interface Watching {
  path: string;
  watcher: fsSync.FSWatcher | null;
  timer: NodeJS.Timeout | null;
  /** A change came while a sync ran: sync again when it ends. */
  pending: boolean;
}

const FIELDS_BY_KIND: Record<SourceKind, readonly string[]> = {
  folder: ['path', 'include', 'exclude', 'sync_every', 'watch'],
  urls: ['urls', 'sync_every'],
  site: ['start_url', 'scope', 'max_depth', 'max_pages', 'max_bytes', 'include', 'exclude', 'sitemap', 'sync_every'],
};

export class SourceService {
  private store: SourceStore | null = null;
  private readonly owner = `${process.pid}-${randomBytes(6).toString('hex')}`;
  private readonly running = new Map<string, Running>();
  private readonly watching = new Map<string, Watching>();
  private tick: NodeJS.Timeout | null = null;
  private resumeTimer: NodeJS.Timeout | null = null;
  private closed = false;
  private readonly now: () => number;

  constructor(private readonly deps: SourceServiceDeps) {
    this.now = deps.now ?? Date.now;
  }

  /** Resumes syncs a stopped process left unfinished; starts the scheduler, the watchers and the rescans (as configured). */
  start(): void {
    const c = this.deps.config;
    if (!this.closed && !this.resumeTimer) {
      this.resumeTimer = setTimeout(() => this.resumeInterrupted(), 0);
      this.resumeTimer.unref();
    }
    if (this.closed || this.tick || (!c.SOURCES_SCHEDULER && !c.SOURCES_WATCH)) return;
    this.tick = setInterval(() => this.onTick(), c.SOURCES_SCHEDULER_TICK_SECONDS * 1000);
    this.tick.unref();
    // The first look soon after start, not a whole tick later (watchers of existing sources).
    setImmediate(() => this.onTick());
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.tick) clearInterval(this.tick);
    if (this.resumeTimer) clearTimeout(this.resumeTimer);
    this.tick = null;
    for (const id of [...this.watching.keys()]) this.unwatch(id);
    for (const r of this.running.values()) r.controller.abort(toolError('SHUTTING_DOWN', 'the server is shutting down'));
    await Promise.allSettled([...this.running.values()].map((r) => r.promise));
    this.store?.close();
    this.store = null;
  }

  private use(): SourceStore {
    if (this.closed) throw toolError('STORAGE_UNAVAILABLE', 'the knowledge base is closing');
    if (!this.store) {
      // The knowledge base opens (and migrates) the database first; its errors are the ones to answer.
      this.deps.kb.listCollections();
      this.store = this.deps.openStore ? this.deps.openStore() : new SourceStore(path.join(this.deps.config.dataDir, 'kb', KB_DB_FILE));
    }
    return this.store;
  }

  private collectionId(name: string): number {
    const id = this.use().collectionId(name);
    if (id === null) throw toolError('NOT_FOUND', `Collection "${name}" not found`);
    return id;
  }

  private row(collection: string, id: string): SourceRow {
    const r = this.use().get(id);
    if (!r || r.collection !== collection) throw toolError('NOT_FOUND', `Source ${id} not found in collection "${collection}"`);
    return r;
  }

  view(r: SourceRow): Source {
    return {
      id: r.id,
      collection: r.collection,
      kind: r.kind,
      settings: r.settings,
      sync_every: r.sync_every,
      watch: r.watch,
      created_at: r.created_at,
      updated_at: r.updated_at,
      running: this.running.has(r.id) || (r.lease_owner !== null && (r.lease_expires ?? 0) > Date.now()),
      last_sync_at: r.last_sync_at,
      last_status: r.last_status,
      last_job_id: r.last_job_id,
      counts: r.counts,
      last_error: r.last_error,
      notes: r.notes,
    };
  }

  list(collection: string): { items: Source[]; total: number } {
    const items = this.use().list(this.collectionId(collection)).map((r) => this.view(r));
    return { items, total: items.length };
  }

  get(collection: string, id: string): Source {
    return this.view(this.row(collection, id));
  }

  /** Adds a source (the collection is created when missing); a first sync starts unless `sync` is false. */
  async add(collection: string, input: SourceInput & { kind: SourceKind }, opts: { transport?: string; sync?: boolean } = {}): Promise<Source> {
    const c = this.deps.config;
    if (input.kind === 'site' && opts.transport && opts.transport !== 'rest' && !c.SOURCES_MCP_ADD_SITE) {
      throw toolError('FORBIDDEN', 'Adding a site source over MCP is off on this server (SOURCES_MCP_ADD_SITE); add it over REST or the console');
    }
    const settings = await this.settingsOf(input.kind, input, null);
    const syncEvery = this.syncEveryOf(input.kind, input.sync_every ?? null);
    this.use();
    try {
      this.deps.kb.getCollection(collection);
    } catch (err) {
      if (!isToolError(err) || err.code !== 'NOT_FOUND') throw err;
      try {
        this.deps.kb.createCollection(collection);
      } catch (e) {
        if (!isToolError(e) || e.code !== 'CONFLICT') throw e;
      }
    }
    const row = this.use().create({
      id: `src_${randomBytes(8).toString('hex')}`,
      collection_id: this.collectionId(collection),
      kind: input.kind,
      settings,
      sync_every: syncEvery,
      watch: input.kind === 'folder' ? (input.watch ?? true) : false,
    });
    this.refreshWatch(row);
    if (opts.sync !== false) this.trigger(row.id, 'added');
    return this.view(this.use().get(row.id)!);
  }

  async update(collection: string, id: string, input: SourceInput): Promise<Source> {
    const cur = this.row(collection, id);
    if (input.kind !== undefined && input.kind !== cur.kind) throw toolError('VALIDATION_ERROR', `A source's kind cannot change (it is ${cur.kind}); add another source instead`);
    const settings = await this.settingsOf(cur.kind, input, cur.settings);
    const syncEvery = input.sync_every === undefined ? undefined : this.syncEveryOf(cur.kind, input.sync_every);
    const row = this.use().update(id, {
      settings,
      ...(syncEvery !== undefined ? { sync_every: syncEvery } : {}),
      ...(input.watch !== undefined && cur.kind === 'folder' ? { watch: input.watch } : {}),
    })!;
    this.refreshWatch(row);
    return this.view(row);
  }

  /** Removes the source; its documents stay in the collection (delete them, or the collection, to remove them too). */
  async remove(collection: string, id: string): Promise<{ id: string; removed: true }> {
    this.row(collection, id);
    const r = this.running.get(id);
    if (r) {
      r.controller.abort(toolError('CONFLICT', 'the source was removed'));
      await r.promise.catch(() => undefined);
    }
    this.unwatch(id);
    this.use().remove(id);
    return { id, removed: true };
  }

  /**
   * Starts a sync now (CONFLICT while one runs, here or in another process) and answers the source
   * as it stands, after waiting up to waitMs for the sync to end.
   */
  async sync(collection: string, id: string, waitMs = 0): Promise<Source> {
    this.row(collection, id);
    if (this.running.has(id)) throw toolError('CONFLICT', `A sync of source ${id} is already running`);
    const promise = this.startSync(id, 'demand');
    if (!promise) throw toolError('CONFLICT', `A sync of source ${id} is already running (in another process)`);
    if (waitMs > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([promise.catch(() => undefined), new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs)))]);
      clearTimeout(timer);
    }
    return this.get(collection, id);
  }

  /** Resolves when the source's sync running in this process ends (at once when none runs). */
  async settled(id: string): Promise<void> {
    await this.running.get(id)?.promise.catch(() => undefined);
  }

  /** A sync from a trigger: skipped when one runs (a watch change is then remembered). */
  private trigger(id: string, why: SyncTrigger): void {
    if (this.closed) return;
    if (this.running.has(id)) {
      const w = this.watching.get(id);
      if (w && why === 'watch') w.pending = true;
      return;
    }
    try {
      // A sync settles with its result; a rejection only means the store closed under it (shutdown).
      this.startSync(id, why)?.catch((err: unknown) => this.deps.log?.warn({ event: 'kb.source.sync_aborted', source: id, trigger: why, err: err instanceof Error ? err.message : String(err) }, 'source sync aborted'));
    } catch (err) {
      this.deps.log?.warn({ event: 'kb.source.sync_not_started', source: id, trigger: why, err: err instanceof Error ? err.message : String(err) }, 'source sync not started');
    }
  }

  /** Takes the lease and runs the sync in the background; null when another process holds the lease. */
  private startSync(id: string, why: SyncTrigger): Promise<SyncResult> | null {
    const store = this.use();
    const leaseMs = this.deps.config.SOURCES_LEASE_SECONDS * 1000;
    if (!store.acquireLease(id, this.owner, leaseMs)) return null;
    const source = store.get(id);
    if (!source) {
      store.releaseLease(id, this.owner);
      throw toolError('NOT_FOUND', `Source ${id} not found`);
    }
    // The previous sync never ended (its process stopped): its job, resumed by the knowledge base, ends first.
    const interrupted = source.last_status === 'running' ? source.last_job_id : null;
    const controller = new AbortController();
    const seq = store.beginSync(id);
    store.setJob(id, null);
    let lost = false;
    const renew = () => {
      if (this.closed || lost) return;
      if (!store.acquireLease(id, this.owner, leaseMs)) {
        // Expired and taken by another process (this one stalled past the lease): stop here.
        lost = true;
        controller.abort(toolError('CONFLICT', 'the source\'s sync lease was taken over by another process'));
      }
    };
    const renewer = setInterval(renew, Math.max(1000, Math.floor(leaseMs / 3)));
    renewer.unref();
    this.deps.log?.info({ event: 'kb.source.sync_started', source: id, trigger: why }, 'source sync started');
    const promise = (async () => {
      try {
        const deps = { store, kb: this.deps.kb, probe: this.deps.probe, config: this.deps.config, onJob: (jobId: string) => store.setJob(id, jobId), ...(this.deps.log ? { log: this.deps.log } : {}) };
        if (interrupted) await awaitJob(deps.kb, interrupted, controller.signal);
        const result = await runSync(source, seq, deps, controller.signal);
        if (store.get(id)) store.endSync(id, result);
        return result;
      } catch (err) {
        const result: SyncResult = {
          status: controller.signal.aborted ? 'cancelled' : 'failed',
          counts: { new: 0, changed: 0, unchanged: 0, gone: 0, failed: 0, transient: 0, requests: 0, not_modified: 0 },
          error: err instanceof Error ? err.message : String(err),
          notes: [],
          job_id: null,
        };
        if (!this.closed && store.get(id)) store.endSync(id, result);
        return result;
      } finally {
        clearInterval(renewer);
        if (!this.closed || this.store) store.releaseLease(id, this.owner);
        this.running.delete(id);
        const w = this.watching.get(id);
        if (w?.pending && !this.closed) {
          w.pending = false;
          this.debounce(id);
        }
      }
    })();
    this.running.set(id, { promise, controller });
    return promise;
  }

  // ---- settings ----

  private syncEveryOf(kind: SourceKind, v: number | null): number | null {
    if (v !== null && kind === 'site' && !this.deps.config.SOURCES_SITE_SCHEDULE) {
      throw toolError('VALIDATION_ERROR', 'Site sources have no schedule on this server (SOURCES_SITE_SCHEDULE is off): sync them on demand');
    }
    return v;
  }

  private async settingsOf(kind: SourceKind, input: SourceInput, cur: SourceSettings | null): Promise<SourceSettings> {
    const given = Object.entries(input).filter(([k, v]) => v !== undefined && k !== 'kind').map(([k]) => k);
    const foreign = given.filter((k) => !FIELDS_BY_KIND[kind].includes(k));
    if (foreign.length > 0) throw toolError('VALIDATION_ERROR', `${foreign.join(', ')}: not a setting of a ${kind} source (it takes ${FIELDS_BY_KIND[kind].join(', ')})`);
    const s: SourceSettings = { ...(cur ?? {}) };
    const c = this.deps.config;
    if (kind === 'folder') {
      if (input.path !== undefined) s.path = await this.checkFolder(input.path);
      if (!s.path) throw toolError('VALIDATION_ERROR', 'A folder source needs path: an absolute folder inside ALLOWED_DIRS');
      if (input.include !== undefined) s.include = input.include;
      if (input.exclude !== undefined) s.exclude = input.exclude;
      compileGlobs(s.include, 'include');
      compileGlobs(s.exclude, 'exclude');
    } else if (kind === 'urls') {
      if (input.urls !== undefined) s.urls = [...new Set(input.urls.map((u) => parseDocumentUrl(u).href))];
      if (!s.urls?.length) throw toolError('VALIDATION_ERROR', 'A urls source needs urls: http(s) URLs');
    } else {
      if (input.start_url !== undefined) s.start_url = parseDocumentUrl(input.start_url).href;
      if (!s.start_url) throw toolError('VALIDATION_ERROR', 'A site source needs start_url');
      for (const k of ['scope', 'include', 'exclude', 'sitemap', 'max_depth', 'max_pages', 'max_bytes'] as const) {
        if (input[k] !== undefined) (s as Record<string, unknown>)[k] = input[k];
      }
      if (typeof s.scope === 'object') s.scope = { prefixes: s.scope.prefixes.map((p) => parseDocumentUrl(p).href) };
      s.scope ??= 'prefix';
      s.max_depth ??= c.CRAWL_MAX_DEPTH;
      s.max_pages ??= c.CRAWL_MAX_PAGES;
      s.max_bytes ??= c.CRAWL_MAX_BYTES;
      s.sitemap ??= false;
    }
    return s;
  }

  private async checkFolder(requested: string): Promise<string> {
    const dirs = await realFolders(this.deps.config.allowedDirs);
    if (dirs.length === 0) throw toolError('URL_NOT_ALLOWED', 'Local files are off: set ALLOWED_DIRS to the folders whose files may be ingested');
    if (!path.isAbsolute(requested)) throw toolError('VALIDATION_ERROR', `Path ${JSON.stringify(requested)} is relative: give an absolute folder inside ALLOWED_DIRS`);
    const real = await fs.realpath(requested).catch(() => null);
    if (!real || !isInside(dirs, real)) throw toolError('URL_NOT_ALLOWED', `Path ${JSON.stringify(requested)} is not an existing folder inside ALLOWED_DIRS`);
    const st = await fs.stat(real);
    if (!st.isDirectory()) throw toolError('VALIDATION_ERROR', `Path ${JSON.stringify(requested)} is not a folder`);
    return real;
  }

  // ---- schedule, watching, rescans ----

  /**
   * Syncs a process left running when it stopped (kill -9, a crash): synced again once their lease
   * is free (at once when free, else when the dead owner's lease expires). The new sync first
   * waits for the old one's job, which the knowledge base resumed at start, then reconciles what
   * that job left: files it ingested are found unchanged by hash, deletions it did not reach run.
   */
  private resumeInterrupted(): void {
    this.resumeTimer = null;
    if (this.closed) return;
    let sources: SourceRow[];
    try {
      sources = this.use().all();
    } catch {
      return;
    }
    const now = Date.now();
    let retryAt = Infinity;
    for (const s of sources) {
      if (s.last_status !== 'running' || this.running.has(s.id)) continue;
      if (s.lease_owner && s.lease_owner !== this.owner && (s.lease_expires ?? 0) >= now) {
        retryAt = Math.min(retryAt, s.lease_expires!);
        continue;
      }
      this.trigger(s.id, 'resume');
    }
    if (retryAt < Infinity) {
      this.resumeTimer = setTimeout(() => this.resumeInterrupted(), Math.max(50, retryAt - now + 100));
      this.resumeTimer.unref();
    }
  }

  /** One scheduler tick (the interval's; tests call it with an injected clock). */
  onTick(): void {
    if (this.closed) return;
    const c = this.deps.config;
    let sources: SourceRow[];
    try {
      sources = this.use().all();
    } catch {
      return; // the knowledge base is unavailable: nothing to schedule
    }
    const now = this.now();
    const wall = Date.now();
    const live = new Set(sources.map((s) => s.id));
    for (const id of [...this.watching.keys()]) if (!live.has(id)) this.unwatch(id);
    for (const s of sources) {
      this.refreshWatch(s);
      if (this.running.has(s.id) || (s.lease_owner && (s.lease_expires ?? 0) > wall)) continue;
      // Left running by a process that stopped (its lease expired): taken up now, schedule or not.
      if (s.last_status === 'running') {
        this.trigger(s.id, 'resume');
        continue;
      }
      const last = s.last_sync_at ? Date.parse(s.last_sync_at) : 0;
      const scheduled = c.SOURCES_SCHEDULER && s.sync_every !== null && (s.kind !== 'site' || c.SOURCES_SITE_SCHEDULE);
      if (scheduled && now - last >= s.sync_every! * 1000) {
        this.trigger(s.id, 'schedule');
        continue;
      }
      const rescan = c.SOURCES_WATCH && s.kind === 'folder' && s.watch && c.SOURCES_RESCAN_SECONDS > 0;
      if (rescan && now - last >= c.SOURCES_RESCAN_SECONDS * 1000) this.trigger(s.id, 'rescan');
    }
  }

  private refreshWatch(s: SourceRow): void {
    const want = !this.closed && this.deps.config.SOURCES_WATCH && s.kind === 'folder' && s.watch && Boolean(s.settings.path);
    const cur = this.watching.get(s.id);
    if (cur && (!want || cur.path !== s.settings.path)) this.unwatch(s.id);
    if (!want || this.watching.has(s.id)) return;
    const w: Watching = { path: s.settings.path!, watcher: null, timer: null, pending: false };
    try {
      w.watcher = fsSync.watch(w.path, { recursive: true, persistent: false }, () => this.debounce(s.id));
      w.watcher.on('error', (err) => {
        // Watching stopped (folder removed, too many watches): the periodic rescan remains.
        this.deps.log?.warn({ event: 'kb.source.watch_failed', source: s.id, err: err.message }, 'folder watching stopped; periodic rescans continue');
        w.watcher?.close();
        w.watcher = null;
      });
    } catch (err) {
      this.deps.log?.warn({ event: 'kb.source.watch_unavailable', source: s.id, err: err instanceof Error ? err.message : String(err) }, 'folder cannot be watched; periodic rescans only');
    }
    this.watching.set(s.id, w);
  }

  private debounce(id: string): void {
    const w = this.watching.get(id);
    if (!w || this.closed) return;
    if (w.timer) clearTimeout(w.timer);
    w.timer = setTimeout(() => {
      w.timer = null;
      this.trigger(id, 'watch');
    }, this.deps.config.SOURCES_WATCH_DEBOUNCE_MS);
    w.timer.unref();
  }

  private unwatch(id: string): void {
    const w = this.watching.get(id);
    if (!w) return;
    if (w.timer) clearTimeout(w.timer);
    w.watcher?.close();
    this.watching.delete(id);
  }

  /** For get_system_health. */
  stats(): Record<string, unknown> {
    return { syncs_running: this.running.size, folders_watched: [...this.watching.values()].filter((w) => w.watcher).length };
  }
}

/** Waits for a job to end (an interrupted sync's, resumed by the knowledge base); a job no longer known is taken as ended. */
async function awaitJob(kb: KnowledgeBaseApi, jobId: string, signal: AbortSignal): Promise<void> {
  for (;;) {
    signal.throwIfAborted();
    let job;
    try {
      job = await kb.waitForJob(jobId, 5_000, signal);
    } catch (err) {
      if (isToolError(err) && err.code === 'NOT_FOUND') return;
      throw err;
    }
    if (['succeeded', 'partial', 'failed', 'cancelled'].includes(job.status)) return;
  }
}
