/**
 * The three ONNX models the server knows, where their files live under MODELS_DIR, and which
 * weight file to load. Layout (the Hugging Face repo layout, so `models:fetch`, a Docker build or a
 * manual copy all produce the same tree):
 *
 *   MODELS_DIR/Xenova/all-MiniLM-L6-v2/{config.json, tokenizer.json, tokenizer_config.json, onnx/model_quantized.onnx}
 *   MODELS_DIR/Xenova/bge-small-en-v1.5/...        (same files)
 *   MODELS_DIR/Xenova/ms-marco-MiniLM-L-6-v2/...   (same files)
 *
 * `onnx/model.onnx` (fp32) is used when the quantized file is absent.
 */
import fs from 'node:fs/promises';
import path from 'node:path';

export type ModelRole = 'fast' | 'accurate' | 'reranker';
export type Pooling = 'mean' | 'cls';
export type WeightDtype = 'q8' | 'fp32';

export interface ModelSpec {
  role: ModelRole;
  /** Hugging Face repo id; also the folder under MODELS_DIR. */
  repo: string;
  kind: 'embedder' | 'reranker';
  pooling?: Pooling;
  /** Prepended to queries only (never to passages). */
  queryInstruction?: string;
  /** Tokens per input, special tokens included. */
  maxLength: number;
  /** Texts (or query-passage pairs) per onnxruntime run. */
  batchSize: number;
}

/**
 * Defaults: all-MiniLM-L6-v2 was trained at 128 tokens and sentence-transformers caps it at 256;
 * bge-small and the MS MARCO cross-encoder take 512. Batches of 16 keep padding waste low once
 * texts are sorted by length, and bound a run's memory (16 x 512 tokens of activations).
 */
export const MODEL_SPECS: Readonly<Record<ModelRole, ModelSpec>> = Object.freeze({
  fast: { role: 'fast', repo: 'Xenova/all-MiniLM-L6-v2', kind: 'embedder', pooling: 'mean', maxLength: 256, batchSize: 16 },
  accurate: {
    role: 'accurate',
    repo: 'Xenova/bge-small-en-v1.5',
    kind: 'embedder',
    pooling: 'cls',
    queryInstruction: 'Represent this sentence for searching relevant passages: ',
    maxLength: 512,
    batchSize: 16,
  },
  reranker: { role: 'reranker', repo: 'Xenova/ms-marco-MiniLM-L-6-v2', kind: 'reranker', maxLength: 512, batchSize: 16 },
});

export const REQUIRED_FILES = ['config.json', 'tokenizer.json', 'tokenizer_config.json'] as const;
export const WEIGHT_FILES: Readonly<Record<WeightDtype, string>> = Object.freeze({
  q8: 'onnx/model_quantized.onnx',
  fp32: 'onnx/model.onnx',
});

/** Folder of a repo under MODELS_DIR. Rejects ids that could escape it. */
export function modelDir(modelsDir: string, repo: string): string {
  if (!/^[A-Za-z0-9][\w.-]*\/[A-Za-z0-9][\w.-]*$/.test(repo) || repo.includes('..')) {
    throw new Error(`invalid model repo id: ${repo}`);
  }
  return path.join(modelsDir, ...repo.split('/'));
}

/** "onnx:Xenova/all-MiniLM-L6-v2:q8" */
export function onnxModelId(repo: string, dtype: WeightDtype): string {
  return `onnx:${repo}:${dtype}`;
}

export type WeightsCheck =
  | { ok: true; dir: string; dtype: WeightDtype; weightFile: string }
  | { ok: false; dir: string; missing: string[]; reason: string };

const exists = (p: string) =>
  fs.stat(p).then(
    (s) => s.isFile() && s.size > 0,
    () => false,
  );

/**
 * Checks a model folder: the three JSON files and a weight file (quantized preferred, unless
 * `prefer` says fp32). Says exactly which files are missing.
 */
export async function checkModelDir(dir: string, prefer: WeightDtype = 'q8'): Promise<WeightsCheck> {
  const missing: string[] = [];
  for (const f of REQUIRED_FILES) if (!(await exists(path.join(dir, f)))) missing.push(f);
  const order: WeightDtype[] = prefer === 'q8' ? ['q8', 'fp32'] : ['fp32', 'q8'];
  let dtype: WeightDtype | null = null;
  for (const d of order) {
    if (await exists(path.join(dir, WEIGHT_FILES[d]))) {
      dtype = d;
      break;
    }
  }
  if (!dtype) missing.push(`${WEIGHT_FILES.q8} (or ${WEIGHT_FILES.fp32})`);
  if (missing.length > 0 || !dtype) {
    return { ok: false, dir, missing, reason: `model files missing in ${dir}: ${missing.join(', ')}` };
  }
  return { ok: true, dir, dtype, weightFile: path.join(dir, WEIGHT_FILES[dtype]) };
}
