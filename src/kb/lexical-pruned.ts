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
 */

export const BLOCK = 64;
/** Relative slack on a tf bound: Float32 norms and their Float32 inverses are rounded (2^-24 each), the product too. */
const TF_SLACK = 1 + 1e-6;
/** Relative slack on a score bound compared with a threshold: summation order and division rounding. */
const SCORE_SLACK = 1 + 1e-9;
const DRIFT = 0.05;
/** Slots per window (see prunedTopK). */
export const DEFAULT_WINDOW = 4096;
/** The warm-up list's most postings (see prunedTopK). */
const WARM_MAX = 4096;

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

  /** Heap bytes of the blocks built so far. */
  get bytes(): number {
    return this.total;
  }

  /** Drops every term's blocks (slots or term ids were renumbered). */
  reset(): void {
    this.terms = [];
    this.total = 0;
    this.avgBody0 = 0;
    this.avgTitle0 = 0;
    this.dropInverses();
  }

  private dropInverses(): void {
    this.invBody = new Float32Array(0);
    this.invTitle = new Float32Array(0);
    this.invCovered = 0;
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
      this.total += (cap - this.invBody.length) * 8;
      this.invBody = ib;
      this.invTitle = it;
    }
    const { lenBody, lenTitle, b, bTitle } = src;
    const aB = this.avgBody0;
    const aT = this.avgTitle0;
    const ib = this.invBody;
    const it = this.invTitle;
    // The norms computeNorms would give under the base averages (Float32, as stored), inverted.
    for (let d = this.invCovered; d < upto; d++) {
      ib[d] = 1 / Math.fround(1 - b + (b * lenBody[d]) / aB);
      it[d] = 1 / Math.fround(1 - bTitle + (bTitle * lenTitle[d]) / aT);
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
 * The slots are walked in windows of `window` slots. In each, a term's bound is the largest of
 * its blocks overlapping the window (0 when none does): a window whose bounds sum below the k-th
 * score is skipped whole, and in the others the terms are split, weakest first, into the
 * non-essential ones (together below the k-th score) and the essential ones, whose postings in
 * the window are summed term at a time into per-slot partial sums; each chunk they touched is then
 * taken in slot order, bounded term by term, strongest non-essential first, with the block maximum
 * at that chunk, and scored in full (query-term order, from 0) only while the bound can still
 * reach the top k.
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
  let lastSlot = 0;
  for (let i = 0; i < m; i++) {
    const t = terms[i];
    post.push(src.post[t]);
    used[i] = src.postUsed[t];
    nblocks[i] = Math.ceil(used[i] / 3 / BLOCK);
    blocks.push(bounds.blocksOf(t, src));
    if (used[i] > 0) lastSlot = Math.max(lastSlot, post[i][used[i] - 3]);
  }
  const blockBound = (i: number, b: number) => saturate(weights[i], blocks[i].maxBody[b] * sc.body + titleWeight * blocks[i].maxTitle[b] * sc.title, k1);
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

  const limit = Math.max(1, Math.ceil(k));
  const heapSlot = new Int32Array(limit);
  const heapScore = new Float64Array(limit);
  let size = 0;
  let theta = 0;
  const contrib = new Float64Array(m);
  const seen = new Int32Array(m).fill(-1);
  const upper = new Float64Array(m);
  const order = Array.from({ length: m }, (_, i) => i);
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
  // first). Its chunks are remembered and not offered again by the walk.
  let warmed: Set<number> | null = null;
  let lead = -1;
  let leadUpper = 0;
  for (let i = 0; i < m; i++) {
    const u = saturate(weights[i], blocks[i].topBody * sc.body + titleWeight * blocks[i].topTitle * sc.title, k1);
    if (used[i] / 3 <= WARM_MAX && u > leadUpper) {
      lead = i;
      leadUpper = u;
    }
  }
  if (lead >= 0 && m > 1) {
    warmed = new Set<number>();
    const p = post[lead];
    for (let at = 0; at < used[lead]; at += 3) {
      const d = p[at];
      if (alive[d] === 0) continue;
      warmed.add(d);
      let score = 0;
      for (let i = 0; i < m; i++) {
        seek(i, d);
        const q = post[i];
        const x = pos[i];
        if (x < used[i] && q[x] === d) {
          const tf = q[x + 1] / normBody[d] + (titleWeight * q[x + 2]) / normTitle[d];
          if (tf > 0) score += (weights[i] * tf * (k1 + 1)) / (tf + k1);
        }
      }
      if (score > 0) offer(d, score);
    }
    pos.fill(0);
    blk.fill(0);
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
      for (; b < nb; b++) {
        // Block b starts past the window: it and the later ones are out.
        if (p[b * BLOCK * 3] > we) break;
        const bb = blockBound(i, b);
        if (bb > u) u = bb;
        if (lastOf[b] >= we) break;
      }
      upper[i] = u;
      total += u;
    }
    if (total * SCORE_SLACK < theta || total === 0) continue;
    order.sort((a, b) => upper[a] - upper[b] || a - b);
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
        const tf = p[at + 1] / normBody[d] + (titleWeight * p[at + 2]) / normTitle[d];
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
        // Non-essential terms, strongest first, each first bounded by its block's maximum at d.
        let pruned = false;
        for (let j = ne - 1; j >= 0; j--) {
          const below = j > 0 ? prefix[j - 1] : 0;
          const i = order[j];
          if ((partial + upper[i] + below) * SCORE_SLACK < theta) {
            pruned = true;
            break;
          }
          seek(i, d);
          if (pos[i] === used[i]) continue;
          if ((partial + blockBound(i, blk[i]) + below) * SCORE_SLACK < theta) {
            pruned = true;
            break;
          }
          const p = post[i];
          const at = pos[i];
          if (p[at] === d) {
            const tf = p[at + 1] / normBody[d] + (titleWeight * p[at + 2]) / normTitle[d];
            if (tf > 0) {
              const c = (weights[i] * tf * (k1 + 1)) / (tf + k1);
              contrib[i] = c;
              seen[i] = d;
              partial += c;
            }
          }
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
          } else if (seen[i] === d) score += contrib[i];
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
