/**
 * The web console (console/, built by Vite into dist/console/ by `npm run build`): static files at
 * /console/ through @fastify/static, /console redirected to /console/. Hashed assets are cached
 * for a year (their names change with their content); index.html is revalidated every time so a
 * new build shows at once. The files are public (plugins/auth.ts lets /console through): the page
 * asks for the API key and sends it on its own calls to /v1. Without a build the console answers
 * 503 with a page that says how to build it, instead of a bare 404.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { PROJECT_ROOT } from '../src/project-root.ts';
import { lazyMount } from './lazy-mount.ts';

export const CONSOLE_PREFIX = '/console/';
export const CONSOLE_DIR = path.join(PROJECT_ROOT, 'dist', 'console');

const NOT_BUILT =
  'The console is not built: run "npm run build" (it runs "vite build --config console/vite.config.ts" into dist/console).';

function notBuilt(request: FastifyRequest, reply: FastifyReply) {
  reply.code(503).header('cache-control', 'no-store');
  if ((request.headers.accept ?? '').includes('text/html')) {
    return reply
      .type('text/html; charset=utf-8')
      .send(`<!doctype html><html lang="en"><meta charset="utf-8"><title>Console not built</title><h1>Console not built</h1><p>${NOT_BUILT}</p></html>`);
  }
  return reply.type('application/json; charset=utf-8').send({ error: NOT_BUILT, request_id: request.id });
}

export interface ConsoleOptions {
  /** The built files; dist/console by default (tests point it elsewhere). */
  root?: string;
}

export default async function consolePlugin(app: FastifyInstance, opts: ConsoleOptions = {}): Promise<void> {
  const root = opts.root ?? CONSOLE_DIR;
  if (!existsSync(path.join(root, 'index.html'))) {
    const hide = { schema: { hide: true } };
    app.get('/console', hide, notBuilt);
    app.get('/console/', hide, notBuilt);
    app.get('/console/*', hide, notBuilt);
    return;
  }
  // Relative asset URLs and the hash router need the trailing slash.
  app.get('/console', { schema: { hide: true } }, (request, reply) => {
    const q = request.url.indexOf('?');
    return reply.redirect(`${CONSOLE_PREFIX}${q >= 0 ? request.url.slice(q) : ''}`, 301);
  });
  lazyMount(app, { urls: [CONSOLE_PREFIX, `${CONSOLE_PREFIX}*`], setup: (inner) => serveFiles(inner, root) });
}

async function serveFiles(inner: FastifyInstance, root: string): Promise<void> {
  const { default: fastifyStatic } = await import('@fastify/static');
  await inner.register(fastifyStatic, {
    root,
    prefix: CONSOLE_PREFIX,
    decorateReply: false,
    // An array: with preCompressed, @fastify/static finds a folder's index only from a list.
    index: ['index.html'],
    cacheControl: false,
    // index.html.br, assets/*.js.gz...: written next to each file by console/vite.config.ts (a
    // directory request that accepts br finds no index without its twin).
    preCompressed: true,
    etag: true,
    lastModified: true,
    setHeaders(reply, filePath) {
      const rel = path.relative(root, filePath);
      // Vite names every asset after its content hash (console/vite.config.ts).
      if (rel.startsWith(`assets${path.sep}`)) reply.header('cache-control', 'public, max-age=31536000, immutable');
      else reply.header('cache-control', 'no-cache');
    },
  });
}
