/**
 * DNS-rebinding protection. When the server is bound to loopback, a web page elsewhere could point
 * its own host name at 127.0.0.1 and drive this server from the victim's browser. Requests must then
 * name a loopback host (with our port) in Host, and Origin, when sent, must be a loopback origin too.
 * ALLOWED_ORIGINS adds exact Host or Origin values (e.g. a reverse proxy's name).
 */
import type { AddressInfo } from 'node:net';
import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { isLoopbackHost } from '../src/loopback.ts';
import { sendError } from './error-handler.ts';

/** The port we listen on, or null when not listening (app.inject in tests). */
function listeningPort(app: FastifyInstance): number | null {
  const addr = app.server.address() as AddressInfo | string | null;
  return addr && typeof addr === 'object' ? addr.port : null;
}

function hostAllowed(host: string, port: number | null, defaultPort: number): boolean {
  const m = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(host.toLowerCase());
  if (!m || !isLoopbackHost(m[1])) return false;
  if (port === null) return true;
  return Number(m[2] ?? defaultPort) === port;
}

function originAllowed(origin: string, port: number | null): boolean {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
  return hostAllowed(url.host, port, url.protocol === 'https:' ? 443 : 80);
}

const hostGuardPlugin: FastifyPluginAsync = async (app) => {
  if (!isLoopbackHost(app.config.HOST)) return;
  const extra = new Set(app.config.allowedOrigins.map((o) => o.toLowerCase()));
  // The port is read once when the server starts listening, not from the socket on every request.
  let port: number | null = null;
  app.server.on('listening', () => {
    port = listeningPort(app);
  });
  app.server.on('close', () => {
    port = null;
  });
  // A callback hook (no promise per call); a refused request is answered here and goes no further.
  app.addHook('onRequest', (request, reply, done) => {
    // The health probe comes from the machine itself, with whatever Host the probe tool sends.
    if (request.routeOptions.url === '/health') return done();
    const host = request.headers.host ?? '';
    if (!extra.has(host.toLowerCase()) && !hostAllowed(host, port, 80)) {
      void sendError(request, reply, 'URL_NOT_ALLOWED', `Host header not allowed: ${JSON.stringify(host.slice(0, 100))}`);
      return;
    }
    const origin = request.headers.origin;
    if (origin !== undefined && !extra.has(origin.toLowerCase()) && !originAllowed(origin, port)) {
      void sendError(request, reply, 'URL_NOT_ALLOWED', `Origin not allowed: ${JSON.stringify(origin.slice(0, 100))}`);
      return;
    }
    done();
  });
};

export default fp(hostGuardPlugin, { name: 'host-guard', fastify: '5.x', dependencies: ['services'] });
