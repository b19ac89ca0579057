/**
 * The one table of stable error codes. Handlers throw ToolError; the REST adapter maps the code to
 * its HTTP status, the MCP adapter to `isError: true` with `{error, code}`.
 */
export const ERROR_STATUS = {
  VALIDATION_ERROR: 400,
  UNAUTHORIZED: 401,
  URL_NOT_ALLOWED: 403,
  /** The API key may see the collection (or call the tool) but lacks the action the call needs. */
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  /** The request conflicts with what exists: a collection name taken, a job that already ended. */
  CONFLICT: 409,
  /** MCP: a destructive call the user did not confirm (elicitation declined, or no confirm: true). */
  CONFIRMATION_REQUIRED: 400,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_FORMAT: 415,
  PROCESSING_ERROR: 422,
  RATE_LIMITED: 429,
  INTERNAL_ERROR: 500,
  DOWNLOAD_ERROR: 502,
  MODEL_UNAVAILABLE: 503,
  /** DATA_DIR cannot be written (full, read-only, no permission): an operation that needs the disk. */
  STORAGE_UNAVAILABLE: 503,
  /**
   * A native addon (better-sqlite3) was built for another Node.js than the one running the server:
   * the message names both and the fix (`npm rebuild` with the Node.js that starts the server).
   */
  NATIVE_ADDON_MISMATCH: 503,
  /** Extraction is at capacity (EXTRACT_CONCURRENCY or MAX_MEMORY_MB) and its queue is full: retry later. */
  OVERLOADED: 503,
  /** Rate limits cannot be checked (REDIS_URL unreachable) and REDIS_FAILURE_MODE=closed: retry later. */
  RATE_LIMIT_UNAVAILABLE: 503,
  /** The ingestion queue (Redis, with REDIS_URL) cannot be reached: retry when Redis is back. */
  QUEUE_UNAVAILABLE: 503,
  /**
   * A collection's index is still loading (a snapshot read or a catch-up from the database after a
   * restart) past SEARCH_LOAD_WAIT_MS: retry after the Retry-After seconds; the load goes on.
   */
  INDEX_LOADING: 503,
  /** The server is stopping: a call still running at SHUTDOWN_TIMEOUT, or one that arrived meanwhile. */
  SHUTTING_DOWN: 503,
  TIMEOUT: 504,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export class ToolError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  /** Seconds the client should wait before retrying; the REST adapter sends it as Retry-After. */
  retryAfterS?: number;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ToolError';
    this.code = code;
    this.status = ERROR_STATUS[code];
  }
}

export function toolError(code: ErrorCode, message: string, cause?: unknown): ToolError {
  return new ToolError(code, message, cause === undefined ? undefined : { cause });
}

export function isToolError(err: unknown): err is ToolError {
  return err instanceof ToolError;
}

/** Public message for a code: 5xx never leak internals (stacks, paths) unless the thrower chose the text. */
export function toPublicError(err: unknown): { code: ErrorCode; status: number; message: string } {
  if (isToolError(err)) return { code: err.code, status: err.status, message: err.message };
  return { code: 'INTERNAL_ERROR', status: 500, message: 'Internal server error' };
}
