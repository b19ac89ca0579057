/**
 * On a Node without require() of ES modules (before 20.19 and 22.12), eld's files cannot be loaded
 * synchronously later, so they are imported here, as this module loads (a top-level await).
 *
 * The start bundle (dist/server.cjs) is CommonJS, which has no top-level await; it runs only where
 * require() of ES modules works (bin/rag-document-server.js checks), so scripts/build.mjs gives it
 * this module with `preloadedParts` always undefined.
 */
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { EldText, NgramTable } from './ngram-scorer.ts';

const requireModule = (process.features as { require_module?: boolean }).require_module === true;

async function importParts(): Promise<{ table: NgramTable; text: EldText }> {
  const src = path.resolve(path.dirname(fileURLToPath(import.meta.resolve('eld'))), '..');
  const load = (file: string) => import(pathToFileURL(path.join(src, file)).href);
  const [{ ngramsData }, { separators }, { dictionary }] = await Promise.all([load('ngrams/small.js'), load('regexPatterns.js'), load('dictionary.js')]);
  return { table: ngramsData as NgramTable, text: { separators, dictionary } };
}

export const preloadedParts: { table: NgramTable; text: EldText } | undefined = requireModule ? undefined : await importParts();
