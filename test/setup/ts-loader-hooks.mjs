// The load hook of test/setup/ts-loader.mjs (runs on Node's loader thread). A `.ts`/`.mts` file
// becomes JavaScript through esbuild, with the options tsx uses (so the code runs as under tsx),
// cached on disk by esbuild version, options, path and content; every other module goes on down
// the chain to Node's own loader untouched. There is no resolve hook: every relative import in
// this project names its file with its extension, which Node resolves itself.
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

let esbuild;
let cacheDir;
let optionsKey;
let options;

export function initialize(data) {
  cacheDir = data.cacheDir;
  options = data.options;
  optionsKey = JSON.stringify([data.esbuildVersion, options]);
  mkdirSync(cacheDir, { recursive: true });
}

const TS = /\.m?ts$/;

export async function load(url, context, next) {
  if (!url.startsWith('file:') || !TS.test(new URL(url).pathname)) return next(url, context);
  const file = fileURLToPath(url);
  const source = readFileSync(file, 'utf8');
  const key = createHash('sha1').update(optionsKey).update('\0').update(file).update('\0').update(source).digest('hex');
  const cached = `${cacheDir}/${key}.mjs`;
  let code;
  try {
    code = readFileSync(cached, 'utf8');
  } catch {
    esbuild ??= await import('esbuild');
    code = esbuild.transformSync(source, { ...options, sourcefile: file }).code;
    // Written beside and renamed into place: processes starting together never read half a file.
    const tmp = `${cached}.${process.pid}.tmp`;
    writeFileSync(tmp, code);
    renameSync(tmp, cached);
  }
  return { format: 'module', source: code, shortCircuit: true };
}
