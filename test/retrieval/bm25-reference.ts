/**
 * The reference BM25F the server's one lexical index (src/kb/lexical-index.ts) is checked against:
 * built from scratch over a list of documents, immutable, the plain textbook reading of the
 * formula (Robertson & Zaragoza's BM25F over a title and a body field, Lucene's idf). It was the
 * per-document engine's index until retrieve_chunks moved onto the collection engine; it lives on
 * in test/ only as the oracle that the mutable index scores bit-identically.
 */
import type { Analyzer } from '../../src/retrieval/tokenizer.ts';
import { runSliced, runSync, type Steps } from '../../src/util/slices.ts';
import { DEFAULT_BM25_PARAMS, fnv1a, type Bm25Params, type LexicalDoc, type ScoredIndex } from '../../src/retrieval/bm25.ts';

interface Postings {
  docs: Int32Array;
  tfBody: Float32Array;
  tfTitle: Float32Array;
}

export class Bm25Index {
  readonly size: number;
  readonly params: Readonly<Bm25Params>;
  readonly analyzer: Analyzer;
  private readonly postings: Map<string, Postings>;
  private readonly normBody: Float32Array;
  private readonly normTitle: Float32Array;
  private readonly scratch: Float64Array;
  private readonly docTermIds: Int32Array[];
  private readonly bytes: number;

  private constructor(
    analyzer: Analyzer,
    params: Bm25Params,
    size: number,
    postings: Map<string, Postings>,
    normBody: Float32Array,
    normTitle: Float32Array,
    docTermIds: Int32Array[],
    bytes: number,
  ) {
    this.docTermIds = docTermIds;
    this.analyzer = analyzer;
    this.params = Object.freeze({ ...params });
    this.size = size;
    this.postings = postings;
    this.normBody = normBody;
    this.normTitle = normTitle;
    this.scratch = new Float64Array(size);
    this.bytes = bytes;
  }

  static build(docs: readonly LexicalDoc[], analyzer: Analyzer, params: Partial<Bm25Params> = {}): Bm25Index {
    return runSync(Bm25Index.buildSteps(docs, analyzer, params));
  }

  /** build in time slices, stopping with the coded abort error when `signal` fires. */
  static buildSliced(docs: readonly LexicalDoc[], analyzer: Analyzer, params: Partial<Bm25Params> = {}, signal?: AbortSignal): Promise<Bm25Index> {
    return runSliced(Bm25Index.buildSteps(docs, analyzer, params), { signal, what: 'Indexing' });
  }

  private static *buildSteps(docs: readonly LexicalDoc[], analyzer: Analyzer, params: Partial<Bm25Params>): Steps<Bm25Index> {
    const p: Bm25Params = { ...DEFAULT_BM25_PARAMS, ...params };
    const n = docs.length;
    const lenBody = new Float32Array(n);
    const lenTitle = new Float32Array(n);
    // term -> growable posting columns
    const cols = new Map<string, Column>();
    const docTermIds: Int32Array[] = new Array(n);
    // Columns of the current document, each once (a term's posting for it is created once).
    let seen: Column[] = [];
    const column = (term: string, doc: number): Column => {
      let c = cols.get(term);
      if (!c) {
        c = { hash: fnv1a(term), docs: [], body: [], title: [] };
        cols.set(term, c);
      }
      if (c.docs.length === 0 || c.docs[c.docs.length - 1] !== doc) {
        c.docs.push(doc);
        c.body.push(0);
        c.title.push(0);
        seen.push(c);
      }
      return c;
    };
    for (let d = 0; d < n; d++) {
      const doc = docs[d];
      // Title first so that a term's posting for this doc is created once, whichever field has it.
      const titleTokens = doc.title ? analyzer.tokenize(doc.title) : [];
      const bodyTokens = analyzer.tokenize(doc.body);
      lenTitle[d] = titleTokens.length;
      lenBody[d] = bodyTokens.length;
      for (const t of titleTokens) {
        const c = column(t, d);
        c.title[c.title.length - 1]++;
      }
      for (const t of bodyTokens) {
        const c = column(t, d);
        c.body[c.body.length - 1]++;
      }
      docTermIds[d] = distinctSorted(seen);
      seen = [];
      yield;
    }
    const avgBody = mean(lenBody) || 1;
    const avgTitle = mean(lenTitle) || 1;
    const normBody = new Float32Array(n);
    const normTitle = new Float32Array(n);
    for (let d = 0; d < n; d++) {
      normBody[d] = 1 - p.b + (p.b * lenBody[d]) / avgBody;
      normTitle[d] = 1 - p.bTitle + (p.bTitle * lenTitle[d]) / avgTitle;
    }
    const postings = new Map<string, Postings>();
    let bytes = n * 8 * 3;
    for (const t of docTermIds) bytes += t.byteLength + 48;
    let built = 0;
    for (const [term, c] of cols) {
      if (++built % 1024 === 0) yield;
      postings.set(term, {
        docs: Int32Array.from(c.docs),
        tfBody: Float32Array.from(c.body),
        tfTitle: Float32Array.from(c.title),
      });
      bytes += c.docs.length * 12 + term.length * 2 + 64;
    }
    return new Bm25Index(analyzer, p, n, postings, normBody, normTitle, docTermIds, bytes);
  }

  /** Approximate heap bytes, for cache accounting. */
  get approxBytes(): number {
    return this.bytes;
  }

  get vocabularySize(): number {
    return this.postings.size;
  }

  /**
   * Distinct terms of a document as sorted 32-bit hashes (for the diversity filter's overlap
   * measure). Hashes rather than vocabulary ids so documents of different indexes compare.
   */
  termIds(index: number): Int32Array {
    return this.docTermIds[index];
  }

  /** Analyzed query terms with their query frequency; terms absent from the index are dropped. */
  queryTerms(query: string): Map<string, number> {
    const out = new Map<string, number>();
    for (const t of this.analyzer.tokenize(query)) {
      if (this.postings.has(t)) out.set(t, (out.get(t) ?? 0) + 1);
    }
    return out;
  }

  /** Top k documents by BM25F score (score > 0 only), best first; ties by index. */
  search(query: string, k: number): ScoredIndex[] {
    const terms = this.queryTerms(query);
    if (terms.size === 0 || k <= 0) return [];
    const { k1, titleWeight } = this.params;
    const scores = this.scratch;
    scores.fill(0);
    const touched: number[] = [];
    for (const [term, qtf] of terms) {
      const post = this.postings.get(term)!;
      const df = post.docs.length;
      const idf = Math.log(1 + (this.size - df + 0.5) / (df + 0.5));
      const w = idf * qtf;
      for (let i = 0; i < df; i++) {
        const d = post.docs[i];
        const tf = post.tfBody[i] / this.normBody[d] + (titleWeight * post.tfTitle[i]) / this.normTitle[d];
        if (tf <= 0) continue;
        if (scores[d] === 0) touched.push(d);
        scores[d] += (w * tf * (k1 + 1)) / (tf + k1);
      }
    }
    return topK(touched, scores, k);
  }
}

interface Column {
  hash: number;
  docs: number[];
  body: number[];
  title: number[];
}

/** The columns' term hashes, sorted, each once (two terms may share a hash). */
function distinctSorted(cs: readonly Column[]): Int32Array {
  const h = new Int32Array(cs.length);
  for (let i = 0; i < cs.length; i++) h[i] = cs[i].hash;
  h.sort();
  let w = 0;
  for (let i = 0; i < h.length; i++) if (i === 0 || h[i] !== h[w - 1]) h[w++] = h[i];
  return w === h.length ? h : h.slice(0, w);
}

function mean(a: Float32Array): number {
  if (a.length === 0) return 0;
  let s = 0;
  for (const v of a) s += v;
  return s / a.length;
}

function topK(candidates: number[], scores: Float64Array, k: number): ScoredIndex[] {
  const sorted = candidates.filter((d) => scores[d] > 0);
  sorted.sort((a, b) => scores[b] - scores[a] || a - b);
  const out: ScoredIndex[] = [];
  for (let i = 0; i < Math.min(k, sorted.length); i++) out.push({ index: sorted[i], score: scores[sorted[i]] });
  return out;
}
