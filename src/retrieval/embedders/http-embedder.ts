/**
 * Embedder backed by an OpenAI-compatible embeddings service (Ollama, text-embeddings-inference,
 * vLLM, OpenAI): POST {base}/v1/embeddings {model, input: string[]}. Batched, each request
 * time-bounded, retried with exponential backoff on network errors, 5xx and 429, and the response
 * checked (count, indices, dimension, finite numbers) before vectors are L2-normalised.
 */
import { BodyTooLargeError, checkDeclaredLength, readBounded } from '../../util/read-bounded.ts';
import { parseRetryAfter, withRetries } from '../../util/retry.ts';
import type { EmbedKind, Embedder } from '../types.ts';
import { l2Normalize } from './normalize.ts';

export interface HttpEmbedderOptions {
  /** Service base URL, with or without /v1 (a full .../embeddings URL is accepted too). */
  url: string;
  model: string;
  apiKey?: string;
  /** Texts per request. Default 64. */
  batchSize?: number;
  /** Per-request limit in ms. Default 30 000. */
  timeoutMs?: number;
  /** Retries after the first attempt. Default 3. */
  retries?: number;
  /** First backoff in ms, doubled per retry, capped by maxBackoffMs. Defaults 250 / 4000. */
  backoffMs?: number;
  maxBackoffMs?: number;
  /** Largest response body accepted, bytes. Default 64 MiB. */
  maxResponseBytes?: number;
  /** Injected for tests. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  fetch?: typeof fetch;
}

export class EmbeddingServiceError extends Error {
  readonly status: number | null;
  readonly retryable: boolean;
  /** The wait a 429/5xx answer asked for (Retry-After), in ms. */
  retryAfterMs?: number;
  constructor(message: string, status: number | null, retryable: boolean, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'EmbeddingServiceError';
    this.status = status;
    this.retryable = retryable;
  }
}

/** Any failure of one attempt as an EmbeddingServiceError (network errors are retryable). */
function asServiceError(err: unknown): EmbeddingServiceError {
  return err instanceof EmbeddingServiceError ? err : new EmbeddingServiceError(`embedding service unreachable: ${describe(err)}`, null, true, { cause: err });
}

/** The embeddings endpoint for a configured base URL. */
export function embeddingsEndpoint(base: string): string {
  const u = new URL(base);
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error(`EMBEDDINGS_URL must be http(s): ${base}`);
  let p = u.pathname.replace(/\/+$/, '');
  if (!/\/embeddings$/.test(p)) {
    if (!/\/v1$/.test(p)) p += '/v1';
    p += '/embeddings';
  }
  u.pathname = p;
  u.search = '';
  u.hash = '';
  return u.toString();
}

export class HttpEmbedder implements Embedder {
  readonly id: string;
  readonly endpoint: string;
  private dim: number;
  private readonly opts: Required<Omit<HttpEmbedderOptions, 'apiKey' | 'sleep'>> & Pick<HttpEmbedderOptions, 'sleep'> & { apiKey: string };

  /** `dimension` is learnt by connect(); construct directly only when it is known. */
  constructor(opts: HttpEmbedderOptions & { dimension: number }) {
    this.endpoint = embeddingsEndpoint(opts.url);
    if (!opts.model) throw new Error('EMBEDDINGS_MODEL is required with EMBEDDINGS_URL');
    this.id = `http:${opts.model}`;
    this.dim = opts.dimension;
    this.opts = {
      url: opts.url,
      model: opts.model,
      apiKey: opts.apiKey ?? '',
      batchSize: Math.max(1, Math.floor(opts.batchSize ?? 64)),
      timeoutMs: opts.timeoutMs ?? 30_000,
      retries: Math.max(0, Math.floor(opts.retries ?? 3)),
      backoffMs: opts.backoffMs ?? 250,
      maxBackoffMs: opts.maxBackoffMs ?? 4_000,
      maxResponseBytes: opts.maxResponseBytes ?? 64 * 1024 * 1024,
      ...(opts.sleep ? { sleep: opts.sleep } : {}),
      fetch: opts.fetch ?? globalThis.fetch,
    };
  }

  /** Embeds one probe text to learn the service's dimension. */
  static async connect(opts: HttpEmbedderOptions, signal?: AbortSignal): Promise<HttpEmbedder> {
    const e = new HttpEmbedder({ ...opts, dimension: 0 });
    const [v] = await e.request(['dimension probe'], signal);
    e.dim = v.length;
    return e;
  }

  get dimension(): number {
    return this.dim;
  }

  async embed(texts: string[], _kind: EmbedKind, signal?: AbortSignal): Promise<Float32Array[]> {
    const out: Float32Array[] = [];
    for (let i = 0; i < texts.length; i += this.opts.batchSize) {
      out.push(...(await this.request(texts.slice(i, i + this.opts.batchSize), signal)));
    }
    return out;
  }

  private request(input: string[], signal?: AbortSignal): Promise<Float32Array[]> {
    const { retries, backoffMs, maxBackoffMs } = this.opts;
    return withRetries(() => this.attempt(input, signal), {
      attempts: retries + 1,
      // Exponential backoff; a Retry-After is honoured up to the same cap.
      backoffMs: (retry) => Math.min(maxBackoffMs, backoffMs * 2 ** (retry - 1)),
      maxRetryAfterMs: maxBackoffMs,
      overLimit: 'cap',
      retryable: (err) => {
        const e = asServiceError(err);
        return e.retryable && { retryAfterMs: e.retryAfterMs };
      },
      giveUp: (err, attempts) => {
        const e = asServiceError(err);
        if (attempts > 1) e.message += ` (after ${attempts} attempts)`;
        return e;
      },
      ...(signal ? { signal } : {}),
      ...(this.opts.sleep ? { sleep: this.opts.sleep } : {}),
    });
  }

  private async attempt(input: string[], signal?: AbortSignal): Promise<Float32Array[]> {
    const timeout = AbortSignal.timeout(this.opts.timeoutMs);
    const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
    if (this.opts.apiKey) headers.authorization = `Bearer ${this.opts.apiKey}`;
    let res: Response;
    try {
      res = await this.opts.fetch(this.endpoint, {
        method: 'POST',
        headers,
        body: JSON.stringify({ model: this.opts.model, input, encoding_format: 'float' }),
        signal: combined,
        redirect: 'error',
      });
    } catch (err) {
      if (timeout.aborted && !signal?.aborted) {
        throw new EmbeddingServiceError(`embedding service did not answer within ${this.opts.timeoutMs} ms`, null, true);
      }
      throw err;
    }
    let body: string;
    try {
      body = await readBody(res, this.opts.maxResponseBytes);
    } catch (err) {
      if (timeout.aborted && !signal?.aborted) {
        throw new EmbeddingServiceError(`embedding service response took longer than ${this.opts.timeoutMs} ms`, res.status, true);
      }
      throw err;
    }
    if (!res.ok) {
      const retryable = res.status === 429 || res.status >= 500;
      const e = new EmbeddingServiceError(`embedding service answered HTTP ${res.status}${snippet(body)}`, res.status, retryable);
      const retryAfter = parseRetryAfter(res.headers.get('retry-after'));
      if (retryAfter !== undefined) e.retryAfterMs = retryAfter;
      throw e;
    }
    return this.parse(body, input.length);
  }

  private parse(body: string, expected: number): Float32Array[] {
    const bad = (why: string) => new EmbeddingServiceError(`embedding service returned an invalid response: ${why}`, 200, false);
    let json: unknown;
    try {
      json = JSON.parse(body);
    } catch {
      throw bad('not JSON');
    }
    const data = (json as { data?: unknown })?.data;
    if (!Array.isArray(data)) throw bad('no data array');
    if (data.length !== expected) throw bad(`${data.length} embeddings for ${expected} inputs`);
    const out = new Array<Float32Array>(expected);
    data.forEach((item, pos) => {
      const emb = (item as { embedding?: unknown })?.embedding;
      const idx = (item as { index?: unknown })?.index ?? pos;
      if (typeof idx !== 'number' || !Number.isInteger(idx) || idx < 0 || idx >= expected || out[idx]) throw bad(`bad or repeated index ${String(idx)}`);
      if (!Array.isArray(emb) || emb.length === 0) throw bad(`item ${idx} has no embedding array (base64 encoding is not supported)`);
      if (this.dim > 0 && emb.length !== this.dim) throw bad(`dimension ${emb.length}, expected ${this.dim}`);
      if (!emb.every((x) => typeof x === 'number' && Number.isFinite(x))) throw bad(`item ${idx} has non-numeric values`);
      try {
        out[idx] = l2Normalize(Float32Array.from(emb as number[]));
      } catch {
        throw bad(`item ${idx} is a zero vector`);
      }
    });
    const dims = new Set(out.map((v) => v.length));
    if (dims.size !== 1) throw bad('embeddings of different dimensions');
    return out;
  }
}

async function readBody(res: Response, max: number): Promise<string> {
  try {
    checkDeclaredLength(res.headers.get('content-length'), max);
    if (!res.body) return '';
    return (await readBounded(res.body as unknown as AsyncIterable<Uint8Array>, max)).toString('utf8');
  } catch (err) {
    if (!(err instanceof BodyTooLargeError)) throw err;
    await res.body?.cancel().catch(() => undefined);
    const size = err.declared !== undefined ? `${err.declared} bytes` : `over ${max} bytes`;
    throw new EmbeddingServiceError(`embedding service response too large (${size})`, res.status, false);
  }
}

function snippet(body: string): string {
  const s = body.replace(/\s+/g, ' ').trim().slice(0, 200);
  return s ? `: ${s}` : '';
}

function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = (err as { cause?: unknown }).cause;
  const code = cause && typeof cause === 'object' && 'code' in cause ? ` (${String((cause as { code: unknown }).code)})` : '';
  return `${err.message}${code}`;
}
