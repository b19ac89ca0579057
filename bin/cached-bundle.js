// Runs the start bundle (dist/server.cjs, one CommonJS file written by `npm run build`) with a V8
// code cache beside it (dist/server.cjs.cache), so a start deserializes the functions it runs
// instead of parsing and compiling them: spawn to /health in about 0.75x the time of the ES module
// build (`npm run bench:startup`). Node 20 offers no code cache for ES modules, hence CommonJS.
//
// V8 checks a cache against its own version and flags, but matches the source by its length only
// and takes damaged data as it is, so the cache file starts with two SHA-256s: of the bundle (and
// wrapper) it was made from, and of the V8 data that follows. It is used only when both hold.
// A missing, stale, damaged or rejected cache costs nothing but the compile: the process makes a
// new one once it has started and writes it atomically; where dist/ is read-only it goes on.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import vm from 'node:vm';

const HASH_BYTES = 32;
// Strict, as the ES module build is; the parameters are what a CommonJS module sees, plus import.meta.
const HEAD = '(function (exports, require, module, __filename, __dirname, __rdsImportMeta) {"use strict";';
const TAIL = '\n})';
/** Time after the start for the functions of the first requests to be compiled into the cache too. */
export const CACHE_WRITE_DELAY_MS = 1000;

export const cacheFileOf = (bundle) => `${bundle}.cache`;

const sha256 = (...parts) => {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part);
  return hash.digest();
};

/** What a cache made from the bundle `bytes` starts with: the SHA-256 of the bundle as V8 compiles it (the wrapper is part of that). */
export const cacheKeyOf = (bytes) => sha256(HEAD, bytes, TAIL);

/** The V8 data of `cacheFile` when it was made from the bundle whose key is `key` and is whole. */
function readCache(cacheFile, key) {
  let bytes;
  try {
    bytes = fs.readFileSync(cacheFile);
  } catch {
    return undefined;
  }
  if (bytes.length <= 2 * HASH_BYTES || !key.equals(bytes.subarray(0, HASH_BYTES))) return undefined;
  const data = bytes.subarray(2 * HASH_BYTES);
  return sha256(data).equals(bytes.subarray(HASH_BYTES, 2 * HASH_BYTES)) ? data : undefined;
}

/**
 * Compiles and evaluates `bundle`. Returns its module.exports; `cache`, whether V8 took the cache;
 * and write(), which saves a cache of everything compiled so far (false when it could not).
 * scripts/build.mjs maps the bundle's import.meta.url and import.meta.resolve to __rdsImportMeta:
 * the url is the bundle's own, `resolve` resolves as an ES module would (the caller's
 * import.meta.resolve; CommonJS resolution misses packages that export only `import` entries).
 */
export function loadBundle(bundle, resolve) {
  const bytes = fs.readFileSync(bundle);
  const key = cacheKeyOf(bytes);
  const source = bytes.toString('utf8');
  const cacheFile = cacheFileOf(bundle);
  const cachedData = readCache(cacheFile, key);
  const script = new vm.Script(HEAD + source + TAIL, {
    filename: bundle,
    cachedData,
  });
  const cache = cachedData !== undefined && !script.cachedDataRejected;
  const module = { exports: {} };
  const importMeta = { url: pathToFileURL(bundle).href, resolve };
  script.runInThisContext().call(module.exports, module.exports, createRequire(bundle), module, bundle, path.dirname(bundle), importMeta);
  const write = () => {
    // A read-only dist/ (an image's non-root user) is told before the data is serialized.
    try {
      fs.accessSync(path.dirname(cacheFile), fs.constants.W_OK);
    } catch {
      return false;
    }
    const tmp = `${cacheFile}.${process.pid}.tmp`;
    try {
      const data = script.createCachedData();
      fs.writeFileSync(tmp, Buffer.concat([key, sha256(data), data]));
      fs.renameSync(tmp, cacheFile);
      return true;
    } catch {
      fs.rmSync(tmp, { force: true });
      return false;
    }
  };
  return { exports: module.exports, cache, write };
}

/**
 * Starts the server from the bundle; without a usable cache, writes one CACHE_WRITE_DELAY_MS after
 * main() has resolved (the port is open or stdio connected), unless the process has exited by then.
 */
export async function runBundle(bundle, argv, resolve) {
  const { exports, cache, write } = loadBundle(bundle, resolve);
  await exports.main(argv);
  if (!cache) setTimeout(write, CACHE_WRITE_DELAY_MS).unref();
}
