/**
 * Where the third-party test data lives: CORPUS_DIR (default ../shared/corpus beside the project
 * root) and EVAL_DIR (default ../shared/eval). Only the corpus suite (`npm run test:corpus`)
 * imports this module; the self-contained `npm test` never does. A missing folder fails the file
 * at import with one message that says what to set — never a silent pass or skip.
 */
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '../..');

function dataDir(name: 'CORPUS_DIR' | 'EVAL_DIR', fallback: string): string {
  const dir = path.resolve(ROOT, process.env[name] || fallback);
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) {
    throw new Error(
      `${name} not found: ${dir}. The corpus suite needs the shared test data; set ${name} to its folder ` +
        `(default ${fallback} relative to the project root). The self-contained suite is \`npm test\`.`,
    );
  }
  return dir;
}

export const CORPUS_DIR = dataDir('CORPUS_DIR', '../shared/corpus');

/** EVAL_DIR is resolved on first use so corpus-only files do not need it. */
let evalDir: string | undefined;
export function evalDirPath(): string {
  return (evalDir ??= dataDir('EVAL_DIR', '../shared/eval'));
}

/** Absolute path of a corpus file, e.g. corpusPath('pdf/test.pdf'). */
export const corpusPath = (rel: string): string => path.join(CORPUS_DIR, rel);

/** Bytes of a corpus file. */
export const readCorpus = (rel: string): Buffer => fs.readFileSync(corpusPath(rel));

/** Text of a corpus file (expected outputs). */
export const readCorpusText = (rel: string): string => fs.readFileSync(corpusPath(rel), 'utf8');
