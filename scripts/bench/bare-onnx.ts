/**
 * The physical limit of this stack: a bare onnxruntime-node InferenceSession fed pre-built int64
 * tensors, no tokenizer, no pooling, no worker. Tokenization here is the model's own tokenizer.json
 * through transformers.js (done outside the timed part), with the same truncation the model layer
 * applies ([CLS] text [SEP] cut to max length; pairs longest-first), so both sides run the very
 * same batches.
 */
import path from 'node:path';
import * as ort from 'onnxruntime-node';
import { AutoTokenizer, type PreTrainedTokenizer } from '@huggingface/transformers';

export interface Encoded {
  ids: number[];
  types: number[];
}

export interface BareOptions {
  /** intra-op threads; 0 = runtime default. */
  threads: number;
  /** ORT session.intra_op.allow_spinning (default on in onnxruntime). */
  spinning?: boolean;
}

export class BareTokenizer {
  private constructor(
    readonly tok: PreTrainedTokenizer,
    readonly cls: number,
    readonly sep: number,
    readonly pad: number,
  ) {}

  static async load(dir: string): Promise<BareTokenizer> {
    const tok = await AutoTokenizer.from_pretrained(path.resolve(dir), { local_files_only: true });
    const [cls, sep, pad] = tok.convert_tokens_to_ids(['[CLS]', '[SEP]', '[PAD]']) as number[];
    return new BareTokenizer(tok, cls, sep, pad);
  }

  ids(text: string): number[] {
    return this.tok.encode(text, { add_special_tokens: false });
  }

  single(text: string, maxLength: number): Encoded {
    const body = this.ids(text).slice(0, maxLength - 2);
    return { ids: [this.cls, ...body, this.sep], types: new Array(body.length + 2).fill(0) };
  }

  pair(query: string, passage: string, maxLength: number): Encoded {
    const qa = this.ids(query);
    const pb = this.ids(passage);
    const [ka, kb] = longestFirst(qa.length, pb.length, maxLength - 3);
    const a = qa.slice(0, ka);
    const b = pb.slice(0, kb);
    return { ids: [this.cls, ...a, this.sep, ...b, this.sep], types: [...new Array(a.length + 2).fill(0), ...new Array(b.length + 1).fill(1)] };
  }
}

/** Lengths to keep of a pair under `budget` tokens, longest-first as Hugging Face tokenizers do. */
export function longestFirst(nA: number, nB: number, budget: number): [number, number] {
  if (nA + nB <= budget) return [nA, nB];
  const swap = nA > nB;
  let n1 = swap ? nB : nA;
  let n2 = n1 > budget ? n1 : Math.max(n1, budget - n1);
  if (n1 + n2 > budget) {
    n1 = Math.floor(budget / 2);
    n2 = n1 + (budget % 2);
  }
  const [a, b] = swap ? [n2, n1] : [n1, n2];
  return [Math.min(a, nA), Math.min(b, nB)];
}

/** Batches of indices; sorted by length when `sort` (bucketing), else in arrival order. */
export function makeBatches(lengths: number[], batchSize: number, sort: boolean): number[][] {
  const order = lengths.map((_, i) => i);
  if (sort) order.sort((x, y) => lengths[x] - lengths[y] || x - y);
  const out: number[][] = [];
  for (let i = 0; i < order.length; i += batchSize) out.push(order.slice(i, i + batchSize));
  return out;
}

export interface Feed {
  feeds: Record<string, ort.Tensor>;
  rows: number;
  seqLen: number;
  mask: Uint8Array;
  realTokens: number;
}

export function buildFeed(batch: Encoded[], padId: number, inputNames: readonly string[]): Feed {
  const seqLen = Math.max(...batch.map((e) => e.ids.length));
  const n = batch.length * seqLen;
  const ids = new BigInt64Array(n).fill(BigInt(padId));
  const types = new BigInt64Array(n);
  const attn = new BigInt64Array(n);
  const mask = new Uint8Array(n);
  let real = 0;
  batch.forEach((e, r) => {
    real += e.ids.length;
    for (let j = 0; j < e.ids.length; j++) {
      ids[r * seqLen + j] = BigInt(e.ids[j]);
      types[r * seqLen + j] = BigInt(e.types[j]);
      attn[r * seqLen + j] = 1n;
      mask[r * seqLen + j] = 1;
    }
  });
  const dims = [batch.length, seqLen];
  const all: Record<string, ort.Tensor> = {
    input_ids: new ort.Tensor('int64', ids, dims),
    attention_mask: new ort.Tensor('int64', attn, dims),
    token_type_ids: new ort.Tensor('int64', types, dims),
  };
  const feeds: Record<string, ort.Tensor> = {};
  for (const name of inputNames) if (all[name]) feeds[name] = all[name];
  return { feeds, rows: batch.length, seqLen, mask, realTokens: real };
}

export class BareSession {
  private constructor(readonly session: ort.InferenceSession) {}

  static async create(file: string, opts: BareOptions): Promise<BareSession> {
    const o: ort.InferenceSession.SessionOptions = { graphOptimizationLevel: 'all', executionProviders: ['cpu'] };
    if (opts.threads > 0) {
      o.intraOpNumThreads = opts.threads;
      o.interOpNumThreads = 1;
    }
    if (opts.spinning === false) o.extra = { session: { intra_op: { allow_spinning: '0' }, inter_op: { allow_spinning: '0' } } };
    return new BareSession(await ort.InferenceSession.create(file, o));
  }

  get inputNames(): readonly string[] {
    return this.session.inputNames;
  }

  /** Runs every feed in order; returns the outputs of the last one (for checks). */
  async runAll(feeds: Feed[]): Promise<ort.InferenceSession.OnnxValueMapType[]> {
    const outs: ort.InferenceSession.OnnxValueMapType[] = [];
    for (const f of feeds) outs.push(await this.session.run(f.feeds));
    return outs;
  }

  release(): Promise<void> {
    return this.session.release();
  }
}

/** Mean or CLS pooling + L2 norm of one row (for checking that both sides compute the same). */
export function poolRow(data: Float32Array, mask: Uint8Array, row: number, seqLen: number, hidden: number, pooling: 'mean' | 'cls'): Float32Array {
  const v = new Float32Array(hidden);
  const base = row * seqLen * hidden;
  if (pooling === 'cls') v.set(data.subarray(base, base + hidden));
  else {
    let count = 0;
    for (let j = 0; j < seqLen; j++) {
      if (!mask[row * seqLen + j]) continue;
      count++;
      for (let k = 0; k < hidden; k++) v[k] += data[base + j * hidden + k];
    }
    for (let k = 0; k < hidden; k++) v[k] /= Math.max(1, count);
  }
  let norm = 0;
  for (let k = 0; k < hidden; k++) norm += v[k] * v[k];
  norm = Math.sqrt(norm) || 1;
  for (let k = 0; k < hidden; k++) v[k] /= norm;
  return v;
}
