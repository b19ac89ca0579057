/**
 * Owns the model layer: the two ONNX embedders, the optional HTTP embedder, the cross-encoder and
 * its queue. start() loads everything in the background (start-up and /health never wait); a model
 * that is missing or fails to load is remembered with its reason and not retried per call.
 *
 * MODEL_DOWNLOADS=auto fetches missing files from the Hugging Face hub into MODELS_DIR once, at
 * start; a failed download is remembered like a failed load. The HTTP embedder is probed at start
 * and, when the probe failed, probed again at most every HTTP_REPROBE_MS on demand (the service may
 * come up after us).
 */
import type { Logger } from 'pino';
import type { Config } from '../../config.ts';
import type { Embedder, RerankOutcome, Reranker } from '../types.ts';
import { MODEL_SPECS, WEIGHT_FILES, checkModelDir, modelDir, onnxModelId, type ModelRole, type ModelSpec } from '../embedders/model-paths.ts';
import { HUB_URL, downloadMissing, planDownloads } from './hub-download.ts';
import { RerankQueue, type RerankQueueStats } from '../rerank-queue.ts';
import { errorText } from '../../util/error-text.ts';

export type ModelStateName = 'loading' | 'ready' | 'unavailable' | 'failed';
export type ModelSlot = ModelRole | 'http';

export interface ModelStatus {
  id: string;
  role: ModelSlot;
  kind: 'embedder' | 'reranker';
  state: ModelStateName;
  reason?: string;
  /** Model folder, or the service endpoint for the HTTP embedder. */
  path: string;
  dimension?: number;
  load_ms?: number;
}

export interface ModelManagerOptions {
  config: Readonly<Config>;
  log: Logger;
  /** Used for hub downloads and the HTTP embedder; injected by tests. */
  fetch?: typeof fetch;
  /** Hub base URL for MODEL_DOWNLOADS=auto (tests point it at a local server). */
  hubUrl?: string;
  /** Overrides of the per-model batch size / max length defaults. */
  batchSize?: number;
  http?: { timeoutMs?: number; retries?: number; sleep?: (ms: number, signal?: AbortSignal) => Promise<void> };
}

/** Documents with more chunks than this use the accurate embedder. */
export const FAST_MAX_CHUNKS = 50;
const HTTP_REPROBE_MS = 30_000;

interface Slot {
  status: ModelStatus;
  spec?: ModelSpec;
  embedder?: Embedder;
  reranker?: Reranker;
}

export class ModelManager {
  private readonly config: Readonly<Config>;
  private readonly log: Logger;
  private readonly opts: ModelManagerOptions;
  private readonly slots: Record<ModelSlot, Slot | undefined>;
  private readonly queue: RerankQueue;
  private loading: Promise<void> | null = null;
  private httpProbe: Promise<void> | null = null;
  private httpProbedAt = 0;
  private closed = false;
  private readonly abort = new AbortController();

  constructor(opts: ModelManagerOptions) {
    this.opts = opts;
    this.config = opts.config;
    this.log = opts.log;
    const onnxSlot = (role: ModelRole): Slot => {
      const spec = MODEL_SPECS[role];
      return {
        spec,
        status: {
          id: onnxModelId(spec.repo, 'q8'),
          role,
          kind: spec.kind,
          state: 'unavailable',
          reason: 'model loading has not started',
          path: modelDir(this.config.modelsDir, spec.repo),
        },
      };
    };
    this.slots = {
      fast: onnxSlot('fast'),
      accurate: onnxSlot('accurate'),
      reranker: onnxSlot('reranker'),
      http: this.config.EMBEDDINGS_URL
        ? {
            status: {
              id: `http:${this.config.EMBEDDINGS_MODEL || '(EMBEDDINGS_MODEL unset)'}`,
              role: 'http',
              kind: 'embedder',
              state: 'unavailable',
              reason: 'model loading has not started',
              path: this.config.EMBEDDINGS_URL,
            },
          }
        : undefined,
    };
    this.queue = new RerankQueue({
      reranker: () => this.live(this.slots.reranker)?.reranker ?? null,
      unavailableReason: () => this.rerankerUnavailableReason(),
      concurrency: this.config.RERANK_CONCURRENCY,
      maxQueue: this.config.RERANK_QUEUE_MAX,
      waitMs: this.config.RERANK_QUEUE_WAIT_MS,
    });
  }

  /** Starts loading every model in the background; returns at once. Safe to call twice. */
  start(): void {
    if (this.loading || this.closed) return;
    for (const slot of Object.values(this.slots)) {
      if (slot) Object.assign(slot.status, { state: 'loading', reason: undefined });
    }
    const onnx = (async () => {
      // One at a time: loading is CPU- and memory-heavy and start-up should stay responsive.
      for (const role of ['fast', 'accurate', 'reranker'] as const) {
        if (this.closed) return;
        await this.loadOnnx(role);
      }
    })();
    const http = this.slots.http ? this.probeHttp() : Promise.resolve();
    this.loading = Promise.all([onnx, http]).then(() => undefined);
  }

  /** Resolves when every model has settled (ready, unavailable or failed). */
  async ready(): Promise<void> {
    await this.loading;
    await this.httpProbe;
  }

  state(): ModelStatus[] {
    return Object.values(this.slots)
      .filter((s): s is Slot => !!s)
      .map((s) => ({ ...s.status }));
  }

  /**
   * The embedder to index a document of `chunkCount` chunks with: the HTTP service when it is
   * configured and up, else the fast model up to FAST_MAX_CHUNKS chunks and the accurate one above,
   * else whichever ONNX embedder is ready. null when none is.
   */
  embedderFor(chunkCount: number): Embedder | null {
    const http = this.slots.http;
    if (http) {
      if (http.embedder) return http.embedder;
      this.maybeReprobeHttp();
    }
    const preferred: ModelRole[] = chunkCount > FAST_MAX_CHUNKS ? ['accurate', 'fast'] : ['fast', 'accurate'];
    for (const role of preferred) {
      const e = this.live(this.slots[role])?.embedder;
      if (e) return e;
    }
    return null;
  }

  /** The ready embedder with exactly this id (an index is only ever queried by its own embedder). */
  embedderById(id: string): Embedder | null {
    for (const slot of Object.values(this.slots)) {
      const e = this.live(slot)?.embedder;
      if (e && e.id === id) return e;
    }
    if (this.slots.http && !this.slots.http.embedder && id === this.slots.http.status.id) this.maybeReprobeHttp();
    return null;
  }

  /** Cross-encoder scores through the bounded queue; never throws. */
  rerank(query: string, passages: string[], signal?: AbortSignal): Promise<RerankOutcome> {
    return this.queue.run(query, passages, signal);
  }

  rerankerId(): string | null {
    return this.slots.reranker?.reranker?.id ?? null;
  }

  rerankQueueStats(): RerankQueueStats {
    return this.queue.stats();
  }

  /** null when some embedder is ready; otherwise why not and exactly how to enable dense retrieval. */
  denseUnavailableReason(): string | null {
    const embedders = (['http', 'fast', 'accurate'] as const).map((r) => this.slots[r]).filter((s): s is Slot => !!s);
    if (embedders.some((s) => this.live(s)?.embedder)) return null;
    if (embedders.some((s) => s.status.state === 'loading')) {
      return 'embedding models are still loading; retrieval is lexical until one is ready';
    }
    const why = embedders.map((s) => `${s.status.id}: ${s.status.reason ?? s.status.state}`).join('; ');
    const layout = `${this.config.modelsDir}/<org>/<name>/{config.json, tokenizer.json, tokenizer_config.json, ${WEIGHT_FILES.q8}}`;
    return (
      `no embedding model is available (${why}). To enable dense retrieval, put the model files in ${layout} ` +
      `for ${MODEL_SPECS.fast.repo} and/or ${MODEL_SPECS.accurate.repo}, run \`npm run models:fetch\` on a machine with internet, ` +
      'start with MODEL_DOWNLOADS=auto, or set EMBEDDINGS_URL (and EMBEDDINGS_MODEL) to an OpenAI-compatible embeddings service'
    );
  }

  /**
   * denseUnavailableReason in one sentence, for answers (retrieve_chunks' retrieval.reason): the
   * model paths and how to add a model stay in get_system_health (features.dense_retrieval).
   */
  denseUnavailableSummary(): string | null {
    const why = this.denseUnavailableReason();
    if (why === null) return null;
    if (why.startsWith('embedding models are still loading')) return why;
    return 'no embedding model is available, so BM25 served the query; get_system_health (features.dense_retrieval) says how to add one';
  }

  /** rerankerUnavailableReason in one sentence, for answers; get_system_health (features.reranking) has the rest. */
  rerankerUnavailableSummary(): string {
    const s = this.slots.reranker!.status;
    if (s.state === 'ready') return '';
    if (s.state === 'loading') return 'the reranker model is still loading';
    return `reranker ${s.id} is ${s.state}, so results keep the fused order; get_system_health (features.reranking) says why and how to add it`;
  }

  rerankerUnavailableReason(): string {
    const s = this.slots.reranker!.status;
    if (s.state === 'ready') return '';
    if (s.state === 'loading') return 'the reranker model is still loading';
    // Reasons for missing files already say how to add them; others get the how-to appended.
    const reason = s.reason ?? 'unknown reason';
    const howTo = reason.includes('models:fetch') ? '' : `; put its files in ${s.path} or run \`npm run models:fetch\``;
    return `reranker ${s.id} is ${s.state}: ${reason}${howTo}`;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.abort.abort(new Error('model manager closed'));
    this.queue.close();
    await this.loading?.catch(() => undefined);
    await this.httpProbe?.catch(() => undefined);
    for (const slot of Object.values(this.slots)) {
      if (!slot) continue;
      const res = slot.embedder ?? slot.reranker;
      slot.embedder = undefined;
      slot.reranker = undefined;
      if (slot.status.state === 'ready' || slot.status.state === 'loading') {
        Object.assign(slot.status, { state: 'unavailable', reason: 'model manager closed' });
      }
      await res?.close?.().catch((err: unknown) => this.log.warn({ err, model: slot.status.id }, 'closing model failed'));
    }
  }

  private async loadOnnx(role: ModelRole): Promise<void> {
    const slot = this.slots[role]!;
    const spec = slot.spec!;
    const dir = slot.status.path;
    const started = Date.now();
    try {
      let check = await checkModelDir(dir);
      if (!check.ok && this.config.MODEL_DOWNLOADS === 'auto') {
        const hub = this.opts.hubUrl ?? HUB_URL;
        slot.status.reason = `downloading from ${hub}`;
        this.log.info({ model: spec.repo, hub }, 'downloading model files');
        try {
          const { fetched } = await downloadMissing(planDownloads(this.config.modelsDir, [spec], { hubUrl: hub }), {
            fetch: this.opts.fetch,
            signal: this.abort.signal,
          });
          this.log.info({ model: spec.repo, files: fetched.map((f) => f.file) }, 'model files downloaded');
        } catch (err) {
          return this.settle(slot, 'failed', `download from ${hub} failed: ${message(err)}; copy the files to ${dir} or run \`npm run models:fetch\` where the hub is reachable`);
        }
        check = await checkModelDir(dir);
      }
      if (!check.ok) {
        const hint = this.config.MODEL_DOWNLOADS === 'never' ? ' (MODEL_DOWNLOADS=never)' : '';
        return this.settle(slot, 'unavailable', `${check.reason}${hint}; run \`npm run models:fetch\` or copy the files there`);
      }
      slot.status.id = onnxModelId(spec.repo, check.dtype);
      const threads = this.config.ONNX_THREADS;
      const batchSize = this.opts.batchSize;
      if (spec.kind === 'embedder') {
        // Imported lazily: a server without weights never loads onnxruntime.
        const { OnnxEmbedder } = await import('../embedders/onnx-embedder.ts');
        const e = await OnnxEmbedder.load({ dir, spec, threads, batchSize });
        if (this.closed) return void (await e.close());
        slot.embedder = e;
        slot.status.dimension = e.dimension;
      } else {
        const { OnnxReranker } = await import('../reranker.ts');
        const r = await OnnxReranker.load({ dir, spec, threads, batchSize });
        if (this.closed) return void (await r.close());
        slot.reranker = r;
      }
      slot.status.load_ms = Date.now() - started;
      this.settle(slot, 'ready');
    } catch (err) {
      this.settle(slot, 'failed', `loading ${dir} failed: ${message(err)}`);
    }
  }

  private probeHttp(): Promise<void> {
    const slot = this.slots.http!;
    this.httpProbedAt = Date.now();
    this.httpProbe = (async () => {
      slot.status.state = 'loading';
      try {
        const { HttpEmbedder } = await import('../embedders/http-embedder.ts');
        const e = await HttpEmbedder.connect(
          {
            url: this.config.EMBEDDINGS_URL,
            model: this.config.EMBEDDINGS_MODEL,
            apiKey: this.config.EMBEDDINGS_API_KEY,
            fetch: this.opts.fetch,
            timeoutMs: this.opts.http?.timeoutMs,
            retries: this.opts.http?.retries,
            sleep: this.opts.http?.sleep,
          },
          this.abort.signal,
        );
        if (this.closed) return;
        slot.embedder = e;
        slot.status.id = e.id;
        slot.status.path = e.endpoint;
        slot.status.dimension = e.dimension;
        this.settle(slot, 'ready');
      } catch (err) {
        if (this.closed) return;
        this.settle(slot, 'failed', `embedding service probe failed: ${message(err)}; retried at most every ${HTTP_REPROBE_MS / 1000} s`);
      }
    })();
    return this.httpProbe;
  }

  private maybeReprobeHttp(): void {
    const slot = this.slots.http;
    if (!slot || this.closed || !this.loading || slot.status.state !== 'failed') return;
    if (Date.now() - this.httpProbedAt < HTTP_REPROBE_MS) return;
    void this.probeHttp();
  }

  /** The slot if its model still runs; a model whose worker died is marked failed (not reloaded). */
  private live(slot: Slot | undefined): Slot | undefined {
    const res = (slot?.embedder ?? slot?.reranker) as { alive?: boolean } | undefined;
    if (!slot || !res) return slot;
    if (res.alive === false && !this.closed) {
      slot.embedder = undefined;
      slot.reranker = undefined;
      this.settle(slot, 'failed', 'the model worker stopped unexpectedly; restart the server to reload it');
    }
    return slot;
  }

  private settle(slot: Slot, state: ModelStateName, reason?: string): void {
    slot.status.state = state;
    slot.status.reason = reason;
    const fields = { model: slot.status.id, role: slot.status.role, state, reason, load_ms: slot.status.load_ms };
    if (state === 'failed') this.log.warn(fields, 'model not available');
    else this.log.info(fields, state === 'ready' ? 'model ready' : 'model not available');
  }
}

const message = (err: unknown) => errorText(err, Infinity);
