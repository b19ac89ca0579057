/**
 * SSRF-safe downloader: pooled keep-alive connections (undici Agent), every resolved address
 * checked at connection time, redirects followed by hand (each hop re-checked), retries with
 * backoff on network errors, 5xx and 429, and a streaming byte cap that stops reading at the cap.
 */
import { createHash } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import { pipeline, type Readable } from 'node:stream';
import zlib from 'node:zlib';
import type { Agent, Dispatcher } from 'undici';
import { isToolError, toolError, type ToolError } from '../errors.ts';
import type { DownloadedFile } from '../cache/cache-registry.ts';
import { createAddressPolicy, type AddressPolicy } from './address-policy.ts';
import { createGuardedLookup, isAddressDeniedError, systemResolveAll, type ResolveAll } from './guarded-lookup.ts';
import { allowedHostsHint, bypassesAddressCheck, checkRequestUrl } from './url-policy.ts';
import { filenameFromDisposition, filenameFromUrl } from './filename.ts';
import { abortError } from '../util/abort.ts';
import { BodyTooLargeError, declaredLength, readBounded } from '../util/read-bounded.ts';
import { parseRetryAfter, withRetries } from '../util/retry.ts';

export interface DownloaderOptions {
  policy: AddressPolicy;
  /** MAX_DOWNLOAD_BYTES: reading stops at this many (decoded) bytes. */
  maxBytes: number;
  /** DNS resolution (tests inject a fake; default: the system resolver). */
  resolveAll?: ResolveAll;
  maxAttempts?: number;
  /** Wait before attempt 2, 3, ... (the last value repeats). */
  retryDelaysMs?: readonly number[];
  /** A Retry-After longer than this fails at once instead of waiting. */
  maxRetryAfterMs?: number;
  maxRedirects?: number;
  connectTimeoutMs?: number;
  headersTimeoutMs?: number;
  /** Longest silence between two body chunks. */
  bodyTimeoutMs?: number;
  userAgent?: string;
}

export interface DownloadCallOptions {
  signal: AbortSignal;
  log?: { debug(obj: object, msg?: string): void; warn(obj: object, msg?: string): void };
}

export const DEFAULT_RETRY_DELAYS_MS = [1000, 3000, 5000] as const;

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/** Network error codes worth another attempt (transient by nature). */
const RETRYABLE_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'EAI_AGAIN',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'Z_BUF_ERROR',
]);

const CODE_TEXT: Record<string, string> = {
  ECONNRESET: 'connection reset',
  ECONNREFUSED: 'connection refused',
  ETIMEDOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ENOTFOUND: 'host name not found',
  EAI_AGAIN: 'temporary DNS failure',
  UND_ERR_CONNECT_TIMEOUT: 'connect timeout',
  UND_ERR_HEADERS_TIMEOUT: 'no response headers in time',
  UND_ERR_BODY_TIMEOUT: 'response body stalled',
  UND_ERR_SOCKET: 'socket closed by the server',
};

/** A failure that another attempt may cure. */
class RetryableFailure extends Error {
  constructor(
    readonly error: ToolError,
    readonly retryAfterMs?: number,
  ) {
    super(error.message);
  }
}

/** What probe() answers: the final response after redirects (a body only for 2xx). */
export interface ProbeResponse {
  status: number;
  /** Lower-case names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  body: Buffer;
  final_url: string;
}

const downloadAborted = (signal: AbortSignal) => abortError(signal, 'Download');

const header = (h: Record<string, string | string[] | undefined>, name: string): string | undefined => {
  const v = h[name];
  return Array.isArray(v) ? v[0] : v;
};

function errorCode(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}

function findAddressDenial(err: unknown) {
  for (let e: unknown = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (isAddressDeniedError(e)) return e;
    const nested = (e as { errors?: unknown[] }).errors;
    if (Array.isArray(nested)) for (const n of nested) if (isAddressDeniedError(n)) return n;
  }
  return undefined;
}

interface Pools {
  guarded: Agent;
  open: Agent;
  request: typeof import('undici').request;
}

export class Downloader {
  private readonly opts: Required<Omit<DownloaderOptions, 'resolveAll'>>;
  /**
   * The connection pools, made by the first download (undici loads then, not at server start):
   * `guarded` for hosts under the address rule, `open` for ALLOWED_HOSTS opt-ins (or everything
   * with ALLOW_PRIVATE_NETWORKS).
   */
  private pools: Promise<Pools> | undefined;
  private readonly makePools: () => Promise<Pools>;
  /** Downloads in progress, by the controller that cancels them on close(). */
  private readonly active = new Map<AbortController, Promise<DownloadedFile>>();
  private closing = false;

  constructor(options: DownloaderOptions) {
    this.opts = {
      policy: options.policy,
      maxBytes: options.maxBytes,
      maxAttempts: options.maxAttempts ?? 3,
      retryDelaysMs: options.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS,
      maxRetryAfterMs: options.maxRetryAfterMs ?? 30_000,
      maxRedirects: options.maxRedirects ?? 5,
      connectTimeoutMs: options.connectTimeoutMs ?? 10_000,
      headersTimeoutMs: options.headersTimeoutMs ?? 60_000,
      bodyTimeoutMs: options.bodyTimeoutMs ?? 60_000,
      userAgent: options.userAgent ?? 'rag-document-server/1.0',
    };
    const resolveAll = options.resolveAll ?? systemResolveAll;
    const agentOptions = (policy: AddressPolicy): Agent.Options => ({
      connect: { timeout: this.opts.connectTimeoutMs, lookup: createGuardedLookup(policy, resolveAll) },
      connections: 16,
      keepAliveTimeout: 30_000,
      keepAliveMaxTimeout: 120_000,
      headersTimeout: this.opts.headersTimeoutMs,
      bodyTimeout: this.opts.bodyTimeoutMs,
    });
    this.makePools = async () => {
      const { Agent, request } = await import('undici');
      const guarded = new Agent(agentOptions(options.policy));
      const open = options.policy.allowPrivateNetworks
        ? guarded
        : new Agent(agentOptions(createAddressPolicy({ allowPrivateNetworks: true, allowedHosts: [] })));
      return { guarded, open, request };
    };
  }

  /** Downloads one URL. Throws URL_NOT_ALLOWED, DOWNLOAD_ERROR, PAYLOAD_TOO_LARGE or the abort error. */
  async download(rawUrl: string, call: DownloadCallOptions): Promise<DownloadedFile> {
    if (this.closing) throw toolError('DOWNLOAD_ERROR', 'Download refused: the server is shutting down');
    // Our own controller lets close() cancel what is still running.
    const own = new AbortController();
    const running = this.attempts(rawUrl, { ...call, signal: AbortSignal.any([call.signal, own.signal]) });
    this.active.set(own, running);
    try {
      return await running;
    } finally {
      this.active.delete(own);
    }
  }

  private attempts(rawUrl: string, call: DownloadCallOptions): Promise<DownloadedFile> {
    const { signal } = call;
    const delays = this.opts.retryDelaysMs;
    return withRetries(() => this.followRedirects(rawUrl, signal), {
      attempts: this.opts.maxAttempts,
      backoffMs: (retry) => delays[Math.min(retry - 1, delays.length - 1)] ?? 1000,
      retryable: (err) => err instanceof RetryableFailure && { retryAfterMs: err.retryAfterMs },
      maxRetryAfterMs: this.opts.maxRetryAfterMs,
      overLimit: 'fail',
      retryAfterTooLong: (err, ms) =>
        toolError(
          'DOWNLOAD_ERROR',
          `${(err as RetryableFailure).error.message}; the server asks to retry after ${Math.ceil(ms / 1000)} s, longer than this server waits`,
        ),
      giveUp: (err, attempts) =>
        err instanceof RetryableFailure ? toolError('DOWNLOAD_ERROR', `${err.error.message} (after ${attempts} attempts)`, err.error.cause) : err,
      onRetry: ({ attempt, delayMs, err }) =>
        call.log?.warn({ url: rawUrl, attempt, delay_ms: delayMs, reason: (err as RetryableFailure).error.message }, 'download failed, retrying'),
      signal,
      abortReason: downloadAborted,
    });
  }

  /**
   * One GET with the caller's extra headers (conditional requests of source syncs: If-None-Match,
   * If-Modified-Since), redirects followed by hand with every hop checked as download() checks it,
   * and the same byte cap. Unlike download() it answers every final status (304, 404, 5xx) instead
   * of throwing, and does not retry: a sync reports a transient failure and keeps the old version.
   * Network failures throw DOWNLOAD_ERROR with `transient` set when another try may cure them.
   */
  async probe(rawUrl: string, call: { headers: Record<string, string>; signal: AbortSignal }): Promise<ProbeResponse> {
    if (this.closing) throw toolError('DOWNLOAD_ERROR', 'Download refused: the server is shutting down');
    const own = new AbortController();
    const signal = AbortSignal.any([call.signal, own.signal]);
    const running = this.probeHops(rawUrl, call.headers, signal);
    const tracked = running.then(() => ({}) as DownloadedFile, () => ({}) as DownloadedFile);
    this.active.set(own, tracked);
    try {
      return await running;
    } catch (err) {
      if (err instanceof RetryableFailure) throw Object.assign(err.error, { transient: true });
      throw err;
    } finally {
      this.active.delete(own);
    }
  }

  private async probeHops(rawUrl: string, extra: Record<string, string>, signal: AbortSignal): Promise<ProbeResponse> {
    let url = checkRequestUrl(rawUrl, this.opts.policy);
    const { guarded, open, request } = await (this.pools ??= this.makePools());
    for (let hop = 0; ; hop++) {
      const dispatcher = bypassesAddressCheck(url, this.opts.policy) ? open : guarded;
      let res: Dispatcher.ResponseData;
      try {
        res = await request(url, {
          dispatcher,
          method: 'GET',
          signal,
          headers: { 'user-agent': this.opts.userAgent, accept: '*/*', 'accept-encoding': 'gzip, deflate, br', ...extra },
        });
      } catch (err) {
        throw this.mapNetworkError(err, url, signal);
      }
      const status = res.statusCode;
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) headers[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : String(v);
      if (REDIRECT_STATUSES.has(status) && headers.location) {
        await res.body.dump().catch(() => undefined);
        if (hop >= this.opts.maxRedirects) throw toolError('DOWNLOAD_ERROR', `Too many redirects (more than ${this.opts.maxRedirects}) starting at ${rawUrl.slice(0, 200)}`);
        let next: string;
        try {
          next = new URL(headers.location, url).href;
        } catch {
          throw toolError('DOWNLOAD_ERROR', `HTTP ${status} redirect to an invalid Location from ${url.host}`);
        }
        try {
          url = checkRequestUrl(next, this.opts.policy);
        } catch (err) {
          if (isToolError(err) && err.code === 'URL_NOT_ALLOWED') throw toolError('URL_NOT_ALLOWED', `Redirect refused: ${err.message}`);
          throw toolError('DOWNLOAD_ERROR', `Redirect to an invalid URL from ${url.host}`, err);
        }
        continue;
      }
      if (status >= 200 && status < 300) {
        const file = await this.readBody(res, url, signal);
        return { status, headers, body: file.bytes, final_url: url.href };
      }
      await res.body.dump().catch(() => undefined);
      return { status, headers, body: Buffer.alloc(0), final_url: url.href };
    }
  }

  /** Lets in-flight downloads finish for up to graceMs, then cancels them and closes the pools. */
  async close(graceMs = 2000): Promise<void> {
    this.closing = true;
    if (this.active.size > 0) {
      let timer: NodeJS.Timeout | undefined;
      const grace = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, graceMs);
        timer.unref?.();
      });
      await Promise.race([Promise.allSettled([...this.active.values()]), grace]);
      clearTimeout(timer);
      const shutdown = toolError('DOWNLOAD_ERROR', 'Download cancelled: the server is shutting down');
      for (const controller of this.active.keys()) controller.abort(shutdown);
      await Promise.allSettled([...this.active.values()]);
    }
    if (this.pools) {
      const { guarded, open } = await this.pools;
      await Promise.all([...new Set([guarded, open])].map((a) => a.close()));
    }
  }

  private async followRedirects(rawUrl: string, signal: AbortSignal): Promise<DownloadedFile> {
    let url = checkRequestUrl(rawUrl, this.opts.policy);
    const { guarded, open, request } = await (this.pools ??= this.makePools());
    for (let hop = 0; ; hop++) {
      const dispatcher = bypassesAddressCheck(url, this.opts.policy) ? open : guarded;
      let res: Dispatcher.ResponseData;
      try {
        res = await request(url, {
          dispatcher,
          method: 'GET',
          signal,
          headers: {
            'user-agent': this.opts.userAgent,
            accept: '*/*',
            'accept-encoding': 'gzip, deflate, br',
          },
        });
      } catch (err) {
        throw this.mapNetworkError(err, url, signal);
      }
      const status = res.statusCode;
      if (REDIRECT_STATUSES.has(status)) {
        await res.body.dump().catch(() => undefined);
        const location = header(res.headers, 'location');
        if (!location) throw toolError('DOWNLOAD_ERROR', `HTTP ${status} redirect without a Location header from ${url.host}`);
        if (hop >= this.opts.maxRedirects) {
          throw toolError('DOWNLOAD_ERROR', `Too many redirects (more than ${this.opts.maxRedirects}) starting at ${rawUrl.slice(0, 200)}`);
        }
        let next: string;
        try {
          next = new URL(location, url).href;
        } catch {
          throw toolError('DOWNLOAD_ERROR', `HTTP ${status} redirect to an invalid Location from ${url.host}`);
        }
        try {
          url = checkRequestUrl(next, this.opts.policy);
        } catch (err) {
          if (isToolError(err) && err.code === 'URL_NOT_ALLOWED') {
            throw toolError('URL_NOT_ALLOWED', `Redirect refused: ${err.message}`);
          }
          throw toolError('DOWNLOAD_ERROR', `Redirect to an invalid URL from ${url.host}`, err);
        }
        continue;
      }
      if (status >= 200 && status < 300) return this.readBody(res, url, signal);
      await res.body.dump().catch(() => undefined);
      const failure = toolError('DOWNLOAD_ERROR', `HTTP ${status} ${STATUS_CODES[status] ?? ''} from ${url.host}`.trim());
      if (status === 429 || status >= 500) {
        throw new RetryableFailure(failure, parseRetryAfter(res.headers['retry-after']));
      }
      throw failure;
    }
  }

  private mapNetworkError(err: unknown, url: URL, signal: AbortSignal): Error {
    if (signal.aborted) return downloadAborted(signal);
    if (isToolError(err) || err instanceof RetryableFailure) return err;
    const denied = findAddressDenial(err);
    if (denied) return toolError('URL_NOT_ALLOWED', `URL not allowed: ${denied.message}${allowedHostsHint(url)}`);
    const code = errorCode(err);
    const what = code ? `${code}${CODE_TEXT[code] ? ` (${CODE_TEXT[code]})` : ''}` : (err as Error)?.message ?? String(err);
    const failure = toolError('DOWNLOAD_ERROR', `Network error contacting ${url.host}: ${what}`, err);
    return code && RETRYABLE_CODES.has(code) ? new RetryableFailure(failure) : failure;
  }

  private async readBody(res: Dispatcher.ResponseData, url: URL, signal: AbortSignal): Promise<DownloadedFile> {
    const max = this.opts.maxBytes;
    const encoding = (header(res.headers, 'content-encoding') ?? '').trim().toLowerCase();
    const tooLarge = () =>
      toolError('PAYLOAD_TOO_LARGE', `The document is larger than the download limit of ${max} bytes (MAX_DOWNLOAD_BYTES)`);
    // A declared length counts encoded bytes; the cap is on decoded ones, checked while reading.
    const declared = declaredLength(res.headers['content-length']);
    if (declared !== undefined && declared > max && (encoding === '' || encoding === 'identity')) {
      res.body.destroy();
      throw tooLarge();
    }
    const decoder =
      encoding === 'gzip' || encoding === 'x-gzip'
        ? zlib.createGunzip()
        : encoding === 'deflate'
          ? zlib.createInflate()
          : encoding === 'br'
            ? zlib.createBrotliDecompress()
            : null;
    const source: Readable = decoder ? pipeline(res.body, decoder, () => undefined) : res.body;
    const hash = createHash('sha256');
    let bytes: Buffer;
    try {
      bytes = await readBounded(source, max, (chunk) => hash.update(chunk));
    } catch (err) {
      source.destroy();
      res.body.destroy();
      if (err instanceof BodyTooLargeError) throw tooLarge();
      if (isToolError(err)) throw err;
      throw this.mapNetworkError(err, url, signal);
    }
    const contentDisposition = header(res.headers, 'content-disposition');
    const contentType = header(res.headers, 'content-type');
    const cacheControl = header(res.headers, 'cache-control');
    const filename = filenameFromDisposition(contentDisposition) ?? filenameFromUrl(url);
    return {
      bytes,
      ...(contentType ? { contentType } : {}),
      ...(contentDisposition ? { contentDisposition } : {}),
      ...(filename ? { filename } : {}),
      ...(cacheControl ? { cacheControl } : {}),
      finalUrl: url.href,
      sha256: hash.digest('hex'),
    };
  }
}
