/**
 * Bundles benchmark entries the way scripts/build.mjs bundles the server (same externals, target
 * and kept \p{...} regex literals), so a benchmark measures what `npm start` runs from the current
 * sources, not tsx's on-the-fly transform nor a stale dist/. scripts/build.mjs itself must not be
 * imported (it rebuilds dist/), so its EXTERNAL list is read from its text.
 */
import fs from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';
import { ROOT } from './harness.ts';

/** scripts/build.mjs's EXTERNAL list, read from its text. */
function buildExternals(): string[] {
  const text = fs.readFileSync(path.join(ROOT, 'scripts', 'build.mjs'), 'utf8');
  const m = /export const EXTERNAL = (\[[\s\S]*?\]);/.exec(text);
  if (!m) throw new Error('scripts/build.mjs: EXTERNAL not found');
  const literal = m[1].replace(/\/\/[^\n]*/g, '');
  return JSON.parse(literal.replace(/'/g, '"').replace(/,\s*\]/, ']')) as string[];
}

/** ESM bundles of `entryPoints` (paths relative to the project root) under `outdir`, laid out as in dist/. */
export async function bundleLikeBuild(entryPoints: string[], outdir: string): Promise<void> {
  await build({
    absWorkingDir: ROOT,
    entryPoints,
    outdir,
    outbase: '.',
    entryNames: '[dir]/[name]',
    chunkNames: 'chunks/[name]-[hash]',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    // As scripts/build.mjs: \p{...} regular expressions stay literals.
    supported: { 'regexp-unicode-property-escapes': true },
    external: buildExternals(),
    logLevel: 'warning',
    banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
  });
}
