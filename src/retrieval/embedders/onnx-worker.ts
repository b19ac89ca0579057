/**
 * Worker-thread host for one ONNX model (embedder or cross-encoder). Loads it from workerData,
 * answers embed / score requests, honours cancel messages between batches.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { loadOnnxModel, type LoadedOnnxModel } from './onnx-session.ts';
import { Cancelled, embedTexts, scorePairs } from './onnx-compute.ts';
import type { WorkerInit, WorkerReply, WorkerRequest } from './onnx-worker-protocol.ts';

const init = workerData as WorkerInit;
const port = parentPort!;
const cancelled = new Set<number>();
let model: LoadedOnnxModel | null = null;

const reply = (msg: WorkerReply, transfer: ArrayBuffer[] = []) => port.postMessage(msg, transfer);
const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err));

async function handle(req: WorkerRequest): Promise<void> {
  if (req.type === 'cancel') {
    cancelled.add(req.id);
    return;
  }
  if (req.type === 'dispose') {
    await model?.model.dispose();
    model = null;
    reply({ type: 'disposed' });
    return;
  }
  const isCancelled = () => cancelled.has(req.id);
  try {
    if (!model) throw new Error('model is not loaded');
    const limits = { maxLength: init.maxLength, batchSize: init.batchSize };
    if (req.type === 'embed') {
      const { data, dimension } = await embedTexts(model, req.texts, init.pooling ?? 'mean', limits, isCancelled);
      reply({ type: 'result', id: req.id, data, dimension }, [data.buffer as ArrayBuffer]);
    } else {
      const data = await scorePairs(model, req.query, req.passages, limits, isCancelled);
      reply({ type: 'result', id: req.id, data, dimension: 1 }, [data.buffer as ArrayBuffer]);
    }
  } catch (err) {
    if (!(err instanceof Cancelled)) reply({ type: 'error', id: req.id, message: errorText(err) });
  } finally {
    cancelled.delete(req.id);
  }
}

port.on('message', (req: WorkerRequest) => {
  void handle(req);
});

try {
  model = await loadOnnxModel({ dir: init.dir, dtype: init.dtype, classifier: init.kind === 'reranker', threads: init.threads });
  reply({ type: 'loaded', hiddenSize: model.hiddenSize });
} catch (err) {
  reply({ type: 'load-failed', message: errorText(err) });
}
