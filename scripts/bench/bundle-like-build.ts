/**
 * Bundles benchmark entries the way scripts/build.mjs bundles the server (its options, from
 * scripts/build-options.mjs), so a benchmark measures what `npm start` runs from the current
 * sources, not tsx's on-the-fly transform nor a stale dist/.
 */
import { build } from 'esbuild';
import { ESM_BUNDLE } from '../build-options.mjs';
import { ROOT } from './harness.ts';

/** ESM bundles of `entryPoints` (paths relative to the project root) under `outdir`, laid out as in dist/. */
export async function bundleLikeBuild(entryPoints: string[], outdir: string): Promise<void> {
  await build({
    absWorkingDir: ROOT,
    entryPoints,
    outdir,
    ...ESM_BUNDLE,
    logLevel: 'warning',
  });
}
