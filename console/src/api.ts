// The console's only way to the server: the public REST API on the same origin, with the API key
// (kept in sessionStorage) as a Bearer token. Failures become ApiError {code, message, request_id}
// so every page can show them the same way. events() follows a job's Server-Sent Events with a
// streaming fetch, because EventSource cannot send the Authorization header.

const KEY_STORAGE = 'rag-console.api-key';

export class ApiError extends Error {
  readonly code: string;
  readonly status: number;
  readonly request_id: string | null;
  constructor(code: string, message: string, status: number, requestId: string | null) {
    super(message);
    this.name = 'ApiError';
    this.code = code;
    this.status = status;
    this.request_id = requestId;
  }
}

export function getApiKey(): string {
  try {
    return sessionStorage.getItem(KEY_STORAGE) ?? '';
  } catch {
    return '';
  }
}

const keyListeners = new Set<() => void>();

export function setApiKey(key: string): void {
  try {
    if (key) sessionStorage.setItem(KEY_STORAGE, key);
    else sessionStorage.removeItem(KEY_STORAGE);
  } catch {
    // storage refused (private mode): the key then lasts until the page closes
  }
  memoryKey = key;
  for (const fn of keyListeners) fn();
}

let memoryKey = getApiKey();

export function onApiKeyChange(fn: () => void): () => void {
  keyListeners.add(fn);
  return () => keyListeners.delete(fn);
}

function headers(extra: Record<string, string> = {}): Record<string, string> {
  const h: Record<string, string> = { accept: 'application/json', ...extra };
  const key = memoryKey || getApiKey();
  if (key) h.authorization = `Bearer ${key}`;
  return h;
}

async function toError(res: Response): Promise<ApiError> {
  const requestId = res.headers.get('x-request-id');
  let body: { error?: unknown; code?: unknown; request_id?: unknown } = {};
  try {
    body = (await res.json()) as typeof body;
  } catch {
    // not JSON (a proxy's page): keep the status
  }
  return new ApiError(
    typeof body.code === 'string' ? body.code : `HTTP_${res.status}`,
    typeof body.error === 'string' ? body.error : res.statusText || `HTTP ${res.status}`,
    res.status,
    typeof body.request_id === 'string' ? body.request_id : requestId,
  );
}

export interface RequestOptions {
  signal?: AbortSignal;
  query?: Record<string, string | number | boolean | undefined | null>;
}

/** One call: JSON in (or FormData for uploads), JSON out; throws ApiError. */
export async function api<T>(method: string, path: string, body?: unknown, opts: RequestOptions = {}): Promise<T> {
  let url = path;
  if (opts.query) {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(opts.query)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
    const s = q.toString();
    if (s) url += `?${s}`;
  }
  const init: RequestInit = { method, signal: opts.signal };
  if (body instanceof FormData) {
    init.body = body;
    init.headers = headers();
  } else if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers = headers({ 'content-type': 'application/json' });
  } else {
    init.headers = headers();
  }
  let res: Response;
  try {
    res = await fetch(url, init);
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    throw new ApiError('NETWORK_ERROR', `The server could not be reached: ${(err as Error).message}`, 0, null);
  }
  if (!res.ok) throw await toError(res);
  if (res.status === 204) return undefined as T;
  return (await res.json()) as T;
}

export const get = <T>(path: string, opts?: RequestOptions) => api<T>('GET', path, undefined, opts);
export const post = <T>(path: string, body?: unknown, opts?: RequestOptions) => api<T>('POST', path, body ?? {}, opts);
export const del = <T>(path: string, opts?: RequestOptions) => api<T>('DELETE', path, undefined, opts);

/** Path segment escaping for names and ids. */
export const seg = (s: string) => encodeURIComponent(s);

export interface SseEvent {
  id: string | null;
  event: string;
  data: unknown;
}

/**
 * Follows GET /v1/jobs/{id}/events until the stream ends (after the final `job` event) or
 * `signal` aborts. Resolves when it ends; throws ApiError when the server refuses it.
 */
export async function events(jobId: string, onEvent: (e: SseEvent) => void, signal?: AbortSignal): Promise<void> {
  let res: Response;
  try {
    res = await fetch(`/v1/jobs/${seg(jobId)}/events`, { headers: headers({ accept: 'text/event-stream' }), signal });
  } catch (err) {
    if ((err as Error).name === 'AbortError') return;
    throw new ApiError('NETWORK_ERROR', `The event stream could not be opened: ${(err as Error).message}`, 0, null);
  }
  if (!res.ok || !res.body) throw await toError(res);
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  const dispatch = (frame: string) => {
    let event = 'message';
    let id: string | null = null;
    const data: string[] = [];
    for (const line of frame.split('\n')) {
      if (!line || line.startsWith(':')) continue;
      const i = line.indexOf(':');
      const field = i < 0 ? line : line.slice(0, i);
      const value = i < 0 ? '' : line.slice(i + 1).replace(/^ /, '');
      if (field === 'event') event = value;
      else if (field === 'data') data.push(value);
      else if (field === 'id') id = value;
    }
    if (data.length === 0) return;
    const text = data.join('\n');
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // keep the text
    }
    onEvent({ id, event, data: parsed });
  };
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += value.replace(/\r\n?/g, '\n');
      let cut: number;
      while ((cut = buf.indexOf('\n\n')) >= 0) {
        dispatch(buf.slice(0, cut));
        buf = buf.slice(cut + 2);
      }
    }
    if (buf.trim()) dispatch(buf);
  } catch (err) {
    if ((err as Error).name === 'AbortError') return;
    throw new ApiError('NETWORK_ERROR', `The event stream broke off: ${(err as Error).message}`, 0, null);
  }
}

// Wire types: the contract's (src/contract, derived from the schemas the server publishes), so a
// field the server renames or drops fails the console's type check. Types only: no schema code in
// the bundle.
export type { Chunk, Collection, CollectionList, DocumentWithHistory, Job, Page } from '../../src/contract/kb-types.ts';
export type { Document as DocumentRecord, JobEventWire as JobEvent, JobItemWire as JobItem } from '../../src/contract/kb-types.ts';
export type { Source, SourceList } from '../../src/contract/source-schemas.ts';
