/**
 * The project root (the folder of this project's package.json), found the same way whether this module runs from
 * the TypeScript sources (src/) or from the compiled build (dist/src/, dist/server.cjs).
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

function findRoot(start: string): string {
  for (let dir = start; ; dir = path.dirname(dir)) {
    const pkg = path.join(dir, 'package.json');
    if (existsSync(pkg) && (JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === 'rag-document-server') return dir;
    if (path.dirname(dir) === dir) throw new Error(`package.json not found above ${start}`);
  }
}

export const PROJECT_ROOT: string = findRoot(path.dirname(fileURLToPath(import.meta.url)));

/**
 * True when running the compiled JavaScript in dist/ (the ES module build, dist/src/, or the start
 * bundle, dist/server.cjs) rather than the sources through tsx.
 */
export const COMPILED: boolean = !import.meta.url.endsWith('.ts');
