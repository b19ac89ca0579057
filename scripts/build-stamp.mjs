// The record of what dist/ was built from: `npm run build` (scripts/build.mjs) writes every input
// file esbuild and Vite read (the sources, the bundled packages, the build's own configuration)
// with its size, modification time and SHA-1; `npm test`'s pretest (scripts/build-if-stale.mjs)
// rebuilds only when one of them changed, went missing, or an output is gone. A file whose time
// changed but whose content did not (a checkout, a touch) still counts as unchanged.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export const ROOT = path.resolve(import.meta.dirname, '..');
export const STAMP_FILE = path.join(ROOT, 'dist', '.build-inputs.json');
const VERSION = 1;

// Read by the build but not through an import: a change to any of them is a change to the build.
export const BUILD_CONFIG_FILES = ['scripts/build.mjs', 'scripts/build-options.mjs', 'scripts/build-stamp.mjs', 'scripts/warm-code-cache.mjs', 'bin/cached-bundle.js', 'package.json', 'package-lock.json', 'console/vite.config.ts', 'console/index.html', 'console/tsconfig.json'];

const sha1 = (file) => createHash('sha1').update(readFileSync(file)).digest('hex');

/** Writes the stamp for `inputs` and `outputs` (paths relative to the project root or absolute). */
export function writeStamp(inputs, outputs) {
  const rel = (p) => path.relative(ROOT, path.resolve(ROOT, p)).split(path.sep).join('/');
  const files = {};
  for (const p of new Set([...inputs, ...BUILD_CONFIG_FILES].map(rel))) {
    const abs = path.join(ROOT, p);
    if (!existsSync(abs)) continue;
    const st = statSync(abs);
    if (!st.isFile()) continue;
    files[p] = { size: st.size, mtimeMs: st.mtimeMs, sha1: sha1(abs) };
  }
  const stamp = { version: VERSION, node: process.version, files, outputs: [...new Set(outputs.map(rel))].sort() };
  writeFileSync(STAMP_FILE, `${JSON.stringify(stamp, null, 1)}\n`);
  return Object.keys(files).length;
}

/** Why dist/ must be rebuilt, or null when every recorded input is unchanged and every output is there. */
export function staleReason() {
  if (!existsSync(STAMP_FILE)) return 'dist/ has no build stamp (never built, or the last build failed)';
  let stamp;
  try {
    stamp = JSON.parse(readFileSync(STAMP_FILE, 'utf8'));
  } catch {
    return 'the build stamp is unreadable';
  }
  if (stamp.version !== VERSION) return 'the build stamp is from another version of the build script';
  for (const out of stamp.outputs) if (!existsSync(path.join(ROOT, out))) return `${out} is missing`;
  for (const [p, was] of Object.entries(stamp.files)) {
    const abs = path.join(ROOT, p);
    let st;
    try {
      st = statSync(abs);
    } catch {
      return `${p} is gone`;
    }
    if (st.size !== was.size) return `${p} changed`;
    if (st.mtimeMs !== was.mtimeMs && sha1(abs) !== was.sha1) return `${p} changed`;
  }
  return null;
}

export function stampedInputCount() {
  return Object.keys(JSON.parse(readFileSync(STAMP_FILE, 'utf8')).files).length;
}
