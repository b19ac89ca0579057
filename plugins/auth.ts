/**
 * API keys. With API_KEYS or API_KEYS_FILE set, every route except the open ones (/health, /docs,
 * /openapi.json, and the web console's static files under /console: the page asks for the key and
 * sends it to /v1) needs `Authorization: Bearer <key>` or `x-api-key: <key>`. Keys are checked by
 * their SHA-256 in constant time (src/auth/key-hash.ts); an expired key is refused like a wrong one.
 * The key's identity, request.principal (name, actions, collections), is what tool calls, MCP and
 * the SSE job stream check; without keys it is full access, as before keys had scopes.
 *
 * The check is an onRequest hook, so it runs before the tool-call budgets are counted (preParsing,
 * plugins/rate-limit.ts): a request without a valid key is counted only against the budgets of
 * failed requests, never against a client's or the server-wide one.
 *
 * Keys live in the file, not in SQLite: it is versioned and deployed like any other config, and
 * SIGHUP reads it again (a file that does not parse keeps the keys as they were, with an error log).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import fp from 'fastify-plugin';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { toolError } from '../src/errors.ts';
import { KeyStore } from '../src/auth/key-store.ts';
import { FULL_ACCESS, NO_ACCESS, type Principal } from '../src/auth/principal.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The key making the request: full access with auth off, no access on the open routes. */
    principal: Principal;
  }
  interface FastifyInstance {
    keyStore: KeyStore;
  }
}

/** Routes that stay open with auth on: liveness for orchestrators, the API description and the console's files. */
export function isOpenRoute(routeUrl: string | undefined): boolean {
  if (!routeUrl) return false;
  return (
    routeUrl === '/health' ||
    routeUrl === '/openapi.json' ||
    routeUrl === '/docs' ||
    routeUrl.startsWith('/docs/') ||
    routeUrl === '/console' ||
    routeUrl.startsWith('/console/')
  );
}

/** The key a request presents, if any. */
export function presentedApiKey(request: FastifyRequest): string | undefined {
  const auth = request.headers.authorization;
  if (typeof auth === 'string') {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    if (m) return m[1];
  }
  const header = request.headers['x-api-key'];
  return typeof header === 'string' && header.length > 0 ? header : undefined;
}

const digest = (s: string) => createHash('sha256').update(s).digest();

/** Compares against every key without an early exit, so timing says nothing about which matched. */
export function isValidApiKey(keys: readonly string[], candidate: string | undefined): boolean {
  if (candidate === undefined) return false;
  const c = digest(candidate);
  let ok = false;
  for (const key of keys) ok = timingSafeEqual(digest(key), c) || ok;
  return ok;
}

const authPlugin: FastifyPluginAsync = async (app) => {
  const store = new KeyStore(app.config);
  app.decorate('keyStore', store);
  app.decorateRequest('principal', null as unknown as Principal);

  if (app.config.API_KEYS_FILE) {
    const reload = () => {
      try {
        const keys = store.reload();
        app.log.info({ event: 'auth.reload', keys }, `API keys reloaded from API_KEYS_FILE: ${keys} keys`);
      } catch (err) {
        app.log.error({ event: 'auth.reload_failed', err: (err as Error).message }, 'API_KEYS_FILE could not be read again: the keys stay as they were');
      }
    };
    process.on('SIGHUP', reload);
    app.addHook('onClose', async () => {
      process.off('SIGHUP', reload);
    });
  }

  /** A request that presented no valid key: counted against the failed-request budgets, then 401. */
  const refuse = async (request: FastifyRequest, reply: FastifyReply, result: { reason?: string; name?: string }): Promise<never> => {
    // Past its own budget a failed request gets 429, so keys cannot be guessed at full speed.
    await app.consumeFailedAuth(request, reply);
    reply.header('www-authenticate', 'Bearer');
    if (result.reason === 'expired') {
      request.log.info({ event: 'auth.expired', key: result.name }, 'expired API key');
      throw toolError('UNAUTHORIZED', `The API key "${result.name}" has expired: ask for a new one`);
    }
    throw toolError('UNAUTHORIZED', 'A valid API key is required: send "Authorization: Bearer <key>" or "x-api-key: <key>"');
  };

  // A callback hook: an accepted request (every request without API keys) needs no promise.
  app.addHook('onRequest', (request, reply, done) => {
    if (!store.enabled) {
      request.principal = FULL_ACCESS;
      return done();
    }
    if (isOpenRoute(request.routeOptions.url)) {
      request.principal = NO_ACCESS;
      return done();
    }
    const result = store.authenticate(presentedApiKey(request));
    if (result.ok) {
      request.principal = result.principal;
      return done();
    }
    request.principal = NO_ACCESS;
    refuse(request, reply, result).catch((err: Error) => done(err));
  });
};

export default fp(authPlugin, { name: 'auth', fastify: '5.x', dependencies: ['services', 'rate-limit'] });
