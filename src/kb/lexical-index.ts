/**
 * The server's one lexical index: BM25F over chunks keyed by integer ids — a collection's chunk
 * ids, or a document's chunk positions (src/retrieval/document-lexical-index.ts, for
 * retrieve_chunks and the evaluation). Mutable (chunks come and go as documents are re-ingested or
 * deleted) and exact: every score equals what a BM25F index built from scratch over the live
 * chunks gives (test/retrieval/bm25-reference.ts is that reference, kept to check this one),
 * because the global statistics (live count, document frequencies, average field lengths) are kept
 * exactly on every add and remove, and the length norms — which depend on the averages — are
 * recomputed at query time (lazily, once per change) with the reference's expressions and Float32
 * rounding.
 *
 * Layout, so 100k chunks cost few objects: terms interned to ints; one growable Int32Array of
 * (slot, body tf, title tf) triples per term; per-slot lengths, ids and liveness in typed arrays;
 * each slot's distinct terms in one shared pool (what a remove needs to decrement df). A remove
 * leaves a tombstone; past ~25% tombstones the whole index is compacted (slots renumbered, dead
 * postings and unused terms dropped). Adds run as steps, so big batches go in time slices.
 *
 * Search: exact top k by MaxScore over block maxima (src/kb/lexical-pruned.ts), which skips the
 * postings that cannot reach the top k; the maxima are built per term at its first query and kept
 * valid across adds and removes, so the snapshot format is unchanged. searchExhaustive, which
 * scores every posting, stays as the reference the pruned answers equal to the float.
 *
 * Snapshot: a compact binary form (typed arrays behind a small JSON header carrying the format
 * version, the analyzer signature, the parameters and the identity of the database whose chunk
 * ids it holds; a sha256 trailer), loaded without re-tokenizing anything. Chunk ids are only
 * unique within one database, so a loader that names its database refuses a snapshot of another
 * (or of none: written before the identity existed).
 *
 * Why this size (one class of about 770 lines): the index is a handful of typed arrays (postings
 * per term, per-slot lengths, ids and liveness, the shared term pool) that add, remove, compaction,
 * scoring and the snapshot all read and write directly, in loops that run over every posting.
 * Splitting them over classes would put an indirection into those loops or expose the arrays to
 * several owners that must keep them consistent (a compaction renumbers slots under all of them).
 * The parts that need only a read-only view have their own file: MaxScore pruning and block
 * maxima (lexical-pruned.ts).
 */
import { createHash } from 'node:crypto';
import { toolError } from '../errors.ts';
import { DEFAULT_BM25_PARAMS, fnv1a, type Bm25Params } from '../retrieval/bm25.ts';
import type { Analyzer } from '../retrieval/tokenizer.ts';
import { runSliced, runSync, type Steps } from '../util/slices.ts';
import { BlockBounds, prunable, prunedTopK, type PruneSource } from './lexical-pruned.ts';

export interface LexicalChunk {
  id: number;
  text: string;
  heading_path: string[];
  /** The chunk's language (ISO 639-1), for an analyzer that applies per-language rules. */
  language?: string | null;
}

export interface LexicalHit {
  id: number;
  score: number;
}

/** Which database a snapshot's ids belong to (KbStore.databaseId); null: not tied to one (tests, tools). */
export interface SnapshotIdentity {
  databaseId: string | null;
}

export interface SerializeOptions {
  /** Room to grow after each term's postings and the term pool (format 2; default). false: format 1, for an index never added to after a load. */
  growable?: boolean;
}

/**
 * 1: the first binary layout. 2: room to grow (`growable`): each term's postings and the term
 * pool are followed by free space (postingRoom, poolRoom), so an index loaded from the snapshot
 * appends in place instead of copying every posting list its first adds touch. Both are read.
 */
export const LEXICAL_SNAPSHOT_FORMAT = 2;
const LEXICAL_SNAPSHOT_FORMAT_FIXED = 1;

/**
 * Free postings after a term's `used` ints in a growable snapshot: a sixteenth of them, at least
 * one posting. A catch-up of 0.5% more chunks (5,000 on 1M) fits in nearly every common term's
 * room; a term that outgrows it gets an array of its own, as before.
 */
const postingRoom = (used: number): number => 3 * Math.max(1, Math.ceil(used / 3 / 16));
/** Free ints after the term pool in a growable snapshot. */
const poolRoom = (used: number): number => Math.max(1024, Math.ceil(used / 16));
const MAGIC = 0x584c424b; // 'KBLX' little-endian
const CHECKSUM_BYTES = 32;
/** Compaction runs once tombstones pass this share of the slots (and there are enough of them). */
const COMPACT_RATIO = 0.25;
const COMPACT_MIN_DEAD = 64;
const EMPTY = new Int32Array(0);
/** Below this many postings over the query's terms, scoring them all is cheaper than pruning. */
const PRUNE_MIN_POSTINGS = 4096;
/**
 * Above this many distinct query terms, scoring every posting is about as cheap as pruning: the
 * more terms, the fewer a chunk's bound can rule out. bench:kb-scale's query-length table (SciFact
 * sentences, top 10, p50, pruned / exhaustive): at 100k chunks 0.59 for 10 terms, 0.85 for 23,
 * 0.95 for 37 and 1.37 for 68 (a pasted paragraph); at 1M chunks 0.32, 0.34, 0.53 and 0.77. So
 * queries up to 40 terms are pruned, and longer ones cost one pass over their postings.
 */
export const PRUNE_MAX_TERMS = 40;

export class CollectionLexicalIndex {
  readonly analyzer: Analyzer;
  readonly params: Readonly<Bm25Params>;

  // ---- terms ----
  private termIndex = new Map<string, number>();
  private terms: string[] = [];
  private termHash = new Int32Array(1024);
  /** Live documents containing the term. */
  private df = new Int32Array(1024);
  /** (slot, tfBody, tfTitle) triples, slots ascending; dead slots stay until compaction. */
  private post: Int32Array[] = [];
  /** Ints used in post[t] (3 per posting). */
  private postUsed = new Int32Array(1024);

  // ---- slots ----
  private slotCount = 0;
  private slotId = new Float64Array(1024);
  private lenBody = new Int32Array(1024);
  private lenTitle = new Int32Array(1024);
  private alive = new Uint8Array(1024);
  private termStart = new Int32Array(1024);
  private termCount = new Int32Array(1024);
  private pool = new Int32Array(16384);
  private poolUsed = 0;
  /**
   * Finding a chunk's slot by id. Chunk ids nearly always arrive in ascending order (store ids
   * grow, a document's indexes number 0..n-1), and then slotId is sorted and a binary search
   * finds a slot: no map. Building a Map of a million ids cost ~220 ms of a restart (and ~80 MB),
   * for lookups only changes and the diversity filter make. An id added out of order switches to
   * the map (idMap, built from the slots when first needed, kept up to date after).
   */
  private idsAscending = true;
  /** Every id ever added is at most this (removals leave it): ids above it are new. */
  private idCeiling = -Infinity;
  /** id -> slot when ids are not ascending; null until built (or while they are). */
  private idMap: Map<number, number> | null = null;

  // ---- global statistics (exact) ----
  private live = 0;
  private dead = 0;
  private sumBody = 0;
  private sumTitle = 0;
  private normBody = new Float32Array(1024);
  private normTitle = new Float32Array(1024);
  private normsValid = false;
  private scores = new Float64Array(1024);
  /** Block maxima for the pruned search, built per term at its first query (src/kb/lexical-pruned.ts). */
  private bounds = new BlockBounds();
  /** A sliced compaction is under way: the arrays are being rebuilt, changes would be lost. */
  private compacting = false;
  /**
   * The snapshot this index was loaded from, while it still describes the index exactly: set when
   * the snapshot sat in a SharedArrayBuffer, dropped at the first change. Search worker threads
   * open the same bytes (src/kb/search-pool.ts) and answer as this index would.
   */
  private shared: Buffer | null = null;
  /** A search-only replica in a worker thread (deserialize's `replica`): changes are refused. */
  private replica = false;
  /** arrayBytes() until the next change; -1: to compute. The registry asks at every search. */
  private approx = -1;

  /**
   * `capacity.slots`: chunks expected (a document's index knows its count); the arrays start that
   * big instead of 1,024 slots, so hundreds of cached small documents hold no empty capacity.
   */
  constructor(analyzer: Analyzer, params: Partial<Bm25Params> = {}, capacity?: { slots?: number }) {
    this.analyzer = analyzer;
    this.params = Object.freeze({ ...DEFAULT_BM25_PARAMS, ...params });
    if (capacity?.slots !== undefined) {
      const n = Math.max(16, Math.ceil(capacity.slots));
      this.slotId = new Float64Array(n);
      this.lenBody = new Int32Array(n);
      this.lenTitle = new Int32Array(n);
      this.alive = new Uint8Array(n);
      this.termStart = new Int32Array(n);
      this.termCount = new Int32Array(n);
      this.normBody = new Float32Array(n);
      this.normTitle = new Float32Array(n);
      this.scores = new Float64Array(n);
      this.pool = new Int32Array(Math.min(16384, n * 64));
    }
  }

  /** Live chunks. */
  get size(): number {
    return this.live;
  }

  /** Live chunks containing an analyzed term (search confidence weighs query terms by it). */
  docFreq(term: string): number {
    const t = this.termIndex.get(term);
    return t === undefined ? 0 : this.df[t];
  }

  get vocabularySize(): number {
    let n = 0;
    for (let t = 0; t < this.terms.length; t++) if (this.df[t] > 0) n++;
    return n;
  }

  /** Removed chunks whose postings are still held (until the next compaction). */
  get tombstones(): number {
    return this.dead;
  }

  has(id: number): boolean {
    return this.slotOf(id) !== undefined;
  }

  /** The live slot holding chunk `id`, or undefined. */
  private slotOf(id: number): number | undefined {
    if (!(id <= this.idCeiling)) return undefined;
    if (!this.idsAscending) return this.idIndex().get(id);
    const ids = this.slotId;
    let lo = 0;
    let hi = this.slotCount - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const v = ids[mid];
      if (v < id) lo = mid + 1;
      else if (v > id) hi = mid - 1;
      else return this.alive[mid] === 1 ? mid : undefined;
    }
    return undefined;
  }

  /** The id -> slot map of live slots (ids not ascending), built at its first use. */
  private idIndex(): Map<number, number> {
    if (this.idMap === null) {
      const map = new Map<number, number>();
      for (let s = 0; s < this.slotCount; s++) if (this.alive[s] === 1) map.set(this.slotId[s], s);
      this.idMap = map;
      this.approx = -1;
    }
    return this.idMap;
  }

  /** The shared snapshot bytes this index equals, or null once it has changed since it was loaded. */
  get sharedSnapshot(): Buffer | null {
    return this.shared;
  }

  /** Adds chunks (a chunk whose id is live is replaced). */
  add(chunks: readonly LexicalChunk[]): void {
    runSync(this.addSteps(chunks));
  }

  /**
   * add in time slices; stops with the coded abort error when `signal` fires, leaving the chunks
   * added so far in the index (each chunk is added whole or not at all).
   */
  addSliced(chunks: readonly LexicalChunk[], signal?: AbortSignal): Promise<void> {
    return runSliced(this.addSteps(chunks), { signal, what: 'Indexing' });
  }

  /**
   * Removes chunks by id (unknown ids are ignored); returns how many went. Compacts at once when
   * tombstones pass ~25%, unless `deferCompaction` (then see needsCompaction / compactSliced: a
   * compaction of 100k chunks takes several hundred ms).
   */
  remove(ids: Iterable<number>, opts: { deferCompaction?: boolean } = {}): number {
    this.assertNotCompacting();
    let n = 0;
    for (const id of ids) if (this.removeOne(id)) n++;
    if (n > 0 && !opts.deferCompaction) this.maybeCompact();
    return n;
  }

  /** Whether tombstones passed the share at which a compaction pays. */
  get needsCompaction(): boolean {
    return (this.dead >= COMPACT_MIN_DEAD && this.dead > this.slotCount * COMPACT_RATIO) || (this.live === 0 && this.dead > 0);
  }

  /** Drops tombstones now (slots renumbered, dead postings and unused terms removed). */
  compact(): void {
    runSync(this.compactSteps());
  }

  /** compact in time slices; searches may run meanwhile, adds and removes fail until it ends. */
  compactSliced(): Promise<void> {
    return runSliced(this.compactSteps(), { what: 'Compacting the index' });
  }

  /**
   * Top k live chunks by BM25F score (score > 0 only), best first; ties by id ascending. Pruned
   * (MaxScore over block maxima, src/kb/lexical-pruned.ts) when the query's postings are many
   * enough and its terms few enough for it to pay; the answer is searchExhaustive's, ids, order and
   * scores alike.
   */
  search(query: string, k: number, filter?: (id: number) => boolean, language?: string): LexicalHit[] {
    const q = this.queryTerms(query, k, language);
    if (q === null) return [];
    if (q.size > PRUNE_MAX_TERMS) return this.scoreAll(q, k, filter);
    let postings = 0;
    for (const t of q.keys()) postings += this.postUsed[t] / 3;
    if (postings < PRUNE_MIN_POSTINGS || !prunable(this.params)) return this.scoreAll(q, k, filter);
    return this.scorePruned(q, k, filter);
  }

  /** search scoring every posting of every query term: the reference the pruned search must equal. */
  searchExhaustive(query: string, k: number, filter?: (id: number) => boolean, language?: string): LexicalHit[] {
    const q = this.queryTerms(query, k, language);
    return q === null ? [] : this.scoreAll(q, k, filter);
  }

  /** search always pruned, however few the postings (tests compare it with searchExhaustive). */
  searchPruned(query: string, k: number, filter?: (id: number) => boolean, language?: string): LexicalHit[] {
    const q = this.queryTerms(query, k, language);
    if (q === null) return [];
    return prunable(this.params) ? this.scorePruned(q, k, filter) : this.scoreAll(q, k, filter);
  }

  /** The query's live terms -> query tf, in first-occurrence order (the order scores are summed in); null: no hits possible. */
  private queryTerms(query: string, k: number, language?: string): Map<number, number> | null {
    if (k <= 0 || this.live === 0) return null;
    const qterms = new Map<number, number>();
    for (const term of this.analyzer.tokenize(query, language)) {
      const t = this.termIndex.get(term);
      if (t === undefined || this.df[t] === 0) continue;
      qterms.set(t, (qterms.get(t) ?? 0) + 1);
    }
    if (qterms.size === 0) return null;
    if (!this.normsValid) this.computeNorms();
    return qterms;
  }

  /** idf * query tf, the weight both scorers multiply a term's saturation by. */
  private weightOf(t: number, qtf: number): number {
    const df = this.df[t];
    const n = this.live;
    const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
    return idf * qtf;
  }

  private scorePruned(qterms: Map<number, number>, k: number, filter?: (id: number) => boolean): LexicalHit[] {
    const terms: number[] = [];
    const weights: number[] = [];
    for (const [t, qtf] of qterms) {
      terms.push(t);
      weights.push(this.weightOf(t, qtf));
    }
    const src: PruneSource = {
      post: this.post,
      postUsed: this.postUsed,
      alive: this.alive,
      lenBody: this.lenBody,
      lenTitle: this.lenTitle,
      normBody: this.normBody,
      normTitle: this.normTitle,
      slotId: this.slotId,
      k1: this.params.k1,
      b: this.params.b,
      bTitle: this.params.bTitle,
      titleWeight: this.params.titleWeight,
      avgBody: this.avgBody,
      avgTitle: this.avgTitle,
    };
    return prunedTopK(src, this.bounds, terms, weights, k, filter);
  }

  private scoreAll(qterms: Map<number, number>, k: number, filter?: (id: number) => boolean): LexicalHit[] {
    const { k1, titleWeight } = this.params;
    const { scores, alive, normBody, normTitle } = this;
    const touched: number[] = [];
    for (const [t, qtf] of qterms) {
      const w = this.weightOf(t, qtf);
      const p = this.post[t];
      const used = this.postUsed[t];
      for (let i = 0; i < used; i += 3) {
        const d = p[i];
        if (alive[d] === 0) continue;
        // The same expression, in the same order, as the from-scratch reference: bit-identical scores.
        const tf = p[i + 1] / normBody[d] + (titleWeight * p[i + 2]) / normTitle[d];
        if (tf <= 0) continue;
        if (scores[d] === 0) touched.push(d);
        scores[d] += (w * tf * (k1 + 1)) / (tf + k1);
      }
    }
    const out = this.selectTop(touched, k, filter);
    for (const d of touched) scores[d] = 0;
    return out;
  }

  /**
   * Distinct terms of a chunk as sorted 32-bit FNV-1a hashes, as the from-scratch reference gives them (for
   * the diversity filter); empty for an unknown id.
   */
  termIds(id: number): Int32Array {
    const slot = this.slotOf(id);
    if (slot === undefined) return EMPTY;
    const start = this.termStart[slot];
    const count = this.termCount[slot];
    const h = new Int32Array(count);
    for (let i = 0; i < count; i++) h[i] = this.termHash[this.pool[start + i]];
    h.sort();
    let w = 0;
    for (let i = 0; i < h.length; i++) if (i === 0 || h[i] !== h[w - 1]) h[w++] = h[i];
    return w === h.length ? h : h.slice(0, w);
  }

  /** The highest chunk id ever added (removed ones included): every id the index holds is at most this; -Infinity when empty. */
  get highestId(): number {
    return this.idCeiling;
  }

  /** Live chunk ids, ascending. */
  ids(): number[] {
    if (!this.idsAscending) return [...this.idIndex().keys()].sort((a, b) => a - b);
    const out: number[] = [];
    for (let s = 0; s < this.slotCount; s++) if (this.alive[s] === 1) out.push(this.slotId[s]);
    return out;
  }

  /** Approximate heap bytes (typed arrays by capacity, plus term strings and maps). */
  get approxBytes(): number {
    if (this.approx < 0) this.approx = this.arrayBytes();
    return this.approx + this.bounds.bytes;
  }

  /** approxBytes less the block maxima: a walk over every term, so kept until the next change. */
  private arrayBytes(): number {
    let bytes = 0;
    for (const p of this.post) bytes += p.byteLength + 64;
    for (const s of this.terms) bytes += s.length * 2 + 48;
    bytes += this.termHash.byteLength + this.df.byteLength + this.postUsed.byteLength;
    bytes += this.slotId.byteLength + this.lenBody.byteLength + this.lenTitle.byteLength + this.alive.byteLength;
    bytes += this.termStart.byteLength + this.termCount.byteLength + this.pool.byteLength;
    bytes += this.normBody.byteLength + this.normTitle.byteLength + this.scores.byteLength;
    bytes += (this.idMap?.size ?? 0) * 40;
    return bytes;
  }

  /**
   * Drops the spare capacity growth left (postings, the term pool, per-term arrays): for an index
   * that is built once and then only searched (a document's), so the cache's byte budget counts
   * what it holds. Later adds grow the arrays again.
   */
  shrinkToFit(): void {
    this.assertNotCompacting();
    this.approx = -1;
    const T = this.terms.length;
    for (let t = 0; t < T; t++) if (this.post[t].length > this.postUsed[t]) this.post[t] = this.post[t].slice(0, Math.max(3, this.postUsed[t]));
    if (this.pool.length > this.poolUsed) this.pool = this.pool.slice(0, Math.max(1, this.poolUsed));
    const cap = Math.max(1, T);
    if (this.termHash.length > cap) {
      this.termHash = this.termHash.slice(0, cap);
      this.df = this.df.slice(0, cap);
      this.postUsed = this.postUsed.slice(0, cap);
    }
  }

  // ---------------------------------------------------------------------------------------------

  private assertNotCompacting(): void {
    if (this.replica) throw toolError('INTERNAL_ERROR', 'A search replica of a lexical index cannot be changed');
    if (this.compacting) throw toolError('INTERNAL_ERROR', 'The lexical index is being compacted; change it after the save');
  }

  private *addSteps(chunks: readonly LexicalChunk[]): Steps<void> {
    for (let i = 0; i < chunks.length; i++) {
      this.assertNotCompacting();
      this.addOne(chunks[i]);
      yield;
    }
  }

  private addOne(chunk: LexicalChunk): void {
    if (!Number.isSafeInteger(chunk.id)) throw toolError('INTERNAL_ERROR', `Chunk id ${String(chunk.id)} is not an integer`);
    this.shared = null;
    this.approx = -1;
    if (chunk.id <= this.idCeiling) {
      if (this.has(chunk.id)) {
        this.removeOne(chunk.id);
        this.maybeCompact();
      }
      // Out of order from here on: the map, built from the slots as they are before this one.
      if (this.idsAscending) {
        this.idIndex();
        this.idsAscending = false;
      }
    }
    // What lexicalDocOf (src/retrieval/search.ts) makes of a chunk: heading path as the title.
    const title = chunk.heading_path.length > 0 ? chunk.heading_path.join(' \n ') : '';
    const titleTokens = title ? this.analyzer.tokenize(title, chunk.language ?? undefined) : [];
    const bodyTokens = this.analyzer.tokenize(chunk.text, chunk.language ?? undefined);
    const slot = this.slotCount;
    this.ensureSlots(slot + 1);
    this.slotCount++;
    const poolStart = this.poolUsed;
    // Title first so a term's posting for this slot is created once, whichever field has it.
    for (const term of titleTokens) this.bump(this.posting(term, slot), 2);
    for (const term of bodyTokens) this.bump(this.posting(term, slot), 1);
    this.slotId[slot] = chunk.id;
    this.lenBody[slot] = bodyTokens.length;
    this.lenTitle[slot] = titleTokens.length;
    this.alive[slot] = 1;
    this.termStart[slot] = poolStart;
    this.termCount[slot] = this.poolUsed - poolStart;
    if (!this.idsAscending) this.idIndex().set(chunk.id, slot);
    if (chunk.id > this.idCeiling) this.idCeiling = chunk.id;
    this.live++;
    this.sumBody += bodyTokens.length;
    this.sumTitle += titleTokens.length;
    this.normsValid = false;
  }

  /** The term's id, its posting for `slot` created (and the term pooled for the slot) if new. */
  private posting(term: string, slot: number): number {
    let t = this.termIndex.get(term);
    if (t === undefined) {
      t = this.terms.length;
      this.ensureTerms(t + 1);
      this.terms.push(term);
      this.termIndex.set(term, t);
      this.termHash[t] = fnv1a(term);
      this.df[t] = 0;
      this.post.push(new Int32Array(3));
      this.postUsed[t] = 0;
    }
    const used = this.postUsed[t];
    let p = this.post[t];
    if (used === 0 || p[used - 3] !== slot) {
      if (used + 3 > p.length) {
        // A multiple of 3 (whole postings), at least one more.
        const next = new Int32Array(Math.max(6, Math.ceil(oversize(p.length) / 3) * 3, used + 3));
        next.set(p.subarray(0, used));
        this.post[t] = p = next;
      }
      p[used] = slot;
      p[used + 1] = 0;
      p[used + 2] = 0;
      this.postUsed[t] = used + 3;
      this.df[t]++;
      if (this.poolUsed === this.pool.length) this.pool = grow(this.pool, this.poolUsed + 1);
      this.pool[this.poolUsed++] = t;
    }
    return t;
  }

  /** Adds one occurrence to the last posting of term t (field 1 body, 2 title). */
  private bump(t: number, field: 1 | 2): void {
    this.post[t][this.postUsed[t] - 3 + field]++;
  }

  private removeOne(id: number): boolean {
    const slot = this.slotOf(id);
    if (slot === undefined) return false;
    this.shared = null;
    this.approx = -1;
    this.idMap?.delete(id);
    this.alive[slot] = 0;
    const start = this.termStart[slot];
    const end = start + this.termCount[slot];
    for (let i = start; i < end; i++) this.df[this.pool[i]]--;
    this.live--;
    this.dead++;
    this.sumBody -= this.lenBody[slot];
    this.sumTitle -= this.lenTitle[slot];
    this.normsValid = false;
    return true;
  }

  private maybeCompact(): void {
    if (this.needsCompaction) this.compact();
  }

  private *compactSteps(): Steps<void> {
    if (this.dead === 0) return;
    this.compacting = true;
    try {
      yield* this.compactInto();
    } finally {
      this.compacting = false;
    }
  }

  private *compactInto(): Steps<void> {
    this.shared = null;
    this.approx = -1;
    const oldCount = this.slotCount;
    const slotMap = new Int32Array(oldCount).fill(-1);
    let next = 0;
    for (let s = 0; s < oldCount; s++) if (this.alive[s] === 1) slotMap[s] = next++;
    // Terms still in use keep their order under new ids.
    const oldTerms = this.terms.length;
    const termMap = new Int32Array(oldTerms).fill(-1);
    const terms: string[] = [];
    const post: Int32Array[] = [];
    const termHash = new Int32Array(Math.max(1024, this.termHash.length));
    const df = new Int32Array(termHash.length);
    const postUsed = new Int32Array(termHash.length);
    const termIndex = new Map<string, number>();
    for (let t = 0; t < oldTerms; t++) {
      if (this.df[t] === 0) continue;
      const nt = terms.length;
      termMap[t] = nt;
      terms.push(this.terms[t]);
      termIndex.set(this.terms[t], nt);
      termHash[nt] = this.termHash[t];
      df[nt] = this.df[t];
      const p = this.post[t];
      const used = this.postUsed[t];
      const q = new Int32Array(this.df[t] * 3);
      let w = 0;
      for (let i = 0; i < used; i += 3) {
        const ns = slotMap[p[i]];
        if (ns < 0) continue;
        q[w] = ns;
        q[w + 1] = p[i + 1];
        q[w + 2] = p[i + 2];
        w += 3;
      }
      post.push(q);
      postUsed[nt] = w;
      if ((t & 1023) === 1023) yield;
    }
    const cap = Math.max(1024, next);
    const slotId = new Float64Array(cap);
    const lenBody = new Int32Array(cap);
    const lenTitle = new Int32Array(cap);
    const alive = new Uint8Array(cap);
    const termStart = new Int32Array(cap);
    const termCount = new Int32Array(cap);
    let poolSize = 0;
    for (let s = 0; s < oldCount; s++) if (slotMap[s] >= 0) poolSize += this.termCount[s];
    const pool = new Int32Array(Math.max(16384, poolSize));
    let pw = 0;
    for (let s = 0; s < oldCount; s++) {
      const ns = slotMap[s];
      if (ns < 0) continue;
      slotId[ns] = this.slotId[s];
      lenBody[ns] = this.lenBody[s];
      lenTitle[ns] = this.lenTitle[s];
      alive[ns] = 1;
      termStart[ns] = pw;
      termCount[ns] = this.termCount[s];
      const start = this.termStart[s];
      for (let i = 0; i < this.termCount[s]; i++) pool[pw++] = termMap[this.pool[start + i]];
    }
    Object.assign(this, {
      terms,
      termIndex,
      termHash,
      df,
      post,
      postUsed,
      slotCount: next,
      slotId,
      lenBody,
      lenTitle,
      alive,
      termStart,
      termCount,
      pool,
      poolUsed: pw,
      // Slots renumbered (in order: ascending ids stay ascending); a map is rebuilt when needed.
      idMap: null,
      dead: 0,
      normBody: new Float32Array(cap),
      normTitle: new Float32Array(cap),
      scores: new Float64Array(cap),
      normsValid: false,
    });
    // Slots and term ids were renumbered.
    this.bounds.reset();
    this.approx = -1;
  }

  private get avgBody(): number {
    return (this.live > 0 ? this.sumBody / this.live : 0) || 1;
  }

  private get avgTitle(): number {
    return (this.live > 0 ? this.sumTitle / this.live : 0) || 1;
  }

  /** The from-scratch norms: Float32 of (1 - b) + b * len / avg, avg over live chunks (or 1 when 0). */
  private computeNorms(): void {
    const p = this.params;
    const { avgBody, avgTitle } = this;
    const { alive, lenBody, lenTitle, normBody, normTitle } = this;
    for (let s = 0; s < this.slotCount; s++) {
      if (alive[s] === 0) continue;
      normBody[s] = 1 - p.b + (p.b * lenBody[s]) / avgBody;
      normTitle[s] = 1 - p.bTitle + (p.bTitle * lenTitle[s]) / avgTitle;
    }
    this.normsValid = true;
  }

  private selectTop(touched: number[], k: number, filter?: (id: number) => boolean): LexicalHit[] {
    const { scores, slotId } = this;
    const limit = Math.min(Math.ceil(k), touched.length);
    // better(a, b): higher score, then lower id.
    const better = (a: number, b: number) => scores[a] > scores[b] || (scores[a] === scores[b] && slotId[a] < slotId[b]);
    // A bounded heap whose root is the worst kept candidate.
    const heap: number[] = [];
    const siftDown = (i: number) => {
      const n = heap.length;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= n) return;
        let w = l;
        if (l + 1 < n && better(heap[w], heap[l + 1])) w = l + 1;
        if (!better(heap[i], heap[w])) return;
        [heap[i], heap[w]] = [heap[w], heap[i]];
        i = w;
      }
    };
    const siftUp = (i: number) => {
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (!better(heap[parent], heap[i])) return;
        [heap[i], heap[parent]] = [heap[parent], heap[i]];
        i = parent;
      }
    };
    for (const d of touched) {
      if (!(scores[d] > 0)) continue;
      if (heap.length === limit && !better(d, heap[0])) continue;
      if (filter && !filter(slotId[d])) continue;
      if (heap.length < limit) {
        heap.push(d);
        siftUp(heap.length - 1);
      } else {
        heap[0] = d;
        siftDown(0);
      }
    }
    heap.sort((a, b) => (better(a, b) ? -1 : better(b, a) ? 1 : 0));
    return heap.map((d) => ({ id: slotId[d], score: scores[d] }));
  }

  private ensureSlots(n: number): void {
    if (n <= this.slotId.length) return;
    const cap = Math.max(n, oversize(this.slotId.length));
    this.slotId = grow(this.slotId, cap);
    this.lenBody = grow(this.lenBody, cap);
    this.lenTitle = grow(this.lenTitle, cap);
    this.alive = grow(this.alive, cap);
    this.termStart = grow(this.termStart, cap);
    this.termCount = grow(this.termCount, cap);
    this.normBody = new Float32Array(cap);
    this.normTitle = new Float32Array(cap);
    this.scores = new Float64Array(cap);
    this.normsValid = false;
  }

  private ensureTerms(n: number): void {
    if (n <= this.termHash.length) return;
    const cap = Math.max(n, oversize(this.termHash.length));
    this.termHash = grow(this.termHash, cap);
    this.df = grow(this.df, cap);
    this.postUsed = grow(this.postUsed, cap);
  }

  // ---- snapshot ----

  /**
   * The index as bytes: 'KBLX', format (u32), header length (u32), a JSON header, then 8-aligned
   * typed-array sections, then a sha256 of everything before it. Compacts first (no tombstones
   * are written).
   */
  serialize(identity?: SnapshotIdentity, opts: SerializeOptions = {}): Buffer {
    return runSync(this.serializeSteps(identity, opts));
  }

  /**
   * serialize in time slices (the copy and the checksum of 100k chunks take a few hundred ms).
   * Searches may run meanwhile; adds and removes fail with INTERNAL_ERROR while it compacts.
   */
  serializeSliced(identity?: SnapshotIdentity, opts: SerializeOptions = {}): Promise<Buffer> {
    return runSliced(this.serializeSteps(identity, opts), { what: 'Saving the index' });
  }

  private *serializeSteps(identity?: SnapshotIdentity, opts: SerializeOptions = {}): Steps<Buffer> {
    const growable = opts.growable !== false;
    yield* this.compactSteps();
    const n = this.slotCount;
    const T = this.terms.length;
    const termBytes = this.terms.map((s) => Buffer.from(s, 'utf8'));
    const termLens = new Int32Array(T);
    let blobLen = 0;
    for (let t = 0; t < T; t++) blobLen += termLens[t] = termBytes[t].length;
    let totalPost = 0;
    let postCapacity = 0;
    for (let t = 0; t < T; t++) {
      totalPost += this.postUsed[t];
      postCapacity += this.postUsed[t] + (growable ? postingRoom(this.postUsed[t]) : 0);
    }
    const poolCapacity = this.poolUsed + (growable ? poolRoom(this.poolUsed) : 0);
    const header = Buffer.from(
      JSON.stringify({
        analyzer: this.analyzer.signature,
        params: this.params,
        slots: n,
        terms: T,
        pool: this.poolUsed,
        postings: totalPost,
        blob: blobLen,
        database_id: identity?.databaseId ?? null,
        ...(growable ? { postings_capacity: postCapacity, pool_capacity: poolCapacity } : {}),
      }),
      'utf8',
    );
    const sections: ArrayBufferView[] = [
      this.slotId.subarray(0, n),
      this.lenBody.subarray(0, n),
      this.lenTitle.subarray(0, n),
      this.termCount.subarray(0, n),
    ];
    const after: ArrayBufferView[] = [termLens, this.postUsed.subarray(0, T)];
    const postViews = this.post.slice(0, T).map((p, t) => p.subarray(0, this.postUsed[t]));
    let size = align8(12 + header.length);
    for (const s of sections) size += align8(s.byteLength);
    size += align8(poolCapacity * 4);
    for (const s of after) size += align8(s.byteLength);
    size += align8(postCapacity * 4);
    size += align8(blobLen);
    // In shared memory, so the index can be reopened over these very bytes for search worker
    // threads (collection-index.ts, after a persist) without another copy.
    const out = Buffer.from(new SharedArrayBuffer(size + CHECKSUM_BYTES));
    out.writeUInt32LE(MAGIC, 0);
    out.writeUInt32LE(growable ? LEXICAL_SNAPSHOT_FORMAT : LEXICAL_SNAPSHOT_FORMAT_FIXED, 4);
    out.writeUInt32LE(header.length, 8);
    header.copy(out, 12);
    let at = align8(12 + header.length);
    const put = (v: ArrayBufferView) => {
      out.set(new Uint8Array(v.buffer, v.byteOffset, v.byteLength), at);
      at += align8(v.byteLength);
    };
    for (const s of sections) put(s);
    // The room after the pool and after each term's postings stays zero (a fresh buffer).
    const pool = this.pool.subarray(0, this.poolUsed);
    out.set(new Uint8Array(pool.buffer, pool.byteOffset, pool.byteLength), at);
    at += align8(poolCapacity * 4);
    for (const s of after) put(s);
    for (let t = 0; t < postViews.length; t++) {
      const v = postViews[t];
      out.set(new Uint8Array(v.buffer, v.byteOffset, v.byteLength), at);
      at += v.byteLength + (growable ? postingRoom(this.postUsed[t]) * 4 : 0);
      if ((t & 1023) === 1023) yield;
    }
    at = align8(at);
    for (const b of termBytes) {
      b.copy(out, at);
      at += b.length;
    }
    at = align8(at);
    const hash = createHash('sha256');
    yield* hashSteps(hash, out.subarray(0, at));
    hash.digest().copy(out, at);
    return out;
  }

  /**
   * The index a snapshot holds; INTERNAL_ERROR naming the fault when it is corrupt or was made by
   * another analyzer or format. The index keeps views into `input` (its postings), so the caller
   * hands the buffer over: it must not be changed afterwards, and the index itself writes into the
   * room a format-2 snapshot leaves as it grows (never into bytes a replica opened on it reads).
   */
  static deserialize(input: Buffer, analyzer: Analyzer, expect?: SnapshotIdentity): CollectionLexicalIndex {
    return runSync(CollectionLexicalIndex.deserializeSteps(input, analyzer, expect));
  }

  /**
   * deserialize in time slices. With `expect`, a snapshot of another database (or of none) is
   * rejected. `verified`: the caller has checked every byte of `input` against a manifest's sha256
   * (index-snapshot.ts readFileVerified), so the trailer checksum is not computed again.
   */
  static deserializeSliced(input: Buffer, analyzer: Analyzer, signal?: AbortSignal, expect?: SnapshotIdentity, opts: { verified?: boolean } = {}): Promise<CollectionLexicalIndex> {
    return runSliced(CollectionLexicalIndex.deserializeSteps(input, analyzer, expect, opts.verified === true), { signal, what: 'Loading the index' });
  }

  /**
   * A search-only copy of the index a shared snapshot holds, for a search worker thread
   * (src/kb/search-worker.ts): every array a view into `input` or sized to it, no id map, changes
   * refused. `input` was verified when the owning index loaded it.
   */
  static openReplica(input: Buffer, analyzer: Analyzer): CollectionLexicalIndex {
    return runSync(CollectionLexicalIndex.deserializeSteps(input, analyzer, undefined, true, true));
  }

  private static *deserializeSteps(input: Buffer, analyzer: Analyzer, expect?: SnapshotIdentity, verified = false, replica = false): Steps<CollectionLexicalIndex> {
    const bad = (why: string) => toolError('INTERNAL_ERROR', `Lexical index snapshot rejected: ${why}`);
    if (input.length < 12 + CHECKSUM_BYTES) throw bad('too short');
    if (input.readUInt32LE(0) !== MAGIC) throw bad('not a lexical index snapshot');
    const format = input.readUInt32LE(4);
    if (format !== LEXICAL_SNAPSHOT_FORMAT && format !== LEXICAL_SNAPSHOT_FORMAT_FIXED) throw bad(`format ${format}, expected ${LEXICAL_SNAPSHOT_FORMAT}`);
    const growable = format === LEXICAL_SNAPSHOT_FORMAT;
    const bodyEnd = input.length - CHECKSUM_BYTES;
    if (!verified) {
      const hash = createHash('sha256');
      yield* hashSteps(hash, input.subarray(0, bodyEnd));
      const digest = hash.digest();
      if (!digest.equals(input.subarray(bodyEnd))) throw bad('checksum mismatch');
    }
    // Typed views need 8-byte alignment: copy when the buffer is a slice of a shared pool.
    const buf = input.byteOffset % 8 === 0 ? input : Buffer.from(input);
    const hlen = buf.readUInt32LE(8);
    let h: {
      analyzer: string;
      params: Bm25Params;
      slots: number;
      terms: number;
      pool: number;
      postings: number;
      blob: number;
      database_id?: string | null;
      postings_capacity?: number;
      pool_capacity?: number;
    };
    try {
      h = JSON.parse(buf.subarray(12, 12 + hlen).toString('utf8'));
    } catch {
      throw bad('unreadable header');
    }
    if (h.analyzer !== analyzer.signature) throw bad(`built by analyzer ${h.analyzer}, not ${analyzer.signature}`);
    if (expect && (h.database_id ?? null) !== expect.databaseId) throw bad(`its chunk ids belong to database ${h.database_id ?? '(none recorded)'}, not ${expect.databaseId ?? '(none)'}`);
    const ab = buf.buffer;
    let at = buf.byteOffset + align8(12 + hlen);
    const end = buf.byteOffset + bodyEnd;
    const take = <A>(Ctor: { new (b: ArrayBufferLike, o: number, n: number): A; BYTES_PER_ELEMENT: number }, count: number): A => {
      const bytes = count * Ctor.BYTES_PER_ELEMENT;
      if (at + bytes > end) throw bad('truncated');
      const v = new Ctor(ab, at, count);
      at += align8(bytes);
      return v;
    };
    const n = h.slots;
    const T = h.terms;
    const slotId = take(Float64Array, n);
    const lenBody = take(Int32Array, n);
    const lenTitle = take(Int32Array, n);
    const termCount = take(Int32Array, n);
    const poolCapacity = growable ? Number(h.pool_capacity) : h.pool;
    const postCapacity = growable ? Number(h.postings_capacity) : h.postings;
    if (!(Number.isInteger(poolCapacity) && poolCapacity >= h.pool && Number.isInteger(postCapacity) && postCapacity >= h.postings)) throw bad('inconsistent capacities');
    const pool = take(Int32Array, poolCapacity);
    const termLens = take(Int32Array, T);
    const postUsed = take(Int32Array, T);
    const postings = take(Int32Array, postCapacity);
    if (at + h.blob > end) throw bad('truncated');
    const blob = buf.subarray(at - buf.byteOffset, at - buf.byteOffset + h.blob);

    const idx = new CollectionLexicalIndex(analyzer, h.params);
    // A replica never grows: its arrays are the snapshot's own views, sized to it.
    const cap = replica ? n : Math.max(1024, n);
    const tcap = replica ? T : Math.max(1024, T);
    const own = <A extends Growable>(fresh: A, view: A): A => (replica ? view : copyInto(fresh, view));
    idx.replica = replica;
    idx.slotCount = n;
    idx.slotId = own(new Float64Array(cap), slotId);
    idx.lenBody = own(new Int32Array(cap), lenBody);
    idx.lenTitle = own(new Int32Array(cap), lenTitle);
    idx.termCount = own(new Int32Array(cap), termCount);
    idx.alive = new Uint8Array(cap).fill(1, 0, n);
    idx.termStart = new Int32Array(cap);
    let ps = 0;
    for (let s = 0; s < n; s++) {
      idx.termStart[s] = ps;
      ps += termCount[s];
    }
    if (ps !== h.pool) throw bad('inconsistent term pool');
    // A view into the snapshot as well (no 4 bytes-per-term-occurrence copy, ~30 MB at 100k
    // chunks), its room included: adds after the load append in place until it is full, then
    // grow() gives the index an array of its own. (Writing into the room leaves the bytes a search
    // worker's replica reads untouched: it never reads past the counts it was opened with.)
    idx.pool = pool;
    idx.poolUsed = h.pool;
    idx.termHash = new Int32Array(tcap);
    idx.df = new Int32Array(tcap);
    idx.postUsed = own(new Int32Array(tcap), postUsed);
    // Each term's postings start as a view into the snapshot itself (no copy: loading 100k chunks
    // stays well under a second), with its room after them: appends land there, and a term that
    // outgrows it gets its own array; a compaction frees it all.
    const block = postings;
    let off = 0;
    let b = 0;
    for (let t = 0; t < T; t++) {
      const used = postUsed[t];
      const capacity = used + (growable && !replica ? postingRoom(used) : 0);
      if (used % 3 !== 0 || off + capacity > block.length) throw bad('inconsistent postings');
      idx.post.push(block.subarray(off, off + capacity));
      idx.df[t] = used / 3;
      off += used + (growable ? postingRoom(used) : 0);
      const term = blob.toString('utf8', b, b + termLens[t]);
      b += termLens[t];
      idx.terms.push(term);
      idx.termIndex.set(term, t);
      idx.termHash[t] = fnv1a(term);
      if ((t & 1023) === 1023) yield;
    }
    // A replica only searches: ids come from slotId, nothing looks a slot up by id.
    // Ascending ids (the usual case) need no id map (slotOf); otherwise it is built at its first use.
    let ascending = true;
    let ceiling = -Infinity;
    for (let s = 0; s < n; s++) {
      const id = slotId[s];
      if (!(id > ceiling)) ascending = false;
      if (id > ceiling) ceiling = id;
    }
    idx.idsAscending = ascending;
    idx.idCeiling = ceiling;
    idx.live = n;
    // Sums from the lengths themselves (exact integers), not trusted from the header.
    for (let s = 0; s < n; s++) {
      idx.sumBody += lenBody[s];
      idx.sumTitle += lenTitle[s];
    }
    idx.normBody = new Float32Array(cap);
    idx.normTitle = new Float32Array(cap);
    idx.scores = new Float64Array(cap);
    // Loaded into shared memory (index-snapshot.ts): worker threads may search these very bytes.
    if (!replica && buf === input && input.buffer instanceof SharedArrayBuffer) idx.shared = input;
    return idx;
  }
}

type Growable = Float64Array | Int32Array | Uint8Array;

function grow<A extends Growable>(a: A, need: number): A {
  const next = new (a.constructor as new (n: number) => A)(Math.max(need, oversize(a.length)));
  next.set(a as never);
  return next;
}

/**
 * The next capacity of a growing array: doubled while small, then an eighth more (still
 * geometric, so appends stay amortized O(1)). Doubling a large array (a common term's postings,
 * the term pool: views into a loaded snapshot, grown at the first add) would allocate and
 * zero-fill twice its size: at 1M chunks a catch-up of a few thousand chunks spent most of its
 * time there and grew RSS by ~200 MB.
 */
export function oversize(length: number): number {
  return length < 65_536 ? Math.max(16, length * 2) : length + (length >> 3);
}

function copyInto<A extends Growable>(dst: A, src: A): A {
  dst.set(src as never);
  return dst;
}

const align8 = (n: number) => (n + 7) & ~7;

/** Feeds `data` to `hash` in 4 MiB pieces, a step each. */
function* hashSteps(hash: ReturnType<typeof createHash>, data: Uint8Array): Steps<void> {
  const piece = 4 << 20;
  for (let i = 0; i < data.length; i += piece) {
    hash.update(data.subarray(i, Math.min(data.length, i + piece)));
    yield;
  }
}

