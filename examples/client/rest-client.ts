/**
 * A typed client for the REST API: openapi-fetch over the types openapi-typescript generated from
 * openapi/openapi.json. Paths, path parameters, request bodies and answers are all checked by the
 * compiler, e.g. `client.GET('/v1/jobs/{job_id}', { params: { path: { job_id } } })`.
 */
import createClient, { type Client } from 'openapi-fetch';
import type { paths } from './openapi-types.ts';
import type { ErrorBody } from './wire-types.ts';

export type RagRestClient = Client<paths>;

export interface RagClientOptions {
  /** The server's origin, e.g. http://127.0.0.1:8000 */
  baseUrl: string;
  /** One of the server's API_KEYS, sent as `Authorization: Bearer` (omit when auth is off). */
  apiKey?: string;
  /** A fetch to use instead of the global one (a proxy agent, a test double). */
  fetch?: (input: Request) => Promise<Response>;
}

export function createRagClient(opts: RagClientOptions): RagRestClient {
  return createClient<paths>({
    baseUrl: opts.baseUrl.replace(/\/+$/, ''),
    ...(opts.apiKey ? { headers: { authorization: `Bearer ${opts.apiKey}` } } : {}),
    ...(opts.fetch ? { fetch: opts.fetch } : {}),
  });
}

/** A failed call, with the server's stable error code and request id. */
export class RagApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly requestId: string | null,
    message: string,
  ) {
    super(message);
    this.name = 'RagApiError';
  }
}

function isErrorBody(x: unknown): x is ErrorBody {
  return typeof x === 'object' && x !== null && typeof (x as ErrorBody).code === 'string' && typeof (x as ErrorBody).error === 'string';
}

/**
 * The data of an openapi-fetch answer, or a RagApiError: lets callers write
 * `const health = ok(await client.GET('/v1/system/health'))` and keep the type of the 2xx body.
 */
export function ok<T>(answer: { data?: T; error?: unknown; response: Response }): T {
  if (answer.data !== undefined && answer.response.ok) return answer.data;
  const { error, response } = answer;
  if (isErrorBody(error)) throw new RagApiError(response.status, error.code, error.request_id, `${error.code}: ${error.error}`);
  throw new RagApiError(response.status, 'HTTP_ERROR', response.headers.get('x-request-id'), `HTTP ${response.status} ${response.statusText}`);
}
