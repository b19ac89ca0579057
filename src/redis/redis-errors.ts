/**
 * What the server says about Redis without loading the Redis client: the start-up error (thrown
 * by RedisConnection.start(), caught by src/server.ts to exit with its message) and the URL as it
 * may be shown (never with its password). Kept apart from connection.ts so that importing these
 * does not load ioredis, which a server without REDIS_URL never loads.
 */

/** REDIS_URL with any password (and user name) replaced by "***", for logs, errors and /health. */
export function redactRedisUrl(url: string): string {
  try {
    const u = new URL(url);
    // redis://secret@host is read as a password by some clients: the user name is hidden too.
    if (u.password) u.password = '***';
    if (u.username) u.username = '***';
    return u.toString();
  } catch {
    // Not parseable: show the scheme only, never the rest (it may hold the password).
    return `${url.split(':')[0]}://…`;
  }
}

/** Redis could not be reached when the server started: the server does not start. */
export class RedisStartupError extends Error {
  override name = 'RedisStartupError';
  constructor(readonly url: string, detail: string) {
    super(
      `Redis is not reachable at REDIS_URL=${redactRedisUrl(url)} (${detail}). ` +
        'Start Redis there, fix REDIS_URL, or unset REDIS_URL to run in one process without Redis.',
    );
  }
}
