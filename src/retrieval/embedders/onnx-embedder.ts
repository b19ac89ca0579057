/**
 * Sentence embedder on onnxruntime-node: BERT-family encoder, mean or CLS pooling, L2-normalised,
 * batched by token length. The model runs in its own worker thread (onnxruntime-node's run() is
 * synchronous), so embedding never blocks the server's event loop; an aborted signal cancels the
 * request between batches.
 */
import type { EmbedKind, Embedder } from '../types.ts';
import { checkModelDir, onnxModelId, type ModelSpec, type WeightDtype } from './model-paths.ts';
import { OnnxWorkerClient } from './onnx-worker-client.ts';

export interface OnnxEmbedderOptions {
  /** Model folder (MODELS_DIR/<org>/<name>). */
  dir: string;
  /** Which known model this is (repo id, pooling, query instruction, defaults). */
  spec: ModelSpec;
  /** Weight file to prefer; the other one is used when the preferred is absent. Default q8. */
  prefer?: WeightDtype;
  /** onnxruntime intra-op threads; 0 lets the runtime choose. */
  threads?: number;
  batchSize?: number;
  maxLength?: number;
}

export class OnnxEmbedder implements Embedder {
  readonly id: string;
  readonly dimension: number;
  readonly spec: ModelSpec;
  readonly dtype: WeightDtype;
  readonly batchSize: number;
  readonly maxLength: number;
  private readonly client: OnnxWorkerClient;

  private constructor(client: OnnxWorkerClient, spec: ModelSpec, dtype: WeightDtype, dimension: number, batchSize: number, maxLength: number) {
    this.client = client;
    this.spec = spec;
    this.dtype = dtype;
    this.dimension = dimension;
    this.batchSize = batchSize;
    this.maxLength = maxLength;
    this.id = onnxModelId(spec.repo, dtype);
  }

  /** Loads the model in a worker and embeds one warm-up text, so a model that cannot run fails here. */
  static async load(opts: OnnxEmbedderOptions): Promise<OnnxEmbedder> {
    if (opts.spec.kind !== 'embedder') throw new Error(`${opts.spec.repo} is not an embedding model`);
    const check = await checkModelDir(opts.dir, opts.prefer ?? 'q8');
    if (!check.ok) throw new Error(check.reason);
    const maxLength = clampInt(opts.maxLength ?? opts.spec.maxLength, 8, 8192);
    const batchSize = clampInt(opts.batchSize ?? opts.spec.batchSize, 1, 256);
    const { client } = await OnnxWorkerClient.start({
      kind: 'embedder',
      dir: opts.dir,
      dtype: check.dtype,
      threads: opts.threads ?? 0,
      pooling: opts.spec.pooling ?? 'mean',
      maxLength,
      batchSize,
    });
    try {
      const { data, dimension } = await client.request({ type: 'embed', texts: ['warm up'] });
      if (dimension < 1 || data.length !== dimension) throw new Error(`warm-up returned ${data.length} values`);
      return new OnnxEmbedder(client, opts.spec, check.dtype, dimension, batchSize, maxLength);
    } catch (err) {
      await client.close();
      throw err;
    }
  }

  async embed(texts: string[], kind: EmbedKind, signal?: AbortSignal): Promise<Float32Array[]> {
    if (texts.length === 0) return [];
    const prefix = kind === 'query' && this.spec.queryInstruction ? this.spec.queryInstruction : '';
    const { data, dimension } = await this.client.request({ type: 'embed', texts: prefix ? texts.map((t) => prefix + t) : texts }, signal);
    if (dimension !== this.dimension || data.length !== texts.length * dimension) {
      throw new Error(`${this.id}: got ${data.length} values for ${texts.length} texts of dimension ${this.dimension}`);
    }
    const flat = data as Float32Array;
    return texts.map((_, i) => flat.subarray(i * dimension, (i + 1) * dimension));
  }

  /** False once the worker has died (crash or close); calls then fail. */
  get alive(): boolean {
    return this.client.alive;
  }

  async close(): Promise<void> {
    await this.client.close();
  }
}

function clampInt(n: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, Math.floor(n)));
}
