/**
 * Routes whose plugin is set up on their first request instead of at start. Fastify takes no
 * routes once it listens, so the app registers plain GET routes (`/docs`, `/docs/*`) at start; the
 * first request builds a small inner Fastify app with the real plugin (Swagger UI, @fastify/static)
 * and every request is answered by it through inject(). Start-up then skips loading, compiling and
 * registering those packages (about a tenth of the time to the first /health 200, `npm run
 * bench:startup`), and a server nobody opens the docs or the console of never loads them.
 *
 * The outer app's hooks (request id, host guard, auth, rate limit, the error handler) run on the
 * outer routes as on any other; the inner app answers only what its plugin serves. A path it has
 * no route for gets the outer app's coded 404. Bodies are buffered: the assets served this way
 * are a few MB at most (Swagger UI's bundle) and cached by browsers.
 */
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';

/** Set by the inner app's not-found handler, so the outer app answers its own 404. */
const NOT_FOUND_HEADER = 'x-lazy-mount-not-found';
/** Connection-level headers the outer reply sets itself. */
const HOP_BY_HOP = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'date']);

export interface LazyMountOptions {
  /** GET (and HEAD) routes of the outer app that the inner one answers, e.g. ['/docs', '/docs/*']. */
  urls: readonly string[];
  /** Registers the plugin on the inner app; called once, on the first request. */
  setup: (inner: FastifyInstance) => Promise<void>;
}

export function lazyMount(app: FastifyInstance, { urls, setup }: LazyMountOptions): void {
  let inner: Promise<FastifyInstance> | undefined;
  const load = (): Promise<FastifyInstance> =>
    (inner ??= (async () => {
      const f = Fastify({ logger: false });
      f.setNotFoundHandler((_request, reply) => reply.code(404).header(NOT_FOUND_HEADER, '1').send());
      await setup(f);
      await f.ready();
      return f;
    })().catch((err: unknown) => {
      // A failed set-up (a missing package) is tried again by the next request.
      inner = undefined;
      throw err;
    }));
  app.addHook('onClose', async () => {
    if (inner) await (await inner.catch(() => undefined))?.close();
  });

  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    const f = await load();
    const res = await f.inject({ method: request.method as 'GET' | 'HEAD', url: request.raw.url ?? request.url, headers: request.headers });
    if (res.headers[NOT_FOUND_HEADER]) return reply.callNotFound();
    for (const [name, value] of Object.entries(res.headers)) {
      if (value !== undefined && !HOP_BY_HOP.has(name)) reply.header(name, value);
    }
    return reply.code(res.statusCode).send(res.rawPayload);
  };
  for (const url of urls) app.get(url, { schema: { hide: true } }, handler);
}
