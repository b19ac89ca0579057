/**
 * The compute side of the ONNX models, run inside the model's worker thread: tokenize, batch by
 * length, run the session, pool and normalise (embedders) or read the logit (cross-encoder).
 * onnxruntime-node's run() is synchronous on the calling thread, which is why this never runs on
 * the main thread; between batches it yields so cancel messages get through.
 */
import { setImmediate } from 'node:timers/promises';
import type { Tensor } from '@huggingface/transformers';
import { l2Normalize } from './normalize.ts';
import { batchTensors, encodePair, encodeSingle, lengthSortedBatches, tokenIds, type Encoded, type LoadedOnnxModel } from './onnx-session.ts';
import type { Pooling } from './model-paths.ts';

export interface ComputeLimits {
  maxLength: number;
  batchSize: number;
}

export class Cancelled extends Error {
  constructor() {
    super('cancelled');
    this.name = 'Cancelled';
  }
}

/** Embeds texts; returns n x dimension values, row-major, each row L2-normalised. */
export async function embedTexts(m: LoadedOnnxModel, texts: string[], pooling: Pooling, limits: ComputeLimits, cancelled: () => boolean): Promise<{ data: Float32Array; dimension: number }> {
  const encoded = texts.map((t) => encodeSingle(m, tokenIds(m.tokenizer, t), limits.maxLength));
  let out: Float32Array | null = null;
  let dimension = 0;
  for (const batch of lengthSortedBatches(encoded.map((e) => e.ids.length), limits.batchSize)) {
    if (cancelled()) throw new Cancelled();
    const vectors = await runEmbedBatch(m, batch.map((i) => encoded[i]), pooling);
    dimension = vectors[0].length;
    out ??= new Float32Array(texts.length * dimension);
    batch.forEach((i, j) => out!.set(vectors[j], i * dimension));
    await setImmediate(); // lets timers and I/O run between inference batches
  }
  return { data: out ?? new Float32Array(0), dimension };
}

async function runEmbedBatch(m: LoadedOnnxModel, batch: Encoded[], pooling: Pooling): Promise<Float32Array[]> {
  const { feeds, seqLen, mask } = batchTensors(m, batch);
  const outputs = (await m.model(feeds)) as Record<string, Tensor>;
  try {
    const hidden = outputs.last_hidden_state ?? Object.values(outputs).find((t) => t?.dims?.length === 3);
    if (!hidden) throw new Error('the model returned no [batch, tokens, hidden] output');
    const [b, t, h] = hidden.dims;
    if (b !== batch.length || t !== seqLen) throw new Error(`unexpected output shape [${hidden.dims.join(', ')}]`);
    const data = hidden.data as Float32Array;
    return batch.map((_, row) => pool(data, mask, row, seqLen, h, pooling));
  } finally {
    for (const t of Object.values(outputs)) t?.dispose?.();
  }
}

/** Pools one row of [batch, tokens, hidden] and L2-normalises it. */
export function pool(data: Float32Array, mask: Uint8Array, row: number, seqLen: number, hidden: number, pooling: Pooling): Float32Array {
  const v = new Float32Array(hidden);
  const base = row * seqLen * hidden;
  if (pooling === 'cls') {
    v.set(data.subarray(base, base + hidden));
  } else {
    // Mean over real tokens ([CLS] and [SEP] included), padding excluded.
    const acc = new Float64Array(hidden);
    let count = 0;
    for (let j = 0; j < seqLen; j++) {
      if (!mask[row * seqLen + j]) continue;
      count++;
      const off = base + j * hidden;
      for (let k = 0; k < hidden; k++) acc[k] += data[off + k];
    }
    for (let k = 0; k < hidden; k++) v[k] = acc[k] / Math.max(count, 1);
  }
  return l2Normalize(v);
}

/** Raw cross-encoder logits for (query, passage) pairs, in passage order. */
export async function scorePairs(m: LoadedOnnxModel, query: string, passages: string[], limits: ComputeLimits, cancelled: () => boolean): Promise<Float64Array> {
  const q = tokenIds(m.tokenizer, query);
  const encoded = passages.map((p) => encodePair(m, q, tokenIds(m.tokenizer, p), limits.maxLength));
  const out = new Float64Array(passages.length);
  for (const batch of lengthSortedBatches(encoded.map((e) => e.ids.length), limits.batchSize)) {
    if (cancelled()) throw new Cancelled();
    const { feeds } = batchTensors(m, batch.map((i) => encoded[i]));
    const outputs = (await m.model(feeds)) as Record<string, Tensor>;
    try {
      const logits = outputs.logits;
      if (!logits || logits.dims[0] !== batch.length) throw new Error('the model returned no [batch, labels] logits');
      const labels = logits.dims[1] ?? 1;
      const data = logits.data as Float32Array;
      // One-label cross-encoders give the relevance logit directly; with two labels the second is "relevant".
      const col = labels >= 2 ? 1 : 0;
      batch.forEach((i, row) => (out[i] = data[row * labels + col]));
    } finally {
      for (const t of Object.values(outputs)) t?.dispose?.();
    }
    await setImmediate(); // lets timers and I/O run between inference batches
  }
  for (const s of out) if (!Number.isFinite(s)) throw new Error('non-finite score');
  return out;
}
