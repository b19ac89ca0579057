/**
 * Loading a BERT-family model (tokenizer + ONNX session) through @huggingface/transformers on
 * onnxruntime-node, and turning token ids into input tensors.
 *
 * Truncation is done here, not by the tokenizer call: transformers.js cuts the finished sequence
 * at max_length, which drops the closing [SEP] (and for pairs the whole passage tail with it).
 * We truncate the content and keep the special tokens, as the Python reference implementations do
 * (longest-first for pairs).
 */
import path from 'node:path';
import { AutoModel, AutoModelForSequenceClassification, AutoTokenizer, Tensor } from '@huggingface/transformers';
import type { PreTrainedModel, PreTrainedTokenizer } from '@huggingface/transformers';
import type { WeightDtype } from './model-paths.ts';

export interface OnnxLoadOptions {
  /** Absolute model folder (MODELS_DIR/<org>/<name>). Loading never touches the network. */
  dir: string;
  dtype: WeightDtype;
  classifier: boolean;
  /** onnxruntime intra-op threads; 0 lets the runtime choose. */
  threads: number;
}

export interface LoadedOnnxModel {
  tokenizer: PreTrainedTokenizer;
  model: PreTrainedModel;
  /** Input names the ONNX graph declares (token_type_ids is optional in some exports). */
  inputNames: string[];
  clsId: number;
  sepId: number;
  padId: number;
  hiddenSize: number;
}

export async function loadOnnxModel(opts: OnnxLoadOptions): Promise<LoadedOnnxModel> {
  // An absolute path is not a valid hub id, so transformers reads the files from it as is;
  // local_files_only makes sure a missing file is an error, never a download.
  const dir = path.resolve(opts.dir);
  const common = { local_files_only: true } as const;
  const tokenizer = await AutoTokenizer.from_pretrained(dir, common);
  // Spinning off: idle onnxruntime threads otherwise busy-wait and take CPU from the event loop,
  // OCR and other requests; the embedding benchmark measured it faster on small machines too.
  const sessionOptions: Record<string, unknown> = {
    graphOptimizationLevel: 'all',
    extra: { session: { intra_op: { allow_spinning: '0' }, inter_op: { allow_spinning: '0' } } },
  };
  if (opts.threads > 0) {
    sessionOptions.intraOpNumThreads = opts.threads;
    sessionOptions.interOpNumThreads = 1;
  }
  const Auto = opts.classifier ? AutoModelForSequenceClassification : AutoModel;
  const model = await Auto.from_pretrained(dir, {
    ...common,
    device: 'cpu',
    dtype: opts.dtype,
    session_options: sessionOptions,
  });
  const session = (model as unknown as { sessions?: Record<string, { inputNames?: string[] }> }).sessions?.model;
  const inputNames = session?.inputNames ?? ['input_ids', 'attention_mask', 'token_type_ids'];
  for (const required of ['input_ids', 'attention_mask']) {
    if (!inputNames.includes(required)) {
      await model.dispose();
      throw new Error(`ONNX graph in ${dir} has no ${required} input (inputs: ${inputNames.join(', ')})`);
    }
  }
  const tok = tokenizer as unknown as { sep_token_id?: number; pad_token_id?: number; config: Record<string, unknown> };
  const clsToken = typeof tok.config.cls_token === 'string' ? tok.config.cls_token : '[CLS]';
  const [clsId] = tokenizer.convert_tokens_to_ids([clsToken]) as number[];
  const sepId = tok.sep_token_id;
  const padId = tok.pad_token_id ?? 0;
  if (typeof clsId !== 'number' || typeof sepId !== 'number') {
    await model.dispose();
    throw new Error(`tokenizer in ${dir} has no [CLS]/[SEP] tokens; only BERT-style models are supported`);
  }
  // The template we build by hand must be the tokenizer's own.
  const probe = tokenizer.encode('probe', { add_special_tokens: false });
  const withSpecial = tokenizer.encode('probe');
  if (withSpecial.join() !== [clsId, ...probe, sepId].join()) {
    await model.dispose();
    throw new Error(`tokenizer in ${dir} does not use the [CLS] text [SEP] template`);
  }
  const hiddenSize = Number((model.config as unknown as { hidden_size?: number }).hidden_size);
  return { tokenizer, model, inputNames, clsId, sepId, padId, hiddenSize };
}

/** Content token ids (no special tokens). */
export function tokenIds(tokenizer: PreTrainedTokenizer, text: string): number[] {
  return tokenizer.encode(text, { add_special_tokens: false });
}

/** Lengths to keep of a pair under `budget` content tokens: longest-first, as HF tokenizers do. */
export function truncatePair(nA: number, nB: number, budget: number): [number, number] {
  if (nA + nB <= budget) return [nA, nB];
  const swap = nA > nB;
  let n1 = swap ? nB : nA;
  let n2: number;
  n2 = n1 > budget ? n1 : Math.max(n1, budget - n1);
  if (n1 + n2 > budget) {
    n1 = Math.floor(budget / 2);
    n2 = n1 + (budget % 2);
  }
  const [keepA, keepB] = swap ? [n2, n1] : [n1, n2];
  return [Math.min(keepA, nA), Math.min(keepB, nB)];
}

export interface Encoded {
  ids: number[];
  types: number[];
}

export function encodeSingle(m: LoadedOnnxModel, ids: number[], maxLength: number): Encoded {
  const body = ids.slice(0, Math.max(0, maxLength - 2));
  return { ids: [m.clsId, ...body, m.sepId], types: new Array(body.length + 2).fill(0) };
}

export function encodePair(m: LoadedOnnxModel, a: number[], b: number[], maxLength: number): Encoded {
  const [ka, kb] = truncatePair(a.length, b.length, Math.max(0, maxLength - 3));
  const ia = a.slice(0, ka);
  const ib = b.slice(0, kb);
  return {
    ids: [m.clsId, ...ia, m.sepId, ...ib, m.sepId],
    types: [...new Array(ia.length + 2).fill(0), ...new Array(ib.length + 1).fill(1)],
  };
}

/** Right-padded int64 tensors for one batch, restricted to the inputs the graph declares. */
export function batchTensors(m: LoadedOnnxModel, batch: Encoded[]): { feeds: Record<string, Tensor>; seqLen: number; mask: Uint8Array } {
  const seqLen = Math.max(...batch.map((e) => e.ids.length));
  const n = batch.length * seqLen;
  const ids = new BigInt64Array(n).fill(BigInt(m.padId));
  const types = new BigInt64Array(n);
  const attn = new BigInt64Array(n);
  const mask = new Uint8Array(n);
  batch.forEach((e, row) => {
    for (let j = 0; j < e.ids.length; j++) {
      const at = row * seqLen + j;
      ids[at] = BigInt(e.ids[j]);
      types[at] = BigInt(e.types[j]);
      attn[at] = 1n;
      mask[at] = 1;
    }
  });
  const dims = [batch.length, seqLen];
  const all: Record<string, Tensor> = {
    input_ids: new Tensor('int64', ids, dims),
    attention_mask: new Tensor('int64', attn, dims),
    token_type_ids: new Tensor('int64', types, dims),
  };
  const feeds: Record<string, Tensor> = {};
  for (const name of m.inputNames) if (all[name]) feeds[name] = all[name];
  return { feeds, seqLen, mask };
}

/** Indices of items sorted by length, cut into batches: similar lengths pad less. */
export function lengthSortedBatches(lengths: number[], batchSize: number): number[][] {
  const order = lengths.map((_, i) => i).sort((a, b) => lengths[a] - lengths[b] || a - b);
  const out: number[][] = [];
  for (let i = 0; i < order.length; i += batchSize) out.push(order.slice(i, i + batchSize));
  return out;
}
