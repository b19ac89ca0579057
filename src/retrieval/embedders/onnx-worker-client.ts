/**
 * Main-thread handle on one ONNX model worker. onnxruntime-node runs inference synchronously on
 * the calling thread, so every model lives in its own worker_thread: the server's event loop only
 * posts texts and receives vectors. The worker keeps the process alive only while requests are
 * pending. If it dies, pending and later calls fail with a clear error.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { COMPILED, PROJECT_ROOT } from '../../project-root.ts';
import type { WorkerInit, WorkerReply, WorkerRequest } from './onnx-worker-protocol.ts';

type Job = { type: 'embed'; texts: string[] } | { type: 'score'; query: string; passages: string[] };

interface Pending {
  resolve: (r: { data: Float32Array | Float64Array; dimension: number }) => void;
  reject: (err: Error) => void;
}

// Compiled (dist/, where this code sits in a shared chunk): the worker is its own bundle entry.
// From the sources: a boot file loads tsx first.
const BOOT = COMPILED
  ? pathToFileURL(path.join(PROJECT_ROOT, 'dist', 'src', 'retrieval', 'embedders', 'onnx-worker.js'))
  : new URL('./onnx-worker-boot.mjs', import.meta.url);

export class OnnxWorkerClient {
  private readonly worker: Worker;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private dead: Error | null = null;
  private disposed: (() => void) | null = null;

  private constructor(worker: Worker) {
    this.worker = worker;
    worker.on('message', (msg: WorkerReply) => this.onMessage(msg));
    worker.on('error', (err: Error) => this.fail(new Error(`model worker crashed: ${err.message}`)));
    worker.on('exit', (code) => this.fail(new Error(`model worker exited (code ${code})`)));
    worker.unref();
  }

  /** Starts the worker and waits until its model is loaded; rejects with the load error. */
  static start(init: WorkerInit): Promise<{ client: OnnxWorkerClient; hiddenSize: number }> {
    const worker = new Worker(BOOT, { workerData: init });
    return new Promise((resolve, reject) => {
      const onMessage = (msg: WorkerReply) => {
        if (msg.type === 'loaded') {
          cleanup();
          resolve({ client: new OnnxWorkerClient(worker), hiddenSize: msg.hiddenSize });
        } else if (msg.type === 'load-failed') {
          cleanup();
          void worker.terminate();
          reject(new Error(msg.message));
        }
      };
      const onError = (err: Error) => {
        cleanup();
        void worker.terminate();
        reject(new Error(`model worker failed to start: ${err.message}`));
      };
      const onExit = (code: number) => {
        cleanup();
        reject(new Error(`model worker exited while loading (code ${code})`));
      };
      const cleanup = () => {
        worker.off('message', onMessage);
        worker.off('error', onError);
        worker.off('exit', onExit);
      };
      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.on('exit', onExit);
    });
  }

  get alive(): boolean {
    return this.dead === null;
  }

  request(job: Job, signal?: AbortSignal): Promise<{ data: Float32Array | Float64Array; dimension: number }> {
    if (this.dead) return Promise.reject(this.dead);
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        this.pending.delete(id);
        this.post({ type: 'cancel', id });
        this.refresh();
        reject(abortReason(signal!));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.pending.set(id, {
        resolve: (r) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(r);
        },
        reject: (err) => {
          signal?.removeEventListener('abort', onAbort);
          reject(err);
        },
      });
      this.refresh();
      this.post({ ...job, id } as WorkerRequest);
    });
  }

  /** Frees the model inside the worker, then stops the worker. */
  async close(): Promise<void> {
    if (this.dead) return;
    const gone = new Promise<void>((resolve) => (this.disposed = resolve));
    this.worker.ref();
    this.post({ type: 'dispose' });
    await Promise.race([gone, sleep(2000, undefined, { ref: false })]);
    this.fail(new Error('model closed'));
    await this.worker.terminate();
  }

  private post(msg: WorkerRequest): void {
    if (!this.dead) this.worker.postMessage(msg);
  }

  private onMessage(msg: WorkerReply): void {
    if (msg.type === 'disposed') {
      this.disposed?.();
      return;
    }
    if (msg.type !== 'result' && msg.type !== 'error') return;
    const p = this.pending.get(msg.id);
    if (!p) return;
    this.pending.delete(msg.id);
    this.refresh();
    if (msg.type === 'result') p.resolve({ data: msg.data, dimension: msg.dimension });
    else p.reject(new Error(msg.message));
  }

  private fail(err: Error): void {
    if (this.dead) return;
    this.dead = err;
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
  }

  /** Hold the process open only while work is in flight. */
  private refresh(): void {
    if (this.pending.size > 0) this.worker.ref();
    else this.worker.unref();
  }
}

function abortReason(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new Error('aborted');
}
