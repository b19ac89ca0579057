// Runs the TypeScript sources in test processes (tap's node-arg in package.json) and in the
// servers and scripts the tests spawn from the sources (SOURCE_LOADER_ARGS): a load hook that
// turns `.ts` files into JavaScript with esbuild (test/setup/ts-loader-hooks.mjs), in place of tsx.
//
// Why not tsx: under a loader, Node 20 sends every module's resolve and load to the loader's
// thread, and tsx's hooks do much more per module than this project needs (they resolve `.js` to
// `.ts`, tsconfig paths and extensionless specifiers, re-read and scan every ES module of
// node_modules, install a CommonJS hook on the main thread). Measured on 2 cores: an empty tap test
// cost 0.95 s of CPU under tsx; importing test/helper.ts (the app) 3.3 s under tsx, 2.3 s under this
// loader, 1.35 s with no loader at all (an esbuild bundle). With ~190 test files and the servers
// they spawn, that is minutes of `npm test`. The transform is tsx's own (esbuild, same options),
// so the code that runs is the same. The app's users still get tsx: bin/ and --reload use it.
import { createRequire, register } from 'node:module';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '../..');
const require = createRequire(path.join(root, 'package.json'));
const esbuildVersion = require('esbuild/package.json').version;
let tsconfig = {};
try {
  tsconfig = JSON.parse(require('node:fs').readFileSync(path.join(root, 'tsconfig.json'), 'utf8'));
} catch {
  // no tsconfig: esbuild's defaults
}

// tsx's transform options (node_modules/tsx/dist: target, sourcemap, minifyWhitespace, keepNames).
const options = {
  loader: 'ts',
  format: 'esm',
  target: `node${process.versions.node}`,
  sourcemap: 'inline',
  sourcesContent: false,
  minifyWhitespace: true,
  keepNames: true,
  tsconfigRaw: { compilerOptions: tsconfig.compilerOptions ?? {} },
};

const cacheDir = path.join(root, 'node_modules', '.cache', 'rag-test-ts');
trimCache(cacheDir);
register('./ts-loader-hooks.mjs', { parentURL: import.meta.url, data: { cacheDir, esbuildVersion, options } });

/**
 * The cache keeps one file per version of each source, so editing the sources grows it: past
 * CACHE_MAX_FILES (about 5x the ~800 files one checkout uses) the least recently written half goes.
 * One readdir per process when under the bound; a file removed under a running process is only
 * compiled again.
 */
function trimCache(dir) {
  const CACHE_MAX_FILES = 4000;
  const fs = require('node:fs');
  let names;
  try {
    names = fs.readdirSync(dir);
  } catch {
    return;
  }
  if (names.length <= CACHE_MAX_FILES) return;
  const aged = [];
  for (const name of names) {
    try {
      aged.push([fs.statSync(path.join(dir, name)).mtimeMs, name]);
    } catch {
      // removed meanwhile
    }
  }
  aged.sort((a, b) => a[0] - b[0]);
  for (const [, name] of aged.slice(0, aged.length - CACHE_MAX_FILES / 2)) fs.rmSync(path.join(dir, name), { force: true });
}
// Stack traces name the .ts lines, as under tsx.
process.setSourceMapsEnabled(true);
