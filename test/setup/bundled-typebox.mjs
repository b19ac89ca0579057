// Loaded by every test process (test/setup/test-process.mjs, after the TypeScript loader) and by the
// servers the tests spawn from the sources (SOURCE_LOADER_ARGS, test/setup/source-loader.ts).
//
// Why: TypeBox 1.x ships as ~680 small ES modules. Under a loader (tsx, or test/setup/ts-loader.mjs), Node 20 resolves and loads
// each one through the loader's worker thread, which costs about 1.5 s of CPU per process, about
// half of what importing the app costs; with ~190 test files and the servers they spawn, that alone
// was minutes of `npm test` on two cores. esbuild bundles the same package into a few files once
// (cached under node_modules/.cache, keyed by the TypeBox and esbuild versions), and a resolve hook
// points `typebox` and `typebox/<subpath>` at them. The bundle is the code the compiled build
// (dist/) already runs: scripts/build.mjs bundles TypeBox too. One copy serves every importer
// (splitting keeps the subpaths' shared modules shared), so registries and classes stay single.
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { createRequire, register } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const root = path.resolve(import.meta.dirname, '../..');
const require = createRequire(path.join(root, 'package.json'));
// The package's own package.json (not in its exports map): the folder above the resolved entry.
let pkgDir = path.dirname(require.resolve('typebox'));
while (!existsSync(path.join(pkgDir, 'package.json'))) pkgDir = path.dirname(pkgDir);
const pkg = JSON.parse(readFileSync(path.join(pkgDir, 'package.json'), 'utf8'));
const esbuildVersion = JSON.parse(readFileSync(require.resolve('esbuild/package.json'), 'utf8')).version;
const outdir = path.join(root, 'node_modules', '.cache', 'rag-test-typebox', `${pkg.version}-esbuild-${esbuildVersion}`);

// Each export of the package ('.', './value', './compile', ...) becomes one entry of the bundle.
const subpaths = Object.keys(pkg.exports).filter((k) => k === '.' || /^\.\/[\w-]+$/.test(k));
const entryName = (subpath) => (subpath === '.' ? 'index' : subpath.slice(2));

if (!existsSync(path.join(outdir, 'done'))) {
  const { buildSync } = await import('esbuild');
  // Built beside the final folder and renamed into place, so test processes starting together
  // never see half a bundle; the loser of a rename race keeps the winner's identical files.
  const tmp = `${outdir}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  buildSync({
    absWorkingDir: root,
    entryPoints: Object.fromEntries(subpaths.map((s) => [entryName(s), s === '.' ? 'typebox' : `typebox/${s.slice(2)}`])),
    outdir: tmp,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    outExtension: { '.js': '.mjs' },
    logLevel: 'warning',
  });
  mkdirSync(path.join(tmp, 'done'));
  mkdirSync(path.dirname(outdir), { recursive: true });
  try {
    renameSync(tmp, outdir);
  } catch {
    rmSync(tmp, { recursive: true, force: true });
  }
}

const map = Object.fromEntries(subpaths.map((s) => [s === '.' ? 'typebox' : `typebox/${s.slice(2)}`, pathToFileURL(path.join(outdir, `${entryName(s)}.mjs`)).href]));
register('./bundled-typebox-hooks.mjs', { parentURL: import.meta.url, data: { map } });
