/** Messages between the main thread and an ONNX model worker. */
import type { Pooling, WeightDtype } from './model-paths.ts';

export interface WorkerInit {
  kind: 'embedder' | 'reranker';
  dir: string;
  dtype: WeightDtype;
  threads: number;
  pooling?: Pooling;
  maxLength: number;
  batchSize: number;
}

export type WorkerRequest =
  | { type: 'embed'; id: number; texts: string[] }
  | { type: 'score'; id: number; query: string; passages: string[] }
  | { type: 'cancel'; id: number }
  | { type: 'dispose' };

export type WorkerReply =
  | { type: 'loaded'; hiddenSize: number }
  | { type: 'load-failed'; message: string }
  | { type: 'result'; id: number; data: Float32Array | Float64Array; dimension: number }
  | { type: 'error'; id: number; message: string }
  | { type: 'disposed' };
