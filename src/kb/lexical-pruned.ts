/**
 * Exact top-k for the collection lexical index (src/kb/lexical-index.ts) by MaxScore with block
 * maxima: a chunk is scored in full only when its upper bound can still reach the k-th best score
 * found so far, and a query term whose bound (summed with the weaker terms') cannot lift a chunk
 * into the top k on its own is only probed for the chunks the others bring ("non-essential").
 * The answer is the exhaustive scorer's to the float: a candidate's score is summed in the query's
 * term order with the very expression the exhaustive loop uses, ties break by id ascending, the
 * filter is asked only of chunks that would enter the top k, and tombstones are skipped.
 *
 * Bounds that survive adds and removes: a block of 64 postings keeps, per field, the largest
 * tf / norm computed with the average lengths of its "base" (avgBody0, avgTitle0). A chunk's norm
 * under other averages is bounded from that: with norm = (1 - b) + b * len / avg and 0 <= b < 1,
 * norm0 / norm <= max(1, avg / avg0), so tf / norm <= (tf / norm0) * max(1, avg / avg0). Adds append
 * blocks (the term's tail is extended at its next query), removes only loosen a bound, and the base
 * is reset (all blocks dropped, rebuilt lazily per term) when an average drifts past 5% or the
 * index is compacted. The safety factors cover Float32 norms and summation-order rounding.
 *
 * Per-chunk bounds on the same base: each slot's inverse base norm rounded up to an 8-bit step
 * (steps 1% apart), so that tf * step * max(1, avg / avg0) >= tf / norm. The partial sums that decide
 * which chunks are probed and scored are built from it (a byte per slot read, where the exact
 * expression reads a 4-byte norm from a 4 MB array at random at 1M chunks); a partial sum is
 * thus never below the exact one, and the exact contributions are computed only for chunks that
 * get scored.
 *
 * Not done: skipping ranges of the essential lists where the block maxima of all terms sum below
 * the k-th score (block-max MaxScore / WAND). On chunks of one to three sentences nearly every
 * block of 64 postings holds a short chunk, so a block's maximum is close to its term's: at 1M
 * SciFact chunks 72 of 15,680 64-slot ranges per query could have been skipped, and a per-chunk
 * bound from the block's largest raw tf at the chunk's own norm pruned 2.6k of 19k candidates;
 * both cost more than they saved. Nor a better first threshold, nor two tiers per term: on the same
 * 1M chunks, starting each query with its final k-th score (an oracle) saved 18% (22% at 100k), and
 * splitting each list at its 256th-4096th largest impact (a short list of the high ones, the rest
 * bounded by the split) left 89-95% of the essential postings, as most of a term's postings carry
 * impacts near its maximum on chunks of one to three sentences.
 */

export const BLOCK = 64;
/** Relative slack on a tf bound: Float32 norms and their Float32 inverses are rounded (2^-24 each), the product too. */
const TF_SLACK = 1 + 1e-6;
/** Relative slack on a score bound compared with a threshold: summation order and division rounding. */
const SCORE_SLACK = 1 + 1e-9;
const DRIFT = 0.05;
/** Ratio between consecutive steps of the 8-bit inverse norms (BlockBounds.qBody). */
const GRID_STEP = 1.01;
/** Lengths up to this get their inverse norms from a per-length table (BlockBounds.inverses). */
export const MEMO_LENGTHS = 1 << 16;
/** Slots per window (see prunedTopK). */
export const DEFAULT_WINDOW = 4096;
/**
 * The warm-up list's most postings (see prunedTopK). 4096 before: at 1M chunks a list that long
 * cost more to warm up with than the higher first threshold saved (p50 8% lower with 1024; no
 * change at 100k, where such lists are short anyway).
 */
const WARM_MAX = 1024;

/** Block maxima of one term's postings (postings [0, covered) are described). */
export interface TermBlocks {
  covered: number;
  /** Slot of the block's last posting. */
  lastSlot: Int32Array;
  /** Largest tfBody / normBody0 over the block's live postings. */
  maxBody: Float64Array;
  /** Largest tfTitle / normTitle0 over the block's live postings. */
  maxTitle: Float64Array;
  /** Maxima over all blocks. */
  topBody: number;
  topTitle: number;
}

/** What the pruned search reads of the index (its own arrays; nothing is copied). */
export interface PruneSource {
  post: Int32Array[];
  postUsed: Int32Array;
  alive: Uint8Array;
  lenBody: Int32Array;
  lenTitle: Int32Array;
  normBody: Float32Array;
  normTitle: Float32Array;
  slotId: Float64Array;
  k1: number;
  b: number;
  bTitle: number;
  titleWeight: number;
  /** The current averages, as the norms use them (0 -> 1). */
  avgBody: number;
  avgTitle: number;
}

export interface PrunedHit {
  id: number;
  score: number;
}

const blockBytes = (tb: TermBlocks) => tb.lastSlot.byteLength + tb.maxBody.byteLength + tb.maxTitle.byteLength + 64;

/** Whether the parameters allow the bound above (norms > 0, monotone saturation). */
export function prunable(p: { k1: number; b: number; bTitle: number; titleWeight: number }): boolean {
  return p.k1 >= 0 && p.b >= 0 && p.b < 1 && p.bTitle >= 0 && p.bTitle < 1 && p.titleWeight >= 0;
}

/** The per-term block maxima of one index, valid across adds and removes (see the file comment). */
export class BlockBounds {
  private avgBody0 = 0;
  private avgTitle0 = 0;
  private terms: Array<TermBlocks | undefined> = [];
  /** Heap bytes of the blocks, kept as they are built (the registry asks at every search). */
  private total = 0;
  /**
   * 1 / norm under the base averages, per slot, for slots [0, invCovered): building a block then
   * multiplies instead of computing two norms and dividing for every posting (28 ns a posting
   * before, 793 ms for all 28M postings of a 1M-chunk index, which each search worker paid
   * again over its first few hundred queries). A slot's lengths never change once added, and
   * slots are only appended (compaction renumbers them and resets this).
   */
  private invBody = new Float32Array(0);
  private invTitle = new Float32Array(0);
  private invCovered = 0;
  /**
   * Per slot, the index in `grid` of the smallest step >= invBody: an 8-bit rounded-up inverse
   * norm. The essential lists' partial sums (bounds only) read it instead of the norm: at 1M
   * chunks the Float32 norms are 4 MB read at random, and those loads were two thirds of the
   * essential walk; a byte per slot keeps a window's worth (4 KB) in cache.
   */
  private qBody = new Uint8Array(0);
  /** Geometric steps (1% apart) up to 1 / (1 - b) and a little over; the last is Infinity (never reached). */
  private grid = new Float64Array(0);
  /** Scratch for prunedTopK's per-query block bounds (searches are synchronous: one at a time). */
  private bbScratch = new Float64Array(0);

  /** Heap bytes of the blocks built so far. */
  get bytes(): number {
    return this.total;
  }

  /** A scratch array of at least n values (its contents are left over from an earlier query). */
  scratch(n: number): Float64Array {
    if (this.bbScratch.length < n) {
      const cap = Math.max(n, this.bbScratch.length * 2);
      this.total += (cap - this.bbScratch.length) * 8;
      this.bbScratch = new Float64Array(cap);
    }
    return this.bbScratch;
  }

  /** Drops every term's blocks (slots or term ids were renumbered). */
  reset(): void {
    this.terms = [];
    this.total = 0;
    this.avgBody0 = 0;
    this.avgTitle0 = 0;
    this.dropInverses();
  }

  /** Drops the per-slot arrays and the scratch (their bytes were just zeroed from `total`). */
  private dropInverses(): void {
    this.invBody = new Float32Array(0);
    this.invTitle = new Float32Array(0);
    this.qBody = new Uint8Array(0);
    this.invCovered = 0;
    this.bbScratch = new Float64Array(0);
  }

  /** Rounded-up inverse base norms per slot and their steps (see qBody); valid for the slots of every term blocksOf was asked for. */
  quantized(): { q: Uint8Array; grid: Float64Array } {
    return { q: this.qBody, grid: this.grid };
  }

  /** Inverse base norms for slots below `upto` (see invBody). */
  private inverses(src: PruneSource, upto: number): void {
    if (upto <= this.invCovered) return;
    if (upto > this.invBody.length) {
      const cap = Math.max(upto, Math.min(src.lenBody.length, this.invBody.length * 2));
      const ib = new Float32Array(cap);
      ib.set(this.invBody.subarray(0, this.invCovered));
      const it = new Float32Array(cap);
      it.set(this.invTitle.subarray(0, this.invCovered));
      const qb = new Uint8Array(cap);
      qb.set(this.qBody.subarray(0, this.invCovered));
      this.total += (cap - this.invBody.length) * 9;
      this.invBody = ib;
      this.invTitle = it;
      this.qBody = qb;
    }
    if (this.grid.length === 0) {
      // 1 / norm <= 1 / fround(1 - b) (lengths >= 0); the top step is above it by more than Float32 rounding.
      const g = new Float64Array(256);
      const top = (1 / (1 - src.b)) * (1 + 1e-6);
      for (let q = 0; q < 255; q++) g[q] = top * Math.pow(GRID_STEP, q - 254);
      g[255] = Infinity;
      this.grid = g;
    }
    const { lenBody, lenTitle, b, bTitle } = src;
    const aB = this.avgBody0;
    const aT = this.avgTitle0;
    const ib = this.invBody;
    const it = this.invTitle;
    // The norms computeNorms would give under the base averages (Float32, as stored), inverted.
    const invBodyOf = (len: number) => 1 / Math.fround(1 - b + (b * len) / aB);
    const invTitleOf = (len: number) => 1 / Math.fround(1 - bTitle + (bTitle * len) / aT);
    const g = this.grid;
    const qb = this.qBody;
    const top = g[254];
    const perStep = 1 / Math.log(GRID_STEP);
    /** The first step >= inv (the logarithm only guesses; the comparisons decide). */
    const stepOf = (inv: number) => {
      let q = inv > top ? 255 : Math.max(0, Math.min(254, 254 + Math.ceil(Math.log(inv / top) * perStep)));
      while (g[q] < inv) q++;
      while (q > 0 && g[q - 1] >= inv) q--;
      return q;
    };
    const from = this.invCovered;
    let maxBody = 0;
    let maxTitle = 0;
    for (let d = from; d < upto; d++) {
      if (lenBody[d] > maxBody) maxBody = lenBody[d];
      if (lenTitle[d] > maxTitle) maxTitle = lenTitle[d];
    }
    if (maxBody <= MEMO_LENGTHS && maxTitle <= MEMO_LENGTHS && upto - from > maxBody + maxTitle) {
      // Chunks share a few hundred lengths: each length's values once, then a lookup per slot (a
      // logarithm and two divisions per slot were 43 ms of the first search after loading 1M
      // chunks). The same expressions, so the same values.
      const invB = new Float64Array(maxBody + 1);
      const stepB = new Uint8Array(maxBody + 1);
      const invT = new Float64Array(maxTitle + 1);
      for (let len = 0; len <= maxBody; len++) stepB[len] = stepOf((invB[len] = invBodyOf(len)));
      for (let len = 0; len <= maxTitle; len++) invT[len] = invTitleOf(len);
      for (let d = from; d < upto; d++) {
        const len = lenBody[d];
        ib[d] = invB[len];
        qb[d] = stepB[len];
        it[d] = invT[lenTitle[d]];
      }
    } else {
      for (let d = from; d < upto; d++) {
        const inv = (ib[d] = invBodyOf(lenBody[d]));
        it[d] = invTitleOf(lenTitle[d]);
        qb[d] = stepOf(inv);
      }
    }
    this.invCovered = upto;
  }

  /** Rebases (drops every term's blocks) when the averages drifted from the base; before blocksOf and scales. */
  prepare(src: PruneSource): void {
    if (this.avgBody0 === 0 || drifted(src.avgBody, this.avgBody0) || drifted(src.avgTitle, this.avgTitle0)) {
      this.terms = [];
      this.total = 0;
      this.dropInverses();
      this.avgBody0 = src.avgBody;
      this.avgTitle0 = src.avgTitle;
    }
  }

  /** Blocks of term t covering all its postings now (after prepare). */
  blocksOf(t: number, src: PruneSource): TermBlocks {
    const n = src.postUsed[t] / 3;
    let tb = this.terms[t];
    if (tb === undefined || tb.covered > n) {
      if (tb) this.total -= blockBytes(tb);
      tb = this.terms[t] = { covered: 0, lastSlot: new Int32Array(0), maxBody: new Float64Array(0), maxTitle: new Float64Array(0), topBody: 0, topTitle: 0 };
      this.total += blockBytes(tb);
    }
    if (tb.covered < n) this.extend(tb, src.post[t], n, src);
    return tb;
  }

  /** Scale factors from base norms to the current ones (>= 1), slack included. */
  scales(src: PruneSource): { body: number; title: number } {
    return { body: Math.max(1, src.avgBody / this.avgBody0) * TF_SLACK, title: Math.max(1, src.avgTitle / this.avgTitle0) * TF_SLACK };
  }

  private extend(tb: TermBlocks, p: Int32Array, n: number, src: PruneSource): void {
    const nb = Math.ceil(n / BLOCK);
    const from = Math.floor(tb.covered / BLOCK); // the last, partial block is redone whole
    if (nb > tb.lastSlot.length) {
      const cap = Math.max(nb, tb.lastSlot.length * 2);
      const ls = new Int32Array(cap);
      ls.set(tb.lastSlot);
      const mb = new Float64Array(cap);
      mb.set(tb.maxBody);
      const mt = new Float64Array(cap);
      mt.set(tb.maxTitle);
      this.total -= blockBytes(tb);
      tb.lastSlot = ls;
      tb.maxBody = mb;
      tb.maxTitle = mt;
      this.total += blockBytes(tb);
    }
    // Postings are in slot order: the last one has the highest slot.
    this.inverses(src, p[(n - 1) * 3] + 1);
    const { alive } = src;
    const ib = this.invBody;
    const it = this.invTitle;
    for (let blk = from; blk < nb; blk++) {
      const end = Math.min(n, (blk + 1) * BLOCK) * 3;
      let mB = 0;
      let mT = 0;
      for (let i = blk * BLOCK * 3; i < end; i += 3) {
        const d = p[i];
        if (alive[d] === 0) continue;
        const rb = p[i + 1] * ib[d];
        const rt = p[i + 2] * it[d];
        if (rb > mB) mB = rb;
        if (rt > mT) mT = rt;
      }
      tb.lastSlot[blk] = p[end - 3];
      tb.maxBody[blk] = mB;
      tb.maxTitle[blk] = mT;
    }
    let topB = 0;
    let topT = 0;
    for (let blk = 0; blk < nb; blk++) {
      if (tb.maxBody[blk] > topB) topB = tb.maxBody[blk];
      if (tb.maxTitle[blk] > topT) topT = tb.maxTitle[blk];
    }
    tb.topBody = topB;
    tb.topTitle = topT;
    tb.covered = n;
  }
}

function drifted(now: number, base: number): boolean {
  return now > base * (1 + DRIFT) || now < base * (1 - DRIFT);
}

/**
 * Top k (score > 0, best first, ties by id ascending) over query terms `terms` (distinct, in the
 * order the exhaustive scorer adds them) with weights `weights` (idf * query tf).
 *
 * First a warm-up scores the chunks of the strongest list of at most WARM_MAX postings, terms
 * strongest first, giving a chunk up as soon as its bound falls below the k-th score. Then the
 * slots are walked in windows of `window` slots. In each, a term's bound is the largest of its
 * blocks overlapping the window (0 when none does): a window whose bounds sum below the k-th
 * score is skipped whole, and in the others the terms are split, weakest first, into the
 * non-essential ones (together below the k-th score) and the essential ones, whose postings in
 * the window are summed term at a time into per-slot partial sums (bounds, from the 8-bit inverse
 * norms); each chunk they touched is then taken in slot order, bounded term by term, strongest
 * non-essential first, with the block maximum at that chunk, and scored in full (query-term
 * order, from 0, the exact expression) only while the bound can still reach the top k.
 */
export function prunedTopK(src: PruneSource, bounds: BlockBounds, terms: readonly number[], weights: readonly number[], k: number, filter?: (id: number) => boolean, window = DEFAULT_WINDOW): PrunedHit[] {
  const m = terms.length;
  const { k1, titleWeight, alive, normBody, normTitle, slotId } = src;
  bounds.prepare(src);
  const sc = bounds.scales(src);
  const post: Int32Array[] = [];
  const used = new Int32Array(m);
  const nblocks = new Int32Array(m);
  const pos = new Int32Array(m);
  const blk = new Int32Array(m);
  const blocks: TermBlocks[] = [];
  /** Term i's block b's score bound is bb[bbAt[i] + b]. */
  const bbAt = new Int32Array(m);
  let lastSlot = 0;
  let allBlocks = 0;
  for (let i = 0; i < m; i++) {
    const t = terms[i];
    post.push(src.post[t]);
    used[i] = src.postUsed[t];
    nblocks[i] = Math.ceil(used[i] / 3 / BLOCK);
    blocks.push(bounds.blocksOf(t, src));
    if (used[i] > 0) lastSlot = Math.max(lastSlot, post[i][used[i] - 3]);
    bbAt[i] = allBlocks;
    allBlocks += nblocks[i];
  }
  // Every block's score bound, saturated once per query: the window bounds visit each block at
  // least once and the warm-up asks one per probe; computing them there (a division and five
  // loads each, and then also per non-essential probe) was a fifth of a 1M-chunk query.
  const bb = bounds.scratch(allBlocks);
  const { q: qBody, grid } = bounds.quantized();
  const scBody = sc.body;
  for (let i = 0; i < m; i++) {
    const { maxBody, maxTitle } = blocks[i];
    const w = weights[i];
    const at = bbAt[i];
    for (let b = 0; b < nblocks[i]; b++) bb[at + b] = saturate(w, maxBody[b] * sc.body + titleWeight * maxTitle[b] * sc.title, k1);
  }
  /** Moves term i's block and posting cursors to its first posting at or after `target`. */
  const seek = (i: number, target: number) => {
    const lastOf = blocks[i].lastSlot;
    const nb = nblocks[i];
    let b = blk[i];
    while (b < nb && lastOf[b] < target) b++;
    blk[i] = b;
    if (b === nb) {
      pos[i] = used[i];
      return;
    }
    const p = post[i];
    let at = Math.max(pos[i], b * BLOCK * 3);
    while (p[at] < target) at += 3; // the block's last slot is >= target: stops inside it
    pos[i] = at;
  };
  /**
   * Term i's contribution at slot d, bounded with the 8-bit inverse norm (see the essential walk),
   * when its cursor (after seek(i, d), not past its end) is on d's posting, else 0; a chunk that
   * gets scored has its exact contribution computed then, from the same cursor.
   */
  const boundedAt = (i: number, d: number): number => {
    const p = post[i];
    const at = pos[i];
    if (p[at] !== d) return 0;
    const tt = p[at + 2];
    const tbody = p[at + 1] * grid[qBody[d]] * scBody;
    const tf = tt === 0 ? tbody : tbody + (titleWeight * tt) / normTitle[d];
    if (!(tf > 0)) return 0;
    seen[i] = d;
    return (weights[i] * tf * (k1 + 1)) / (tf + k1);
  };

  const limit = Math.max(1, Math.ceil(k));
  const heapSlot = new Int32Array(limit);
  const heapScore = new Float64Array(limit);
  let size = 0;
  let theta = 0;
  const seen = new Int32Array(m).fill(-1);
  const upper = new Float64Array(m);
  const order = Int32Array.from({ length: m }, (_, i) => i);
  const prefix = new Float64Array(m);
  // Window scratch: partial sums and touched bits per slot of the window; essential flags and the
  // exact pass's cursors per term.
  const windowSum = new Float64Array(window);
  const words = Math.ceil(window / 32);
  const touched = new Int32Array(words);
  const essential = new Uint8Array(m);
  const start = new Int32Array(m);
  // worse(i, j): heap entry i ranks below entry j (lower score, or equal score and higher id).
  const worse = (si: number, ii: number, sj: number, ij: number) => si < sj || (si === sj && slotId[ii] > slotId[ij]);

  /** Puts slot d with its exact score in the top k if it ranks there (and passes the filter); true when theta rose. */
  const offer = (d: number, score: number): boolean => {
    if (size === limit && !worse(heapScore[0], heapSlot[0], score, d)) return false;
    if (filter && !filter(slotId[d])) return false;
    if (size < limit) {
      // Sift up: the root is the worst kept.
      let c = size++;
      while (c > 0) {
        const parent = (c - 1) >> 1;
        if (!worse(score, d, heapScore[parent], heapSlot[parent])) break;
        heapSlot[c] = heapSlot[parent];
        heapScore[c] = heapScore[parent];
        c = parent;
      }
      heapSlot[c] = d;
      heapScore[c] = score;
    } else {
      let c = 0;
      for (;;) {
        const l = 2 * c + 1;
        if (l >= size) break;
        let w = l;
        if (l + 1 < size && worse(heapScore[l + 1], heapSlot[l + 1], heapScore[l], heapSlot[l])) w = l + 1;
        if (!worse(heapScore[w], heapSlot[w], score, d)) break;
        heapSlot[c] = heapSlot[w];
        heapScore[c] = heapScore[w];
        c = w;
      }
      heapSlot[c] = d;
      heapScore[c] = score;
    }
    if (size < limit) return false;
    theta = heapScore[0];
    return true;
  };

  // Warm-up: the chunks of the strongest short list, scored in full first, so the k-th score is
  // high from the first window on (a walk from slot 0 would fill the top k with whatever comes
  // first). Its chunks are remembered and not offered again by the walk: those scored, and those
  // given up on once the top k is full, as their bound fell below the k-th score (theta only rises).
  let warmed: Set<number> | null = null;
  let lead = -1;
  let leadUpper = 0;
  const top = new Float64Array(m);
  for (let i = 0; i < m; i++) {
    const u = (top[i] = saturate(weights[i], blocks[i].topBody * sc.body + titleWeight * blocks[i].topTitle * sc.title, k1));
    if (used[i] / 3 <= WARM_MAX && u > leadUpper) {
      lead = i;
      leadUpper = u;
    }
  }
  if (lead >= 0 && m > 1) {
    warmed = new Set<number>();
    // Terms strongest first, and what the ones after each can add at most: a chunk is given up on
    // as soon as its exact part plus that cannot reach theta, before the weak, long lists (whose
    // seeks cost the most) are looked at; the block bound is asked before a posting is sought.
    const strong = Array.from({ length: m }, (_, i) => i).sort((a, b) => top[b] - top[a] || a - b);
    const after = new Float64Array(m + 1);
    for (let j = m - 1; j >= 0; j--) after[j] = (after[j + 1] + top[strong[j]]) * SCORE_SLACK;
    const p = post[lead];
    for (let at = 0; at < used[lead]; at += 3) {
      const d = p[at];
      if (alive[d] === 0) continue;
      warmed.add(d);
      let acc = 0;
      let gaveUp = false;
      for (let j = 0; j < m; j++) {
        const i = strong[j];
        if (size === limit && (acc + after[j]) * SCORE_SLACK < theta) {
          gaveUp = true;
          break;
        }
        const lastOf = blocks[i].lastSlot;
        const nb = nblocks[i];
        let b = blk[i];
        while (b < nb && lastOf[b] < d) b++;
        blk[i] = b;
        if (b === nb) continue;
        if (size === limit && (acc + bb[bbAt[i] + b] + after[j + 1]) * SCORE_SLACK < theta) {
          gaveUp = true;
          break;
        }
        seek(i, d); // its block is b: only the postings move
        acc += boundedAt(i, d); // a bound; exact below if d is kept
      }
      if (gaveUp) continue;
      // The exact score: the contributions in query-term order (each term's cursor is still on
      // its posting at d), summed from 0 as the exhaustive scorer does.
      let score = 0;
      for (let i = 0; i < m; i++) {
        if (seen[i] !== d) continue;
        const q = post[i];
        const x = pos[i];
        const tf = q[x + 1] / normBody[d] + (titleWeight * q[x + 2]) / normTitle[d];
        if (tf > 0) score += (weights[i] * tf * (k1 + 1)) / (tf + k1);
      }
      if (score > 0) offer(d, score);
    }
    pos.fill(0);
    blk.fill(0);
    seen.fill(-1);
  }

  for (let ws = 0; ws <= lastSlot; ws += window) {
    const we = ws + window - 1;
    // Each term's bound over the window: its blocks from the one holding slot ws up to the first ending past we.
    let total = 0;
    for (let i = 0; i < m; i++) {
      const lastOf = blocks[i].lastSlot;
      const nb = nblocks[i];
      let b = blk[i];
      while (b < nb && lastOf[b] < ws) b++;
      blk[i] = b;
      let u = 0;
      const p = post[i];
      const at = bbAt[i];
      for (; b < nb; b++) {
        // Block b starts past the window: it and the later ones are out.
        if (p[b * BLOCK * 3] > we) break;
        const x = bb[at + b];
        if (x > u) u = x;
        if (lastOf[b] >= we) break;
      }
      upper[i] = u;
      total += u;
    }
    if (total * SCORE_SLACK < theta || total === 0) continue;
    // By bound, then term index; insertion sort, as the order barely changes from window to window.
    for (let j = 1; j < m; j++) {
      const x = order[j];
      const ux = upper[x];
      let h = j - 1;
      while (h >= 0 && (upper[order[h]] > ux || (upper[order[h]] === ux && order[h] > x))) {
        order[h + 1] = order[h];
        h--;
      }
      order[h + 1] = x;
    }
    let acc = 0;
    for (let j = 0; j < m; j++) prefix[j] = acc = (acc + upper[order[j]]) * SCORE_SLACK;
    /** order[0..ne) are non-essential in this window: together they cannot reach theta. */
    let ne = 0;
    while (ne < m && prefix[ne] < theta) ne++;
    const neBound = ne > 0 ? prefix[ne - 1] : 0;

    // The essential terms' postings in the window, term at a time: each live chunk's partial sum
    // (for bounds only) and a bit saying it was touched. Lucene's MaxScore bulk scorer does the
    // same; walking the lists in slot order instead costs a look at every essential list per
    // candidate, which is what made queries of 15+ terms slower than scoring everything.
    for (let j = ne; j < m; j++) {
      const i = order[j];
      essential[i] = 1;
      seek(i, ws);
      start[i] = pos[i];
      const p = post[i];
      const w = weights[i];
      const end = used[i];
      let at = pos[i];
      for (; at < end; at += 3) {
        const d = p[at];
        if (d > we) break;
        if (alive[d] === 0) continue;
        // An upper bound of the exhaustive expression's tf: the body part from the 8-bit inverse
        // norm (rounded up, scaled from the base averages as the block maxima are), the title part
        // exact and only read when the title has the term.
        const tt = p[at + 2];
        const tbody = p[at + 1] * grid[qBody[d]] * scBody;
        const tf = tt === 0 ? tbody : tbody + (titleWeight * tt) / normTitle[d];
        if (tf > 0) {
          const off = d - ws;
          windowSum[off] += (w * tf * (k1 + 1)) / (tf + k1);
          touched[off >> 5] |= 1 << (off & 31);
        }
      }
      pos[i] = at;
    }

    // The touched chunks in slot order: bounded with the non-essential terms, scored exactly when
    // the bound can still reach the top k.
    for (let word = 0; word < words; word++) {
      let bitsLeft = touched[word];
      if (bitsLeft === 0) continue;
      touched[word] = 0;
      while (bitsLeft !== 0) {
        const low = bitsLeft & -bitsLeft;
        bitsLeft ^= low;
        const off = (word << 5) | (31 - Math.clz32(low));
        let partial = windowSum[off];
        windowSum[off] = 0;
        if ((partial + neBound) * SCORE_SLACK < theta) continue;
        const d = ws + off;
        // Non-essential terms, strongest first, each bounded by its window maximum, then probed.
        let pruned = false;
        for (let j = ne - 1; j >= 0; j--) {
          const below = j > 0 ? prefix[j - 1] : 0;
          const i = order[j];
          if ((partial + upper[i] + below) * SCORE_SLACK < theta) {
            pruned = true;
            break;
          }
          // The block holding d (or the next one), then the posting. Its block's bound is not
          // asked: at 1M SciFact chunks it ruled out 1.2k of the 20k candidates that got here
          // (a block's maximum is near its window's), and asking it cost more than it saved.
          seek(i, d);
          if (pos[i] === used[i]) continue;
          // Its bound, as in the essential walk; the exact contribution only if d gets scored
          // (the cursor stays on this posting till then).
          partial += boundedAt(i, d);
        }
        if (pruned) continue;
        if (warmed !== null && warmed.has(d)) continue; // offered once already
        // The exact score: every term's contribution, the exhaustive loop's expression operand for
        // operand, summed in query-term order from 0 as the exhaustive scorer sums them.
        let score = 0;
        for (let i = 0; i < m; i++) {
          if (essential[i] === 1) {
            const p = post[i];
            const end = used[i];
            let at = start[i];
            while (at < end && p[at] < d) at += 3;
            start[i] = at;
            if (at < end && p[at] === d) {
              const tf = p[at + 1] / normBody[d] + (titleWeight * p[at + 2]) / normTitle[d];
              if (tf > 0) score += (weights[i] * tf * (k1 + 1)) / (tf + k1);
            }
          } else if (seen[i] === d) {
            const p = post[i];
            const at = pos[i];
            const tf = p[at + 1] / normBody[d] + (titleWeight * p[at + 2]) / normTitle[d];
            if (tf > 0) score += (weights[i] * tf * (k1 + 1)) / (tf + k1);
          }
        }
        if (score > 0) offer(d, score);
      }
    }
    for (let j = ne; j < m; j++) essential[order[j]] = 0;
  }
  const out: PrunedHit[] = [];
  for (let i = 0; i < size; i++) out.push({ id: slotId[heapSlot[i]], score: heapScore[i] });
  out.sort((a, b) => b.score - a.score || a.id - b.id);
  return out;
}

/** BM25's saturation of a tf bound, the exhaustive expression's shape, slack added. */
function saturate(w: number, tf: number, k1: number): number {
  if (!(tf > 0)) return 0;
  return ((w * tf * (k1 + 1)) / (tf + k1)) * SCORE_SLACK;
}
