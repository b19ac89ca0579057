/**
 * API keys. When API_KEYS is set, every route except the open ones (/health, /docs, /openapi.json,
 * and the web console's static files under /console: the page asks for the key and sends it to /v1)
 * needs `Authorization: Bearer <key>` or `x-api-key: <key>`. Keys are compared in constant time.
 * The check is an onRequest hook, so it runs before the tool-call budgets are counted (preParsing,
 * plugins/rate-limit.ts): a request without a valid key is counted only against the budgets of
 * failed requests, never against a client's or the server-wide one.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import fp from 'fastify-plugin';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { toolError } from '../src/errors.ts';

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
  const keys = app.config.apiKeys;
  if (keys.length === 0) return;
  app.addHook('onRequest', async (request, reply) => {
    if (isOpenRoute(request.routeOptions.url)) return;
    if (isValidApiKey(keys, presentedApiKey(request))) return;
    // Past its own budget a failed request gets 429, so keys cannot be guessed at full speed.
    await app.consumeFailedAuth(request, reply);
    reply.header('www-authenticate', 'Bearer');
    throw toolError('UNAUTHORIZED', 'A valid API key is required: send "Authorization: Bearer <key>" or "x-api-key: <key>"');
  });
};

export default fp(authPlugin, { name: 'auth', fastify: '5.x', dependencies: ['services', 'rate-limit'] });
