/**
 * The evaluation harness: runs the production ranking core (analyzer, BM25F, fusion, rerank,
 * diversity — searchChunks) over a BEIR corpus with one chunk per corpus document (title as the
 * chunk's heading path, abstract as its text) and averages nDCG@10, Recall@100, MRR@10 and Hit@5.
 * Corpus embeddings for dense modes are cached on disk, keyed by corpus hash and embedder id.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Chunk, Embedder } from '../types.ts';
import { Analyzer, type AnalyzerOptions } from '../tokenizer.ts';
import type { Bm25Params } from '../bm25.ts';
import { exactDenseSearch } from '../dense-exact.ts';
import { buildLexicalIndex, searchChunks, type DenseSearch, type RerankFn, type RetrievalMode } from '../search.ts';
import { readCorpus, readQrels, readQueries, type BeirDoc } from './beir.ts';
import { meanMetrics, queryMetrics, type QueryMetrics } from './metrics.ts';
import { toolError } from '../../errors.ts';
import { writeFileAtomic } from '../../util/atomic-file.ts';

export interface EvalOptions {
  corpus: string;
  queries: string;
  qrels: string;
  mode: RetrievalMode;
  embedder?: Embedder | null;
  rerank?: RerankFn | null;
  /** Folder for cached corpus embeddings (dense modes). */
  cacheDir?: string;
  analyzer?: AnalyzerOptions;
  bm25?: Partial<Bm25Params>;
  /** How titles reach the lexical index: as the BM25F title field (production), inside the body, or not at all. */
  fields?: 'bm25f' | 'concat' | 'body';
  /** Diversity threshold; false turns the filter off. */
  diversity?: number | false;
  /** Evaluate at most this many queries (quick runs). */
  limit?: number;
  signal?: AbortSignal;
}

export interface EvalResult extends QueryMetrics {
  queries: number;
  seconds: number;
  mode: RetrievalMode;
  embedder: string | null;
  reranker: string | null;
  documents: number;
  index_ms: number;
  query_ms_mean: number;
  analyzer: string;
  bm25: Bm25Params;
  fields: string;
}

export async function runEval(opts: EvalOptions): Promise<EvalResult> {
  const t0 = performance.now();
  if (opts.mode !== 'lexical' && !opts.embedder) {
    throw toolError('MODEL_UNAVAILABLE', `mode "${opts.mode}" needs an embedder; none is available (place ONNX weights in MODELS_DIR or set EMBEDDINGS_URL)`);
  }
  const [docs, queries, qrels] = await Promise.all([readCorpus(opts.corpus), readQueries(opts.queries), readQrels(opts.qrels)]);
  const chunks = docs.map(docToChunk);
  const analyzer = new Analyzer(opts.analyzer);
  const fields = opts.fields ?? 'bm25f';

  const ti = performance.now();
  const lexical =
    fields === 'bm25f'
      ? buildLexicalIndex(chunks, analyzer, opts.bm25)
      : buildLexicalIndex(
          docs.map((d) => ({ text: fields === 'concat' && d.title ? `${d.title}\n${d.text}` : d.text, heading_path: [] })),
          analyzer,
          opts.bm25,
        );
  const indexMs = performance.now() - ti;

  let dense: DenseSearch | null = null;
  if (opts.mode !== 'lexical' && opts.embedder) {
    const vectors = await corpusEmbeddings(docs, opts.embedder, opts.cacheDir ?? path.resolve('data', 'eval'), opts.signal);
    dense = exactDenseSearch(opts.embedder, vectors);
  }

  const judged = queries.filter((q) => qrels.has(q.id)).slice(0, opts.limit ?? Infinity);
  const per: QueryMetrics[] = [];
  let queryMs = 0;
  for (const q of judged) {
    const tq = performance.now();
    const res = await searchChunks({
      query: q.text,
      chunks,
      lexical,
      mode: opts.mode,
      topK: 100,
      candidates: 100,
      dense,
      rerank: opts.rerank ?? null,
      diversity: opts.diversity,
      signal: opts.signal,
    });
    queryMs += performance.now() - tq;
    if (opts.rerank && res.reranker.status !== 'used') {
      throw toolError('MODEL_UNAVAILABLE', `reranking ${res.reranker.status}: ${res.reranker.reason ?? 'no reason given'}`);
    }
    per.push(queryMetrics(res.hits.map((h) => docs[h.index].id), qrels.get(q.id)!));
  }
  return {
    ...meanMetrics(per),
    queries: per.length,
    seconds: Math.round((performance.now() - t0) / 10) / 100,
    mode: opts.mode,
    embedder: opts.embedder?.id ?? null,
    reranker: opts.rerank ? 'used' : null,
    documents: docs.length,
    index_ms: Math.round(indexMs),
    query_ms_mean: per.length ? Math.round((queryMs / per.length) * 1000) / 1000 : 0,
    analyzer: analyzer.signature,
    bm25: { ...lexical.params },
    fields,
  };
}

export function docToChunk(d: BeirDoc, i: number, all: readonly BeirDoc[]): Chunk {
  return {
    text: d.text,
    chunk_index: i,
    total_chunks: all.length,
    importance_score: 0.5,
    content_type: 'text',
    doc_type: 'text',
    page_start: null,
    page_end: null,
    char_start: 0,
    char_end: d.text.length,
    heading_path: d.title ? [d.title] : [],
  };
}

const EMBED_BATCH = 64;

/** Passages as the production store embeds them: heading path, then text. */
async function corpusEmbeddings(docs: BeirDoc[], embedder: Embedder, dir: string, signal?: AbortSignal): Promise<Float32Array[]> {
  const hash = createHash('sha256');
  for (const d of docs) hash.update(d.id).update('\0').update(d.title).update('\0').update(d.text).update('\n');
  const safeId = embedder.id.replace(/[^A-Za-z0-9._-]+/g, '_');
  const file = path.join(dir, `${hash.digest('hex').slice(0, 16)}-${safeId}.f32`);
  const dim = embedder.dimension;
  try {
    const buf = await readFile(file);
    if (buf.byteLength === docs.length * dim * 4) {
      const all = new Float32Array(buf.buffer, buf.byteOffset, buf.byteLength / 4);
      return docs.map((_, i) => all.slice(i * dim, (i + 1) * dim));
    }
  } catch {
    // not cached yet
  }
  const out: Float32Array[] = [];
  for (let i = 0; i < docs.length; i += EMBED_BATCH) {
    const batch = docs.slice(i, i + EMBED_BATCH).map((d) => (d.title ? `${d.title}\n${d.text}` : d.text));
    const vecs = await embedder.embed(batch, 'passage', signal);
    for (const v of vecs) {
      if (v.length !== dim) throw toolError('PROCESSING_ERROR', `embedder ${embedder.id} returned ${v.length} dimensions, expected ${dim}`);
      out.push(v);
    }
  }
  const flat = new Float32Array(out.length * dim);
  out.forEach((v, i) => flat.set(v, i * dim));
  await writeFileAtomic(file, new Uint8Array(flat.buffer));
  return out;
}
