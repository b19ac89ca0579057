/**
 * The Node arguments that start the server the way its users start it, for tests that check what
 * a user sees (a stdio MCP server, a refused configuration at start): the bin running the compiled
 * build (bin/rag-document-server.js -> dist/) when dist/ was built from exactly the files that are
 * here now (scripts/build-stamp.mjs; `npm test`'s pretest rebuilds it when any input changed),
 * else src/server.ts from the sources, so a test never runs an older build than the code it checks.
 *
 * Why the build: a server started from the sources compiles ~170 TypeScript modules through the
 * test loader on its own loader thread. Measured to the first stdio answer on 2 cores: 1.05 s of
 * CPU from the build, 2.2 s from the sources (3.0 s under tsx).
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { SOURCE_LOADER_ARGS } from './source-loader.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const { staleReason } = (await import(pathToFileURL(path.join(ROOT, 'scripts', 'build-stamp.mjs')).href)) as { staleReason(): string | null };

/** Why the sources run instead of the build (null: the build runs). */
export const BUILD_STALE_REASON: string | null = staleReason();

export const SERVER_ENTRY_ARGS: readonly string[] =
  BUILD_STALE_REASON === null ? [path.join(ROOT, 'bin', 'rag-document-server.js')] : [...SOURCE_LOADER_ARGS, path.join(ROOT, 'src', 'server.ts')];
