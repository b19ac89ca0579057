#!/usr/bin/env node
// Runs the compiled server, written by `npm run build` (which `npm ci` runs through `prepare`):
// the start bundle dist/server.cjs with its V8 code cache (./cached-bundle.js) where this Node can
// require() ES modules (eld's model needs it), else the ES module build dist/src/server.js.
// --reload and a checkout without a build run the TypeScript sources through tsx.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const bundle = fileURLToPath(new URL('../dist/server.cjs', import.meta.url));
const compiled = new URL('../dist/src/server.js', import.meta.url);
const argv = process.argv.slice(2);
const reload = argv.includes('--reload');
if (!reload && process.features.require_module === true && existsSync(bundle)) {
  const { runBundle } = await import('./cached-bundle.js');
  await runBundle(bundle, argv, (specifier) => import.meta.resolve(specifier));
} else if (!reload && existsSync(compiled)) {
  const { main } = await import(compiled.href);
  await main(argv);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  const { main } = await import('../src/server.ts');
  await main(argv);
}
