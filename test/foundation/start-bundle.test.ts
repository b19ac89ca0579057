/**
 * The start bundle and its code cache (bin/cached-bundle.js, scripts/build.mjs): a cache is used
 * only for the exact bytes it was made from, a stale, damaged or missing one costs a compile and
 * nothing else, and the build's bundle loads every external package it requires. The bin itself
 * (HTTP, MCP, every format) is driven from this bundle by compiled-build.test.ts.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import t from 'tap';
// @ts-expect-error: plain JavaScript (bin/), no declarations
import { cacheFileOf, cacheKeyOf, loadBundle } from '../../bin/cached-bundle.js';
import { tempDir } from '../helper.ts';

interface Loaded {
  exports: Record<string, unknown>;
  cache: boolean;
  write: () => boolean;
}
const load = loadBundle as (bundle: string, resolve?: (s: string) => string) => Loaded;

const ROOT = path.resolve(import.meta.dirname, '../..');
const BUNDLE = path.join(ROOT, 'dist', 'server.cjs');

/** A small CommonJS bundle whose answer depends on a constant, with a function worth caching. */
function bundleSource(answer: string): string {
  return `
    const fib = (n) => (n < 2 ? n : fib(n - 1) + fib(n - 2));
    exports.answer = () => '${answer}';
    exports.fib = fib;
    exports.meta = () => ({ url: __rdsImportMeta.url, resolved: __rdsImportMeta.resolve('x'), file: __filename, self: this === exports });
    exports.strict = (function () { return this === undefined; })();
    exports.path = require('node:path').basename(__filename);
  `;
}

t.test('a cache is written, then used; the bundle sees a CommonJS scope and import.meta', async (t) => {
  const dir = tempDir(t);
  const bundle = path.join(dir, 'b.cjs');
  fs.writeFileSync(bundle, bundleSource('one'));
  const first = load(bundle, (s) => `resolved:${s}`);
  t.equal(first.cache, false, 'no cache yet');
  t.equal(first.exports.answer!.constructor, Function);
  t.equal((first.exports.fib as (n: number) => number)(20), 6765, 'runs');
  t.same((first.exports.meta as () => unknown)(), { url: `file://${bundle}`, resolved: 'resolved:x', file: bundle, self: true }, 'import.meta, __filename, this');
  t.equal(first.exports.strict, true, 'strict mode, as an ES module is');
  t.equal(first.exports.path, 'b.cjs', 'require() resolves from the bundle');
  t.equal(first.write(), true, 'the cache is written');
  t.ok(fs.statSync(cacheFileOf(bundle)).size > 32, 'key and V8 data');
  t.same(fs.readdirSync(dir).sort(), ['b.cjs', 'b.cjs.cache'], 'no temporary file is left');

  const second = load(bundle);
  t.equal(second.cache, true, 'V8 takes the cache');
  t.equal((second.exports.answer as () => string)(), 'one');
  t.equal((second.exports.fib as (n: number) => number)(20), 6765);
});

t.test('a cache made from other bytes of the same length is not used', async (t) => {
  const dir = tempDir(t);
  const bundle = path.join(dir, 'b.cjs');
  fs.writeFileSync(bundle, bundleSource('one'));
  t.equal(load(bundle).write(), true);
  // Same length: V8 alone would take the old cache (it matches a source by its length).
  fs.writeFileSync(bundle, bundleSource('two'));
  const changed = load(bundle);
  t.equal(changed.cache, false, 'the key differs: not used');
  t.equal((changed.exports.answer as () => string)(), 'two', 'the new code runs');
  t.equal(changed.write(), true);
  t.equal(load(bundle).cache, true, 'the rewritten cache is used');
});

t.test('a damaged or unwritable cache costs a compile, never a failure', async (t) => {
  const dir = tempDir(t);
  const bundle = path.join(dir, 'b.cjs');
  fs.writeFileSync(bundle, bundleSource('one'));
  t.equal(load(bundle).write(), true);
  const cacheFile = cacheFileOf(bundle);
  const bytes = fs.readFileSync(cacheFile);
  // The right key, then V8 data with a flipped byte in its payload.
  bytes[bytes.length - 100] ^= 0xff;
  fs.writeFileSync(cacheFile, bytes);
  const damaged = load(bundle);
  t.equal(damaged.cache, false, 'damaged V8 data is not handed to V8 (it would take it)');
  t.equal((damaged.exports.answer as () => string)(), 'one', 'the bundle compiles and runs');
  fs.writeFileSync(cacheFile, Buffer.from('short'));
  const short = load(bundle);
  t.equal(short.cache, false, 'a file shorter than the key is ignored');
  t.equal((short.exports.fib as (n: number) => number)(10), 55);
  fs.rmSync(cacheFile);
  fs.mkdirSync(cacheFile); // where the cache would go is a folder: the rename fails
  const blocked = load(bundle);
  t.equal(blocked.cache, false);
  t.equal(blocked.write(), false, 'the write fails quietly');
  t.same(fs.readdirSync(dir).sort(), ['b.cjs', 'b.cjs.cache'], 'and leaves no temporary file');
});

t.test('the build: a start bundle whose cache V8 takes, and whose external packages all load', async (t) => {
  t.ok(fs.existsSync(BUNDLE), 'dist/server.cjs is built (npm run build)');
  const key = (cacheKeyOf as (bytes: Buffer) => Buffer)(fs.readFileSync(BUNDLE));
  const cache = fs.readFileSync(cacheFileOf(BUNDLE));
  t.ok(cache.subarray(0, 32).equals(key), 'the cache beside it was made from these bytes (the build writes it; any start under other V8 flags rewrites it, same key)');
  // In processes of their own: evaluating the bundle defines the whole server (main() is not
  // called). The first makes sure the cache suits this process's V8 flags, the second must take it.
  const check = (write: boolean) =>
    JSON.parse(
      execFileSync(process.execPath, ['--input-type=module', '-e', `
        import { loadBundle } from ${JSON.stringify(path.join(ROOT, 'bin', 'cached-bundle.js'))};
        const { exports, cache, write } = loadBundle(${JSON.stringify(BUNDLE)}, (s) => import.meta.resolve(s));
        const wrote = ${write} && !cache ? write() : false;
        process.stdout.write(JSON.stringify({ cache, wrote, main: typeof exports.main }));
        process.exit(0);
      `], { encoding: 'utf8', env: { PATH: process.env.PATH ?? '' } }),
    ) as { cache: boolean; wrote: boolean; main: string };
  const first = check(true);
  t.equal(first.main, 'function', 'main is exported');
  t.ok(first.cache || first.wrote, 'the cache was taken, or rewritten for these flags');
  t.same(check(false), { cache: true, wrote: false, main: 'function' }, 'V8 takes the cache');

  // Dynamic import()s of external packages became require()s: each must be a CommonJS package.
  const source = fs.readFileSync(BUNDLE, 'utf8');
  const packages = new Set([...source.matchAll(/\brequire\("([^"]+)"\)/g)].map((m) => m[1]!).filter((p) => !p.startsWith('node:') && !createRequire(import.meta.url)('node:module').isBuiltin(p)));
  t.ok(packages.size >= 10, `${packages.size} packages are required from the bundle`);
  const requireFromBundle = createRequire(BUNDLE);
  for (const p of packages) {
    t.doesNotThrow(() => requireFromBundle.resolve(p), `${p} resolves`);
  }
  const loaded = execFileSync(process.execPath, ['-e', `
    const r = require('node:module').createRequire(${JSON.stringify(BUNDLE)});
    const failed = [];
    for (const p of ${JSON.stringify([...packages])}) { try { r(p); } catch (e) { failed.push(p + ': ' + e.code); } }
    process.stdout.write(JSON.stringify(failed));
    process.exit(0);
  `], { encoding: 'utf8', env: { PATH: process.env.PATH ?? '' } });
  t.same(JSON.parse(loaded), [], 'every one of them loads with require()');
});
