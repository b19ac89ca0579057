/**
 * Downloads a model's files from the Hugging Face hub into MODELS_DIR in the standard layout.
 * Used by `npm run models:fetch` and by MODEL_DOWNLOADS=auto. Each file is streamed into a temp
 * file, fsynced and renamed into place (src/util/atomic-file.ts), so an interrupted download never
 * leaves a half file that looks complete; files already present are kept.
 */
import { createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { commitTempFile, fsyncFile, tempPathFor } from '../../util/atomic-file.ts';
import { REQUIRED_FILES, WEIGHT_FILES, modelDir, type ModelSpec, type WeightDtype } from '../embedders/model-paths.ts';

export const HUB_URL = 'https://huggingface.co';

export interface DownloadItem {
  repo: string;
  /** Path inside the repo, e.g. "onnx/model_quantized.onnx". */
  file: string;
  url: string;
  dest: string;
}

export interface PlanOptions {
  hubUrl?: string;
  dtype?: WeightDtype;
  revision?: string;
}

/** The files to fetch for each model, with their URLs and destinations. */
export function planDownloads(modelsDir: string, specs: ModelSpec[], opts: PlanOptions = {}): DownloadItem[] {
  const hub = (opts.hubUrl ?? HUB_URL).replace(/\/+$/, '');
  const revision = encodeURIComponent(opts.revision ?? 'main');
  const weights = WEIGHT_FILES[opts.dtype ?? 'q8'];
  const items: DownloadItem[] = [];
  for (const spec of specs) {
    const dir = modelDir(modelsDir, spec.repo);
    for (const file of [...REQUIRED_FILES, weights]) {
      items.push({ repo: spec.repo, file, url: `${hub}/${spec.repo}/resolve/${revision}/${file}`, dest: path.join(dir, ...file.split('/')) });
    }
  }
  return items;
}

export interface DownloadOptions {
  fetch?: typeof fetch;
  signal?: AbortSignal;
  /** Largest file accepted. Default 2 GiB. */
  maxBytes?: number;
  onProgress?: (item: DownloadItem, bytes: number) => void;
}

/** Downloads one file atomically; returns its size. */
export async function downloadFile(item: DownloadItem, opts: DownloadOptions = {}): Promise<number> {
  const doFetch = opts.fetch ?? globalThis.fetch;
  const maxBytes = opts.maxBytes ?? 2 * 1024 ** 3;
  const res = await doFetch(item.url, { signal: opts.signal, redirect: 'follow' });
  if (!res.ok || !res.body) {
    await res.body?.cancel();
    throw new Error(`GET ${item.url} answered HTTP ${res.status}`);
  }
  await fs.mkdir(path.dirname(item.dest), { recursive: true });
  const tmp = tempPathFor(item.dest, 'part');
  const out = createWriteStream(tmp);
  let bytes = 0;
  try {
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      bytes += chunk.byteLength;
      if (bytes > maxBytes) throw new Error(`${item.url} is larger than ${maxBytes} bytes`);
      if (!out.write(chunk)) await new Promise<void>((resolve) => out.once('drain', resolve));
      opts.onProgress?.(item, bytes);
    }
    if (bytes === 0) throw new Error(`${item.url} is empty`);
    await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
    await fsyncFile(tmp);
    await commitTempFile(tmp, item.dest);
    return bytes;
  } catch (err) {
    out.destroy();
    await fs.rm(tmp, { force: true });
    throw err;
  }
}

/** Fetches the files of `items` that are not already present. Returns what it fetched. */
export async function downloadMissing(items: DownloadItem[], opts: DownloadOptions = {}): Promise<{ fetched: DownloadItem[]; present: DownloadItem[] }> {
  const fetched: DownloadItem[] = [];
  const present: DownloadItem[] = [];
  for (const item of items) {
    const have = await fs.stat(item.dest).then((s) => s.isFile() && s.size > 0, () => false);
    if (have) {
      present.push(item);
      continue;
    }
    await downloadFile(item, opts);
    fetched.push(item);
  }
  return { fetched, present };
}
