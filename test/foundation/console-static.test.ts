/**
 * The web console's static files (plugins/console.ts): /console redirects to /console/, index.html
 * is revalidated on every load while hashed assets are cached for good, the files are public with
 * API_KEYS set (the page asks for the key) while /v1 still needs one, and without a build the
 * console answers 503 saying how to build it; brotli and gzip twins go to clients that accept them. Uses the real build in dist/console; when it is
 * missing (a test run without `npm run build`), builds it first with the same Vite config.
 */
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import Fastify from 'fastify';
import t from 'tap';
import consolePlugin, { CONSOLE_DIR } from '../../plugins/console.ts';
import { PROJECT_ROOT } from '../../src/project-root.ts';
import { buildTestApp, tempDir } from '../helper.ts';

if (!existsSync(path.join(CONSOLE_DIR, 'index.html'))) {
  const { build } = await import('vite');
  await build({ configFile: path.join(PROJECT_ROOT, 'console', 'vite.config.ts'), logLevel: 'error' });
}

/** The hashed script and stylesheet index.html loads. */
function assetsOf(html: string): string[] {
  return [...html.matchAll(/(?:src|href)="(\/console\/assets\/[^"]+)"/g)].map((m) => m[1]);
}

t.test('/console redirects to /console/; index.html is no-cache, hashed assets are immutable', async (t) => {
  const app = await buildTestApp(t);

  const bare = await app.inject('/console');
  t.ok([301, 302, 308].includes(bare.statusCode), `redirect status ${bare.statusCode}`);
  t.equal(bare.headers.location, '/console/');

  const index = await app.inject('/console/');
  t.equal(index.statusCode, 200);
  t.match(index.headers['content-type'], /^text\/html/);
  t.equal(index.headers['cache-control'], 'no-cache');
  t.match(index.body, /<div id="app"><\/div>/);

  const assets = assetsOf(index.body);
  t.ok(assets.some((a) => a.endsWith('.js')), 'a script');
  t.ok(assets.some((a) => a.endsWith('.css')), 'a stylesheet');
  for (const asset of assets) {
    const res = await app.inject(asset);
    t.equal(res.statusCode, 200, asset);
    t.equal(res.headers['cache-control'], 'public, max-age=31536000, immutable', asset);
    t.match(res.headers['content-type'], asset.endsWith('.js') ? /javascript/ : /text\/css/, asset);
    t.ok(res.body.length > 0, asset);
  }

  // The build writes .br and .gz twins; clients that accept them get them, with the same caching.
  const script = assets.find((a) => a.endsWith('.js'))!;
  const plain = await app.inject(script);
  for (const encoding of ['br', 'gzip']) {
    const res = await app.inject({ url: script, headers: { 'accept-encoding': encoding } });
    t.equal(res.statusCode, 200);
    t.equal(res.headers['content-encoding'], encoding);
    t.match(res.headers['content-type'], /javascript/);
    t.equal(res.headers['cache-control'], 'public, max-age=31536000, immutable');
    t.ok(res.rawPayload.length < plain.rawPayload.length / 2, `${encoding}: ${res.rawPayload.length} of ${plain.rawPayload.length} bytes`);
  }

  // What a browser sends: index.html still comes (@fastify/static looks for its .br twin first).
  for (const url of ['/console/', '/console/index.html']) {
    const res = await app.inject({ url, headers: { 'accept-encoding': 'gzip, deflate, br, zstd' } });
    t.equal(res.statusCode, 200, url);
    t.equal(res.headers['cache-control'], 'no-cache', url);
  }

  // A revalidation of index.html answers 304 from its ETag.
  const again = await app.inject({ url: '/console/', headers: { 'if-none-match': String(index.headers.etag) } });
  t.equal(again.statusCode, 304);

  t.equal((await app.inject('/console/index.html')).statusCode, 200);
  t.equal((await app.inject('/console/assets/nope-0000.js')).statusCode, 404);
  t.equal((await app.inject('/console/../package.json')).statusCode, 404, 'no way out of the build folder');
});

t.test('with API_KEYS set the console files are public and /v1 still needs a key', async (t) => {
  const app = await buildTestApp(t, { env: { API_KEYS: 'console-key' } });

  const index = await app.inject('/console/');
  t.equal(index.statusCode, 200, 'index.html without a key');
  for (const asset of assetsOf(index.body)) t.equal((await app.inject(asset)).statusCode, 200, `${asset} without a key`);
  t.equal((await app.inject('/console')).statusCode, 301, 'the redirect without a key');

  const noKey = await app.inject('/v1/collections');
  t.equal(noKey.statusCode, 401);
  t.equal(noKey.json().code, 'UNAUTHORIZED');
  t.equal((await app.inject({ url: '/v1/collections', headers: { authorization: 'Bearer console-key' } })).statusCode, 200);
  t.equal((await app.inject('/consolex')).statusCode, 401, 'only /console itself is open, not every path that starts with it');
});

t.test('without a build the console answers 503 saying how to build it', async (t) => {
  const root = path.join(tempDir(t), 'empty');
  mkdirSync(root);
  const app = Fastify();
  await app.register(consolePlugin, { root });
  t.teardown(() => app.close());

  const page = await app.inject({ url: '/console/', headers: { accept: 'text/html' } });
  t.equal(page.statusCode, 503);
  t.match(page.headers['content-type'], /^text\/html/);
  t.match(page.body, /npm run build/);

  const json = await app.inject({ url: '/console/assets/x.js' });
  t.equal(json.statusCode, 503);
  t.match(json.json().error, /npm run build/);
  t.equal((await app.inject('/console')).statusCode, 503);
});
