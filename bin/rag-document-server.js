#!/usr/bin/env node
// Runs the compiled server (dist/, written by `npm run build`, which `npm ci` runs through
// `prepare`). --reload and a checkout without a build run the TypeScript sources through tsx.
import { existsSync } from 'node:fs';

const compiled = new URL('../dist/src/server.js', import.meta.url);
const argv = process.argv.slice(2);
if (existsSync(compiled) && !argv.includes('--reload')) {
  const { main } = await import(compiled.href);
  await main(argv);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  const { main } = await import('../src/server.ts');
  await main(argv);
}
