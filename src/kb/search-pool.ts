/**
 * Worker threads that search large collections, so concurrent searches use every core and the
 * event loop (/health, small calls) never waits behind a search's CPU.
 *
 * Shared memory, not copies: a collection's lexical snapshot is read into a SharedArrayBuffer
 * (index-snapshot.ts loadLexical) and the main thread's index keeps views into it. Each worker
 * opens a search-only replica over the same bytes (CollectionLexicalIndex.openReplica: its own
 * small per-chunk arrays, the postings shared), so a worker costs ~40 bytes a chunk, not the
 * index again. A replica answers as the main index does, ids, order and scores to the float: same
 * bytes, same code.
 *
 * When a search goes to a worker: the pool is on (SEARCH_WORKERS), the collection has at least
 * SEARCH_WORKER_MIN_CHUNKS chunks, its index has not changed since the snapshot was loaded (a
 * change drops the shared bytes; until the index is loaded from a snapshot again, the main thread
 * answers), a filter names at most FILTER_IDS_MAX chunks, and some worker has the replica open.
 * Otherwise search() returns null and the caller searches on its own thread, as before; the first
 * search of a newly shared index opens its replica on every worker meanwhile. A worker that dies
 * fails nothing: its searches are answered on the main thread and a new worker takes its place.
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { COMPILED, PROJECT_ROOT } from '../project-root.ts';
import { errorText } from '../util/error-text.ts';
import type { CollectionLexicalIndex, LexicalHit } from './lexical-index.ts';
import type { SearchWorkerReply, SearchWorkerRequest } from './search-worker-protocol.ts';

/** A filter naming more chunks than this runs on the main thread (the id list is copied to the worker). */
export const FILTER_IDS_MAX = 65_536;

/** Workers that may stop on their own before the pool gives up on them. */
const MAX_DEATHS = 5;

const BOOT = COMPILED ? pathToFileURL(path.join(PROJECT_ROOT, 'dist', 'src', 'kb', 'search-worker.js')) : new URL('./search-worker-boot.mjs', import.meta.url);

export interface SearchPoolOptions {
  /** Worker threads; 0: the pool is off. */
  size: number;
  /** Chunks an index needs before its searches go to a worker. */
  minChunks: number;
  log?: { warn(obj: object, msg?: string): void };
}

interface Slot {
  worker: Worker;
  /** Searches posted and not answered yet. */
  busy: number;
  opened: Set<number>;
  dead: boolean;
}

interface Replica {
  id: number;
  bytes: Buffer;
  analyzer: CollectionLexicalIndex['analyzer']['options'];
  failed: boolean;
}

interface Pending {
  slot: Slot;
  resolve(hits: LexicalHit[]): void;
  reject(err: unknown): void;
  /** The same search on the main thread, if the worker dies first. */
  fallback(): LexicalHit[];
}

export class SearchPool {
  private readonly slots: Slot[] = [];
  private readonly replicas = new WeakMap<CollectionLexicalIndex, Replica>();
  private readonly open = new Map<number, Replica>();
  private readonly pending = new Map<number, Pending>();
  /** An index collected while its replica was open: the workers let the replica go. */
  private readonly gone = new FinalizationRegistry<number>((id) => this.close(id));
  private nextReplica = 1;
  private nextSearch = 1;
  private closed = false;
  private searched = 0;
  /** Workers that stopped on their own; past MAX_DEATHS the pool turns itself off (a worker that cannot start). */
  private deaths = 0;

  constructor(private readonly opts: SearchPoolOptions) {}

  /**
   * The top k of `index` for the query, searched by a worker thread; null: search it on this
   * thread (see the file comment for when).
   */
  search(index: CollectionLexicalIndex, query: string, k: number, language: string | undefined, ids: ReadonlySet<number> | null, signal?: AbortSignal): Promise<LexicalHit[]> | null {
    if (this.closed || this.opts.size === 0 || index.size < this.opts.minChunks) return null;
    const bytes = index.sharedSnapshot;
    let replica = this.replicas.get(index);
    if (replica && replica.bytes !== bytes) {
      this.close(replica.id);
      this.replicas.delete(index);
      replica = undefined;
    }
    if (!bytes || (ids && ids.size > FILTER_IDS_MAX)) return null;
    if (!replica) {
      this.openReplica(index, bytes);
      return null;
    }
    this.replaceDead();
    let best: Slot | null = null;
    for (const s of this.slots) if (!s.dead && s.opened.has(replica.id) && (!best || s.busy < best.busy)) best = s;
    if (!best || replica.failed) return null;
    const slot = best;
    const id = this.nextSearch++;
    const req: SearchWorkerRequest = { type: 'search', id, replica: replica.id, query, k, ...(language ? { language } : {}), ...(ids ? { ids: Float64Array.from(ids) } : {}) };
    return new Promise<LexicalHit[]>((resolve, reject) => {
      const onAbort = () => {
        this.settle(id);
        reject(signal!.reason);
      };
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      const done = () => signal?.removeEventListener('abort', onAbort);
      this.pending.set(id, {
        slot,
        resolve: (hits) => (done(), resolve(hits)),
        reject: (err) => (done(), reject(err)),
        fallback: () => index.search(query, k, ids ? (x) => ids.has(x) : undefined, language),
      });
      slot.busy++;
      slot.worker.ref();
      slot.worker.postMessage(req, req.ids ? [req.ids.buffer as ArrayBuffer] : []);
    });
  }

  stats(): { workers: number; replicas: number; searched: number; pending: number } {
    return { workers: this.slots.filter((s) => !s.dead).length, replicas: this.open.size, searched: this.searched, pending: this.pending.size };
  }

  /** Stops the workers; searches in flight are answered on the main thread. */
  async shutdown(): Promise<void> {
    this.closed = true;
    for (const s of this.slots) {
      s.dead = true;
      this.failOver(s);
    }
    await Promise.all(this.slots.map((s) => s.worker.terminate().catch(() => undefined)));
    this.slots.length = 0;
  }

  private openReplica(index: CollectionLexicalIndex, bytes: Buffer): void {
    const replica: Replica = { id: this.nextReplica++, bytes, analyzer: index.analyzer.options, failed: false };
    this.replicas.set(index, replica);
    this.open.set(replica.id, replica);
    this.gone.register(index, replica.id, replica);
    while (this.slots.length < this.opts.size) this.slots.push(this.spawn());
    for (const s of this.slots) if (!s.dead) this.post(s, replica);
  }

  private post(slot: Slot, r: Replica): void {
    const bytes = r.bytes.buffer as SharedArrayBuffer;
    slot.worker.postMessage({ type: 'open', replica: r.id, bytes, offset: r.bytes.byteOffset, length: r.bytes.length, analyzer: r.analyzer } satisfies SearchWorkerRequest);
  }

  private close(id: number): void {
    const r = this.open.get(id);
    if (!r) return;
    this.open.delete(id);
    this.gone.unregister(r);
    for (const s of this.slots) {
      if (s.dead || !s.opened.delete(id)) continue;
      s.worker.postMessage({ type: 'close', replica: id } satisfies SearchWorkerRequest);
    }
  }

  private spawn(): Slot {
    const worker = new Worker(BOOT);
    const slot: Slot = { worker, busy: 0, opened: new Set(), dead: false };
    worker.on('message', (msg: SearchWorkerReply) => this.onMessage(slot, msg));
    worker.on('error', (err) => this.onDeath(slot, `search worker crashed: ${errorText(err)}`));
    worker.on('exit', (code) => this.onDeath(slot, `search worker exited (code ${code})`));
    worker.unref();
    return slot;
  }

  private onMessage(slot: Slot, msg: SearchWorkerReply): void {
    if (msg.type === 'opened') {
      const r = this.open.get(msg.replica);
      if (msg.error) {
        // The main thread keeps answering for this index; say why once.
        if (r && !r.failed) this.opts.log?.warn({ event: 'kb.search_replica_failed', error: msg.error }, 'a search worker could not open an index; its searches stay on the main thread');
        if (r) r.failed = true;
      } else if (r) slot.opened.add(msg.replica);
      else slot.worker.postMessage({ type: 'close', replica: msg.replica } satisfies SearchWorkerRequest);
      return;
    }
    const p = this.settle(msg.id);
    if (!p) return;
    if (msg.type === 'failed') {
      // A worker-side error (a replica closed under the search): the main thread has the index.
      this.answerHere(p);
      return;
    }
    this.searched++;
    const hits: LexicalHit[] = new Array(msg.ids.length);
    for (let i = 0; i < msg.ids.length; i++) hits[i] = { id: msg.ids[i], score: msg.scores[i] };
    p.resolve(hits);
  }

  private settle(id: number): Pending | undefined {
    const p = this.pending.get(id);
    if (!p) return undefined;
    this.pending.delete(id);
    if (--p.slot.busy === 0 && !p.slot.dead) p.slot.worker.unref();
    return p;
  }

  private answerHere(p: Pending): void {
    try {
      p.resolve(p.fallback());
    } catch (err) {
      p.reject(err);
    }
  }

  private onDeath(slot: Slot, why: string): void {
    if (slot.dead) return;
    slot.dead = true;
    if (!this.closed) {
      const off = ++this.deaths > MAX_DEATHS;
      this.opts.log?.warn(
        { event: 'kb.search_worker_died', error: why, deaths: this.deaths },
        off ? 'search workers keep stopping: searches stay on the main thread from now on' : 'a search worker stopped; its searches are answered on the main thread and a new worker replaces it',
      );
      if (off) this.closed = true;
    }
    this.failOver(slot);
  }

  private failOver(slot: Slot): void {
    for (const [id, p] of [...this.pending]) if (p.slot === slot) this.answerHere(this.settle(id)!);
  }

  /** Dead workers are replaced at the next search, with every open replica. */
  private replaceDead(): void {
    if (this.closed) return;
    for (let i = 0; i < this.slots.length; i++) {
      if (!this.slots[i].dead) continue;
      const s = (this.slots[i] = this.spawn());
      for (const r of this.open.values()) this.post(s, r);
    }
  }
}
