/**
 * Cross-encoder reranker (ms-marco-MiniLM-L-6-v2 shaped): scores (query, passage) pairs with the
 * raw logit of a BERT sequence classifier. Pairs are truncated longest-first to maxLength (512)
 * with their special tokens kept, sorted by length and run in batches, in a worker thread.
 */
import type { Reranker } from './types.ts';
import { MODEL_SPECS, checkModelDir, onnxModelId, type ModelSpec, type WeightDtype } from './embedders/model-paths.ts';
import { OnnxWorkerClient } from './embedders/onnx-worker-client.ts';

export interface OnnxRerankerOptions {
  dir: string;
  spec?: ModelSpec;
  prefer?: WeightDtype;
  threads?: number;
  batchSize?: number;
  maxLength?: number;
}

export class OnnxReranker implements Reranker {
  readonly id: string;
  readonly dtype: WeightDtype;
  readonly batchSize: number;
  readonly maxLength: number;
  private readonly client: OnnxWorkerClient;

  private constructor(client: OnnxWorkerClient, spec: ModelSpec, dtype: WeightDtype, batchSize: number, maxLength: number) {
    this.client = client;
    this.dtype = dtype;
    this.batchSize = batchSize;
    this.maxLength = maxLength;
    this.id = onnxModelId(spec.repo, dtype);
  }

  static async load(opts: OnnxRerankerOptions): Promise<OnnxReranker> {
    const spec = opts.spec ?? MODEL_SPECS.reranker;
    if (spec.kind !== 'reranker') throw new Error(`${spec.repo} is not a cross-encoder`);
    const check = await checkModelDir(opts.dir, opts.prefer ?? 'q8');
    if (!check.ok) throw new Error(check.reason);
    const batchSize = Math.max(1, Math.min(256, Math.floor(opts.batchSize ?? spec.batchSize)));
    const maxLength = Math.max(8, Math.min(8192, Math.floor(opts.maxLength ?? spec.maxLength)));
    const { client } = await OnnxWorkerClient.start({ kind: 'reranker', dir: opts.dir, dtype: check.dtype, threads: opts.threads ?? 0, maxLength, batchSize });
    const r = new OnnxReranker(client, spec, check.dtype, batchSize, maxLength);
    try {
      await r.score('warm up', ['warm up']);
      return r;
    } catch (err) {
      await client.close();
      throw err;
    }
  }

  async score(query: string, passages: string[], signal?: AbortSignal): Promise<number[]> {
    if (passages.length === 0) return [];
    const { data } = await this.client.request({ type: 'score', query, passages }, signal);
    if (data.length !== passages.length) throw new Error(`${this.id}: ${data.length} scores for ${passages.length} passages`);
    return Array.from(data);
  }

  get alive(): boolean {
    return this.client.alive;
  }

  async close(): Promise<void> {
    await this.client.close();
  }
}
