// `npm run build` (run by `npm ci` through `prepare`): bundles the server into dist/ with esbuild.
// One bundle starts in about a third of the time of the same code compiled file by file (tsc),
// because Node resolves and reads a few files instead of ~800 (`npm run bench:startup`).
// Kept external: native addons, packages that load their own files at run time (Swagger UI's
// assets, tesseract's worker script, pdf.js, models), and the heavy ones loaded on first use.
// Types are checked by `npm run typecheck`, not here.
// Then the web console (console/, Preact) is built by Vite into dist/console (plugins/console.ts serves it).
// Last, dist/.build-inputs.json records every file both read, so `npm test` can skip a build of
// unchanged inputs (scripts/build-stamp.mjs, scripts/build-if-stale.mjs).
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { build } from 'esbuild';
import { EXTERNAL, ESM_BUNDLE, SUPPORTED } from './build-options.mjs';
import { writeStamp } from './build-stamp.mjs';
import { warmCodeCache } from './warm-code-cache.mjs';

const root = path.resolve(import.meta.dirname, '..');
const outdir = path.join(root, 'dist');

rmSync(outdir, { recursive: true, force: true });
const server = await build({
  absWorkingDir: root,
  // Worker and child-process entries are bundles of their own: they start from a file path.
  entryPoints: ['src/server.ts', 'src/retrieval/embedders/onnx-worker.ts', 'src/kb/search-worker.ts', 'src/extraction/extract-child.ts'],
  outdir,
  ...ESM_BUNDLE,
  sourcemap: true,
  logLevel: 'warning',
  metafile: true,
});

// The start bundle: the server again, as one CommonJS file, which bin/rag-document-server.js runs
// with a V8 code cache (bin/cached-bundle.js; Node 20 has none for ES modules). The ES module build
// above stays for the worker and child entries and for a Node without require() of ES modules.
// import.meta becomes the loader's __rdsImportMeta, and the dynamic import()s of external
// packages become require()s (a vm script's import() needs an experimental Node API); every one of
// them is a CommonJS package (test/foundation/start-bundle.test.ts checks). eld-preload.ts's
// top-level await (CommonJS has none) loads eld's files only where require() of ES modules is missing, and
// the bundle never runs there: it gets a module without it.
const startBundle = await build({
  absWorkingDir: root,
  entryPoints: ['src/server.ts'],
  outfile: path.join(outdir, 'server.cjs'),
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  supported: { ...SUPPORTED, 'dynamic-import': false },
  external: EXTERNAL,
  sourcemap: true,
  logLevel: 'warning',
  metafile: true,
  define: { 'import.meta.url': '__rdsImportMeta.url', 'import.meta.resolve': '__rdsImportMeta.resolve' },
  plugins: [{
    name: 'eld-preload',
    setup(b) {
      b.onLoad({ filter: /[\\/]src[\\/]language[\\/]eld-preload\.ts$/ }, () => ({ contents: 'export const preloadedParts = undefined;', loader: 'ts' }));
    },
  }],
});

// eld's n-gram table as JSON (src/language/eld-model.ts): JSON.parse reads it about three times
// faster than V8 compiles and evaluates eld's own module, an object literal of the same data.
// Written only when it parses back to exactly eld's data; the loader checks the eld version.
const eldDir = path.join(root, 'node_modules', 'eld');
const eldInputs = [path.join(eldDir, 'package.json'), path.join(eldDir, 'src', 'ngrams', 'small.js')];
{
  const { ngramsData } = await import(pathToFileURL(eldInputs[1]).href);
  const json = JSON.stringify({ eld_version: JSON.parse(readFileSync(eldInputs[0], 'utf8')).version, ngramsData });
  if (!isDeepStrictEqual(JSON.parse(json).ngramsData, ngramsData)) throw new Error('eld small ngrams do not survive JSON: not writing dist/eld/small-ngrams.json');
  mkdirSync(path.join(outdir, 'eld'), { recursive: true });
  writeFileSync(path.join(outdir, 'eld', 'small-ngrams.json'), json);
}

// The console: `vite build --config console/vite.config.ts`. Skipped with a warning where the
// sources are absent (an image that copies only the server): /console then answers 503.
const consoleConfig = path.join(root, 'console', 'vite.config.ts');
const inputs = [...new Set([...Object.keys(server.metafile.inputs), ...Object.keys(startBundle.metafile.inputs)]), ...eldInputs];
const outputs = [...Object.keys(server.metafile.outputs), ...Object.keys(startBundle.metafile.outputs), 'dist/eld/small-ngrams.json'];
if (existsSync(path.join(root, 'console', 'index.html'))) {
  const { build: viteBuild } = await import('vite');
  const result = await viteBuild({ configFile: consoleConfig, logLevel: 'warn' });
  // Every module of every chunk (absolute paths; Vite's virtual modules are not files).
  for (const out of [result].flat()) {
    for (const item of out.output ?? []) {
      if (item.type === 'chunk') inputs.push(...item.moduleIds.filter((id) => path.isAbsolute(id)));
    }
  }
  outputs.push('dist/console/index.html');
} else {
  console.warn('console/ is missing: the web console is not built (/console answers 503)');
}
writeStamp(inputs, outputs);

// Last, when everything the server reads is in place: the start bundle's code cache.
await warmCodeCache(root, path.join(outdir, 'server.cjs'));
