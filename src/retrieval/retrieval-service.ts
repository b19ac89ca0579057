/**
 * The retrieval pipeline behind chunk_document and retrieve_chunks:
 *   fetch -> (memory index | disk index | extract + chunk + BM25 + embed + persist) -> search.
 * Per-document indexes live in the retriever cache layer (bounded, TTL) and, when a store is
 * configured, on disk keyed by sha256(url)[:16] + content sha256[:16] + chunker version (+ a hash of
 * the OCR choices when they are not the defaults: a scan read without OCR is another index), so a
 * restarted server answers without extracting or embedding again. Concurrent calls for the same
 * document build once. Without an embedder everything works lexically and says why.
 *
 * Work that grows with the document (chunking, the BM25 build, persisting, loading) runs in time
 * slices that check the call's signal, so a 100 MB text keeps /health answering and a timed-out
 * call stops within a slice. When DATA_DIR cannot take writes (full, read-only), indexes stay in
 * memory: the call is answered, the log and /health say why.
 */
import { createHash } from 'node:crypto';
import { setImmediate } from 'node:timers/promises';
import type { CacheRegistry, RetrieverEntry } from '../cache/cache-registry.ts';
import type { CallContext, DocumentSource } from '../call-context.ts';
import { isToolError, toolError, toPublicError } from '../errors.ts';
import type { OcrRequest } from '../extractors/shared/types.ts';
import { errorText } from '../util/error-text.ts';
import { describeFsError, diskCondition, redactPaths } from '../util/fs-errors.ts';
import { SingleFlight } from '../util/single-flight.ts';
import type { Chunk, Embedder } from './types.ts';
import type { ChunkRecord, KbStoreApi } from '../kb/types.ts';
import { ContextReader, contextBudget, hitContext } from '../kb/hit-context.ts';
import { rankAnswer, rerankChoice, traceWithRefs } from '../kb/search-answer.ts';
import {
  DEFAULT_TOP_K,
  MAX_DOCUMENTS,
  MAX_TOP_K,
  type DiskState,
  type DocumentAccess,
  type DocumentFailure,
  type FetchedFile,
  type IndexPersistence,
  type ModelLayer,
  type PersistedIndex,
  type RetrievedChunk,
  type RetrieveRequest,
  type RetrieveResult,
} from './contracts.ts';
import { chunkDocumentSliced } from './chunking.ts';
import { Analyzer, SERVER_ANALYZER, type AnalyzerOptions } from './tokenizer.ts';
import type { Bm25Params, ScoredIndex } from './bm25.ts';
import { DocumentLexicalIndex } from './document-lexical-index.ts';
import { exactTopK } from './dense-exact.ts';
import { mergeDense, mergeLexical, type DocumentLexical, type Part } from './multi-index.ts';
import { candidateDepth, firstStage, passageOf, type DenseSearch, type RetrievalMode, type StageTimings } from './search.ts';

/**
 * Bump when chunking or the extraction it reads changes, so indexes persisted from older output
 * are rebuilt. 3: PDF tables, hyphen and OCR changes; Hangul bigrams (analyzer v2).
 */
export const CHUNKER_VERSION = 3;
const EMBED_BATCH = 32;

export interface RetrievalServiceDeps {
  documents: DocumentAccess;
  caches: CacheRegistry;
  models?: ModelLayer | null;
  store?: IndexPersistence | null;
  disk?: DiskState | null;
  /**
   * Folders named in client-visible reasons by their setting (e.g. ['MODELS_DIR', '/srv/models']):
   * model hints name where files go, but answers carry no internal paths.
   */
  namedDirs?: ReadonlyArray<readonly [string, string]>;
  analyzer?: AnalyzerOptions;
  bm25?: Partial<Bm25Params>;
}

// ---- Per-document index ----

type IndexOrigin = 'memory' | 'disk' | 'built';

/** One document's searchable state; the retriever cache owns it and closes it on eviction. */
export class DocumentIndex implements RetrieverEntry {
  constructor(
    readonly key: string,
    readonly source: string,
    readonly documentType: string,
    readonly chunks: Chunk[],
    readonly lexical: DocumentLexicalIndex,
    /** Dense vectors: on disk (HNSW) or in memory (exact). */
    private readonly dense: { embedderId: string; persisted?: PersistedIndex; vectors?: Float32Array[] } | null,
    readonly denseReason: string | null,
    private readonly persisted: PersistedIndex | null,
  ) {}

  get embedderId(): string | null {
    return this.dense?.embedderId ?? null;
  }

  /** Memory held: the lexical index, the chunks (counted by the persisted index when there is one), vectors. */
  get approxBytes(): number {
    const chunks = this.persisted ? this.persisted.approxBytes : this.chunks.reduce((n, c) => n + c.text.length * 2 + 200, 0);
    const vectors = this.dense?.vectors?.reduce((n, v) => n + v.byteLength, 0) ?? 0;
    return chunks + this.lexical.approxBytes + vectors;
  }

  /** Dense top-k given the query vector from this index's own embedder. */
  denseTopK(queryVector: Float32Array, k: number): ScoredIndex[] {
    if (!this.dense) return [];
    if (this.dense.persisted) return this.dense.persisted.searchDense(queryVector, k).map((h) => ({ index: h.chunkIndex, score: h.score }));
    return exactTopK(this.dense.vectors ?? [], queryVector, k);
  }

  close(): void {
    this.persisted?.close();
  }
}

// ---- Requests and results ----

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

/** `ocrPart` is the document cache's OCR key part ('' for the defaults, which keep the plain key). */
export function indexKey(file: FetchedFile, ocrPart = ''): string {
  return `${file.url ? sha256(file.url).slice(0, 16) : 'upload'}${contentSuffix(file, ocrPart)}`;
}

/**
 * The part of an index key that depends only on the bytes, the chunker and the OCR reading. The
 * document cache's OCR part (":ocr=never/eng/30") is hashed: stored keys are folder names.
 */
function contentSuffix(file: FetchedFile, ocrPart: string): string {
  return `-${file.sha256.slice(0, 16)}-c${CHUNKER_VERSION}${ocrPart ? `-o${sha256(ocrPart).slice(0, 12)}` : ''}`;
}

function rawOcrPart(ocr: OcrRequest | undefined): string {
  if (!ocr || (!ocr.mode && !ocr.languages && ocr.maxPages === undefined)) return '';
  return `:ocr=${ocr.mode ?? 'auto'}/${(ocr.languages ?? []).join('+')}/${ocr.maxPages ?? ''}`;
}

/** How a failed source is named in `errors`: its URL, or 'upload:' and the file name. */
function sourceLabel(source: DocumentSource): string {
  return 'url' in source ? source.url : `upload:${source.upload.filename ?? 'file'}`;
}

const elapsed = (t0: number) => Math.round((performance.now() - t0) * 100) / 100;

// The language of a document's chunks (kept here too: tools and scripts import it from this module).
export { documentLanguage } from './document-lexical-index.ts';

/**
 * The chunks of one call's documents as the context reader reads a collection's: document ids are
 * the documents' positions in the call, chunk ids the positions in the concatenated list.
 */
function callChunks(documents: ReadonlyArray<readonly Chunk[]>): Pick<KbStoreApi, 'documentChunks'> {
  const offsets: number[] = [];
  let offset = 0;
  for (const chunks of documents) {
    offsets.push(offset);
    offset += chunks.length;
  }
  return {
    documentChunks(documentId: string, fromOrd = 0, toOrd = Number.MAX_SAFE_INTEGER): ChunkRecord[] {
      const d = Number(documentId);
      const chunks = documents[d] ?? [];
      return chunks.slice(Math.max(0, fromOrd), Math.min(chunks.length, toOrd + 1)).map((c, i) => {
        const ord = Math.max(0, fromOrd) + i;
        return {
          id: offsets[d] + ord,
          document_id: documentId,
          collection_id: 0,
          ord,
          text: c.text,
          page_start: c.page_start,
          page_end: c.page_end,
          heading_path: c.heading_path,
          char_start: c.char_start,
          char_end: c.char_end,
          importance: c.importance_score,
          content_type: c.content_type,
        };
      });
    },
  };
}

export class RetrievalService {
  private readonly documents: DocumentAccess;
  private readonly caches: CacheRegistry;
  private readonly models: ModelLayer | null;
  private readonly store: IndexPersistence | null;
  private readonly disk: DiskState | null;
  private readonly publicText: (s: string) => string;
  private readonly analyzer: Analyzer;
  private readonly bm25?: Partial<Bm25Params>;
  private readonly builds = new SingleFlight<{ index: DocumentIndex; origin: IndexOrigin }>(64);
  private counters = { built: 0, from_disk: 0, from_memory: 0, embedded_chunks: 0, memory_only: 0 };

  constructor(deps: RetrievalServiceDeps) {
    this.documents = deps.documents;
    this.caches = deps.caches;
    this.models = deps.models ?? null;
    this.store = deps.store ?? null;
    this.disk = deps.disk ?? null;
    const named = deps.namedDirs ?? [];
    this.publicText = (text) => redactPaths(text, named);
    this.analyzer = new Analyzer(deps.analyzer ?? SERVER_ANALYZER);
    this.bm25 = deps.bm25;
  }

  /**
   * Why an answer is lexical, in one sentence. Answers carry it on every call, so the model paths
   * and the ways to add a model are left to get_system_health (features.dense_retrieval).
   */
  private lexicalReason(): string | null {
    const models = this.models;
    if (!models) return null;
    return models.denseUnavailableSummary ? models.denseUnavailableSummary() : models.denseUnavailableReason();
  }

  /** Builds/loads counted since start (coalesced calls and memory hits excluded from `built`). */
  stats(): { built: number; from_disk: number; from_memory: number; embedded_chunks: number; builds_in_flight: number } {
    const { memory_only: _, ...counters } = this.counters;
    return { ...counters, builds_in_flight: this.builds.size };
  }

  /** Indexes kept in memory only since start because DATA_DIR took no writes. */
  get memoryOnlyIndexes(): number {
    return this.counters.memory_only;
  }

  /**
   * Saves to the store; on disk trouble (full, read-only, no permission) reports it and resolves
   * null, so the caller keeps the index in memory. Other failures propagate.
   */
  private async persist(key: string, data: Parameters<IndexPersistence['save']>[1], ctx: CallContext): Promise<PersistedIndex | null> {
    if (!this.store) return null;
    // Known unwritable: probe again (reused for seconds) rather than write into a full disk.
    if (this.disk && !this.disk.writable && !(await this.disk.check()).writable) {
      this.counters.memory_only++;
      return null;
    }
    try {
      return await this.store.save(key, data, ctx.signal);
    } catch (err) {
      if (ctx.signal.aborted || !diskCondition(err)) throw err;
      this.disk?.reportFailure(err);
      this.counters.memory_only++;
      ctx.log?.warn({ key, err: describeFsError(err) }, 'index not persisted (data folder not writable); serving it from memory');
      return null;
    }
  }

  /** chunk_document: the document's adaptive chunks (not indexed). */
  async chunk(source: DocumentSource, ctx: CallContext, ocr?: OcrRequest): Promise<{ chunks: Chunk[]; documentType: string; source: string }> {
    const loaded = await this.documents.load(source, ctx, ocr ? { ocr } : {});
    return { chunks: await chunkDocumentSliced(loaded.doc, {}, ctx.signal), documentType: loaded.doc.kind, source: loaded.source };
  }

  /** The searchable index of one document: memory, else disk, else built (coalesced per document). */
  async index(source: DocumentSource, ctx: CallContext, ocr?: OcrRequest): Promise<{ index: DocumentIndex; origin: IndexOrigin }> {
    const file = await this.documents.fetch(source, ctx);
    const ocrPart = this.documents.ocrKeySuffix ? this.documents.ocrKeySuffix(ocr) : rawOcrPart(ocr);
    const key = indexKey(file, ocrPart);
    const cached = this.caches.retriever.get(key);
    if (cached instanceof DocumentIndex && !this.canUpgrade(cached)) {
      this.counters.from_memory++;
      return { index: cached, origin: 'memory' };
    }
    const previous = cached instanceof DocumentIndex ? cached : null;
    return this.builds.run(key, ctx.signal, (signal) => this.build(key, source, file, { signal, log: ctx.log }, previous, { ocr, ocrPart }));
  }

  /** A lexical-only index can gain vectors once an embedder is ready. */
  private canUpgrade(index: DocumentIndex): boolean {
    return index.embedderId === null && index.chunks.length > 0 && this.models?.embedderFor(index.chunks.length) != null;
  }

  private async build(
    key: string,
    source: DocumentSource,
    file: FetchedFile,
    ctx: CallContext,
    previous: DocumentIndex | null,
    reading: { ocr: OcrRequest | undefined; ocrPart: string },
  ): Promise<{ index: DocumentIndex; origin: IndexOrigin }> {
    const signal = ctx.signal;
    // The store is read even when upgrading an in-memory lexical index: after a restart the
    // vectors may already be on disk, built by the embedder that has just become ready.
    let stored: PersistedIndex | null = null;
    if (this.store) {
      try {
        let storedKey: string | null = key;
        let meta = await this.store.peekMeta(key);
        if (!meta && this.store.findKeyBySuffix) {
          // Same bytes under another URL (or uploaded): reuse that index.
          storedKey = await this.store.findKeyBySuffix(contentSuffix(file, reading.ocrPart));
          meta = storedKey ? await this.store.peekMeta(storedKey) : null;
        }
        if (storedKey && meta && meta.contentSha256 === file.sha256) {
          const expect = { embedderId: meta.embedderId, dimension: meta.dimension, contentSha256: meta.contentSha256, lexical: { analyzer: this.analyzer, ...(this.bm25 ? { bm25: this.bm25 } : {}) } };
          stored = await this.store.load(storedKey, expect, signal);
        }
      } catch (err) {
        if (signal.aborted) throw err;
        ctx.log?.warn({ key, err: describeFsError(err) }, 'stored index unreadable; rebuilding');
      }
    }
    let chunks: Chunk[];
    let documentType: string;
    let sourceName = file.source;
    let lexical: DocumentLexicalIndex;
    if (stored && (!previous || stored.chunks.length === previous.chunks.length)) {
      // Loaded with its lexical index (lexical.bin): nothing is tokenized again.
      chunks = stored.chunks;
      documentType = chunks[0]?.doc_type ?? 'unknown';
      lexical = stored.lexical;
    } else if (previous) {
      chunks = previous.chunks;
      documentType = previous.documentType;
      lexical = previous.lexical;
    } else {
      const loaded = await this.documents.load(source, ctx, { fetched: file, ...(reading.ocr ? { ocr: reading.ocr } : {}) });
      chunks = await chunkDocumentSliced(loaded.doc, {}, signal);
      documentType = loaded.doc.kind;
      sourceName = loaded.source;
      // One document, one language: its rules analyze the chunks and the queries of this index.
      lexical = await DocumentLexicalIndex.forDocument(chunks, this.analyzer, this.bm25, signal);
    }

    // Dense: the stored vectors if their embedder is here, else embed now when an embedder is.
    let dense: ConstructorParameters<typeof DocumentIndex>[5] = null;
    let denseReason: string | null = null;
    let persisted: PersistedIndex | null = stored;
    if (stored?.hasDense && stored.meta.embedderId && this.models?.embedderById(stored.meta.embedderId)) {
      dense = { embedderId: stored.meta.embedderId, persisted: stored };
    } else if (chunks.length > 0) {
      const embedder = this.models?.embedderFor(chunks.length) ?? null;
      if (!embedder) {
        denseReason = this.lexicalReason() ?? 'no embedding model is configured; retrieval is lexical';
      } else {
        try {
          const vectors = await this.embedChunks(embedder, chunks, signal);
          this.counters.embedded_chunks += vectors.length;
          const saved = await this.persist(key, { chunks, vectors, lexical, embedderId: embedder.id, dimension: embedder.dimension, contentSha256: file.sha256, chunkerVersion: CHUNKER_VERSION }, ctx);
          if (saved) {
            persisted?.close();
            persisted = saved;
            dense = { embedderId: embedder.id, persisted };
          } else {
            dense = { embedderId: embedder.id, vectors };
          }
        } catch (err) {
          if (signal.aborted) throw err;
          denseReason = `embedding with ${embedder.id} failed (${errorText(err)}); retrieval is lexical`;
          ctx.log?.warn({ key, err: errorText(err) }, 'embedding failed; serving lexical');
        }
      }
    }
    if (!persisted && this.store && !previous && !dense) {
      // Keep the chunks on disk so a restart skips extraction even without vectors.
      try {
        persisted = await this.persist(key, { chunks, lexical, embedderId: null, dimension: null, contentSha256: file.sha256, chunkerVersion: CHUNKER_VERSION }, ctx);
      } catch (err) {
        if (signal.aborted) throw err;
        ctx.log?.warn({ key, err: errorText(err) }, 'could not persist the index');
      }
    }
    const index = new DocumentIndex(key, sourceName, documentType, chunks, lexical, dense, denseReason, persisted);
    if (stored && persisted !== stored) stored.close();
    const origin: IndexOrigin = stored && persisted === stored ? 'disk' : 'built';
    if (origin === 'disk') this.counters.from_disk++;
    else this.counters.built++;
    this.caches.retriever.set(key, index);
    return { index, origin };
  }

  /** Embeds chunk passages in batches, yielding between batches so the event loop stays free. */
  private async embedChunks(embedder: Embedder, chunks: Chunk[], signal: AbortSignal): Promise<Float32Array[]> {
    const out: Float32Array[] = [];
    for (let i = 0; i < chunks.length; i += EMBED_BATCH) {
      signal.throwIfAborted();
      const batch = chunks.slice(i, i + EMBED_BATCH).map(passageOf);
      const vecs = await embedder.embed(batch, 'passage', signal);
      if (vecs.length !== batch.length) throw new Error(`embedder returned ${vecs.length} vectors for ${batch.length} texts`);
      for (const v of vecs) {
        if (v.length !== embedder.dimension) throw new Error(`embedder returned ${v.length} dimensions, expected ${embedder.dimension}`);
        out.push(v);
      }
      await setImmediate();
    }
    return out;
  }

  /**
   * Indexes every source of a call. One document failing among several does not fail the call:
   * the others are searched and the failure is reported per document (issue 10, item 7). A single
   * document, a call whose signal fired (timeout, shutdown) or a call where every document failed
   * is answered with an error as before: the only one, the signal's, or one naming them all.
   */
  private async indexAll(
    sources: DocumentSource[],
    ctx: CallContext,
    ocr: OcrRequest | undefined,
  ): Promise<{ loaded: Array<{ index: DocumentIndex; origin: IndexOrigin }>; errors: DocumentFailure[] }> {
    if (sources.length === 1) return { loaded: [await this.index(sources[0], ctx, ocr)], errors: [] };
    const settled = await Promise.allSettled(sources.map((s) => this.index(s, ctx, ocr)));
    const loaded: Array<{ index: DocumentIndex; origin: IndexOrigin }> = [];
    const failed: Array<{ source: string; err: unknown }> = [];
    settled.forEach((r, i) => {
      if (r.status === 'fulfilled') loaded.push(r.value);
      else failed.push({ source: sourceLabel(sources[i]), err: r.reason });
    });
    if (failed.length === 0) return { loaded, errors: [] };
    if (ctx.signal.aborted) throw failed[0].err;
    const errors: DocumentFailure[] = [];
    const named = new Set<string>();
    for (const f of failed) {
      if (named.has(f.source)) continue;
      named.add(f.source);
      const pub = toPublicError(f.err);
      if (!isToolError(f.err)) ctx.log?.warn({ source: f.source, err: errorText(f.err) }, 'document failed in a multi-document retrieval');
      errors.push({ source: f.source, code: pub.code, message: this.publicText(pub.message) });
    }
    if (loaded.length === 0) {
      if (errors.length === 1) throw failed[0].err;
      const first = toPublicError(failed[0].err);
      throw toolError(
        first.code,
        `All ${errors.length} documents failed: ${errors.map((e) => `${e.source}: ${e.code}: ${e.message}`).join('; ')}`,
        failed[0].err,
      );
    }
    return { loaded, errors };
  }

  async retrieve(req: RetrieveRequest, ctx: CallContext): Promise<RetrieveResult> {
    const t0 = performance.now();
    if (req.sources.length === 0) throw toolError('VALIDATION_ERROR', 'Give document_url, document_urls or upload a file');
    if (req.sources.length > MAX_DOCUMENTS) throw toolError('VALIDATION_ERROR', `At most ${MAX_DOCUMENTS} documents per call`);
    const query = req.query.trim();
    if (!query) throw toolError('VALIDATION_ERROR', 'query must contain text');
    const topK = Math.min(MAX_TOP_K, Math.max(1, Math.floor(req.topK ?? DEFAULT_TOP_K)));

    const { loaded, errors } = await this.indexAll(req.sources, ctx, req.ocr);
    // The same document named twice is searched once.
    const seen = new Set<string>();
    const docs = loaded.filter((d) => !seen.has(d.index.key) && seen.add(d.index.key));
    const loadMs = elapsed(t0);
    const total = docs.reduce((n, d) => n + d.index.chunks.length, 0);

    const denseReady = docs.every((d) => d.index.embedderId !== null || d.index.chunks.length === 0) && docs.some((d) => d.index.embedderId !== null);
    const denseWhyNot = this.publicText(
      docs.find((d) => d.index.denseReason)?.index.denseReason ?? this.lexicalReason() ?? 'no embedding model is configured',
    );
    if ((req.mode === 'dense' || req.mode === 'hybrid') && !denseReady && total > 0) {
      // An error is read once, by someone who asked for dense: it gets the full reason and the fix.
      const full = this.models?.denseUnavailableReason();
      throw toolError('MODEL_UNAVAILABLE', `mode "${req.mode}" needs an embedding model: ${full ? this.publicText(full) : denseWhyNot}`);
    }
    const mode: RetrievalMode = req.mode ?? (denseReady ? 'hybrid' : 'lexical');

    // Concatenate the documents' chunks; parts map positions back to their document.
    const all: Array<{ chunk: Chunk; source: string; doc: number; ord: number }> = [];
    const lexParts: Part<DocumentLexical>[] = [];
    const denseParts: Part<DenseSearch>[] = [];
    const queryVectors = new Map<string, Promise<Float32Array>>();
    for (const [doc, { index }] of docs.entries()) {
      const offset = all.length;
      index.chunks.forEach((chunk, ord) => all.push({ chunk, source: index.source, doc, ord }));
      lexParts.push({ offset, size: index.chunks.length, search: index.lexical });
      if (index.embedderId && mode !== 'lexical') {
        const embedder = this.models?.embedderById(index.embedderId);
        if (!embedder) throw toolError('MODEL_UNAVAILABLE', `the embedder that indexed ${index.source} (${index.embedderId}) is no longer available`);
        denseParts.push({
          offset,
          size: index.chunks.length,
          search: {
            embedderId: embedder.id,
            async search(q: string, k: number, signal?: AbortSignal) {
              let vec = queryVectors.get(embedder.id);
              if (!vec) {
                vec = embedder.embed([q], 'query', signal).then((v) => v[0]);
                queryVectors.set(embedder.id, vec);
              }
              return index.denseTopK(await vec, k);
            },
          },
        });
      }
    }

    // First stage per index type (each document searched with the query, merged), then the
    // ranking stage search_collection runs: fusion, rerank, diversity, confidence and trace.
    const n = candidateDepth(topK);
    const stageTimings: StageTimings = { total_ms: 0 };
    const lexical = mergeLexical(lexParts);
    const found = await firstStage({ query, lexical, dense: denseParts.length ? mergeDense(denseParts) : null, mode, signal: ctx.signal }, n, stageTimings);
    const single = docs.length === 1 ? docs[0].index : null;
    const res = await rankAnswer(found, {
      query,
      chunks: all.map((a) => a.chunk),
      termIds: (i) => lexical.termIds(i),
      mode,
      topK,
      candidates: n,
      ...rerankChoice(this.models, req.rerank, this.publicText),
      explain: req.explain === true,
      signal: ctx.signal,
      statistics: mode !== 'dense' ? lexical : null,
      scope: single ? `document "${single.source}"` : `the ${docs.length} documents`,
    });

    const tContext = performance.now();
    const reader = req.context && req.context !== 'none' ? new ContextReader(callChunks(docs.map((d) => d.index.chunks))) : null;
    const budget = contextBudget(req.contextChars);
    const results: RetrievedChunk[] = res.hits.map((h) => {
      const { chunk, source } = all[h.index];
      const hit: RetrievedChunk = {
        text: chunk.text,
        chunk_index: chunk.chunk_index,
        importance_score: chunk.importance_score,
        content_type: chunk.content_type,
        score: h.score,
        page_start: chunk.page_start,
        page_end: chunk.page_end,
        heading_path: chunk.heading_path,
        source,
      };
      if (reader) {
        const { doc, ord } = all[h.index];
        const context = hitContext(reader, reader.at(String(doc), ord)!, req.context as 'section' | 'neighbors', budget);
        hit.context = { kind: context.kind, text: context.text, chunk_indexes: context.chunk_ids.map((id) => all[id].chunk.chunk_index), truncated: context.truncated };
      }
      return hit;
    });
    const contextMs = reader ? elapsed(tContext) : undefined;
    const { total_ms: _, ...firstStageMs } = stageTimings;
    const stages = { ...firstStageMs, ...res.timings };
    const totalMs = elapsed(t0);
    const embedders = [...new Set(docs.map((d) => d.index.embedderId).filter((e): e is string => e !== null))];
    const { confidence_ms: __, ...rankStages } = res.timings;
    const out: RetrieveResult = {
      results,
      confidence: res.confidence,
      message: res.message,
      total_chunks: total,
      total_chunks_indexed: total,
      retrieval: {
        mode,
        embedder: mode === 'lexical' ? null : embedders.join(',') || null,
        reranker: res.reranker.status,
        reranker_model: res.reranker.status === 'used' ? this.models?.rerankerId() ?? null : null,
        ...(mode === 'lexical' && !req.mode ? { reason: `lexical: ${denseWhyNot}` } : {}),
        ...(res.reranker.reason ? { reranker_reason: this.publicText(res.reranker.reason) } : {}),
        top_k: topK,
        candidates: n,
        documents: docs.map((d) => ({
          source: d.index.source,
          document_type: d.index.documentType,
          chunks: d.index.chunks.length,
          index: d.origin,
          embedder: d.index.embedderId,
        })),
        // The older shape (its stages fixed by the schema), kept for compatibility.
        timings: { ...firstStageMs, ...rankStages, load_ms: loadMs, total_ms: totalMs },
      },
      timings_ms: { load_ms: loadMs, ...stages, ...(contextMs !== undefined ? { context_ms: contextMs } : {}), total_ms: totalMs },
      ...(errors.length > 0 ? { errors } : {}),
    };
    if (res.trace) out.trace = traceWithRefs(res.trace, (i) => ({ chunk_index: all[i].chunk.chunk_index, source: all[i].source }));
    return out;
  }
}

