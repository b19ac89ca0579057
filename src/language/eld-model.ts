/**
 * The language scorer (./ngram-scorer.ts) over eld's 'small' table (60 languages), loaded once per
 * process: by warmLanguageModel() once a server answers, or synchronously by the first detection
 * that comes before it.
 *
 * Two sources, the same table: the JSON copy that `npm run build` writes to
 * dist/eld/small-ngrams.json (scripts/build.mjs checks it equals eld's own data), read with
 * JSON.parse, which is about three times faster than V8 compiling and evaluating eld's
 * ngrams/small.js, a 1.6 MB object literal; or, without a build or when the copy was made from
 * another eld version, eld's own module. eld's separator pattern and byte dictionary always come
 * from the installed eld.
 *
 * The synchronous load is a require() of ES modules (Node 20.19+ and 22.12+,
 * `process.features.require_module`); an older Node loads eld's files when this module is imported
 * (./eld-preload.ts).
 */
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PROJECT_ROOT } from '../project-root.ts';
import { preloadedParts } from './eld-preload.ts';
import { NgramScorer, type EldText, type NgramTable } from './ngram-scorer.ts';

/** What scripts/build.mjs writes. */
interface NgramsFile {
  eld_version: string;
  ngramsData: NgramTable;
}

export const ELD_JSON_FILE = path.join(PROJECT_ROOT, 'dist', 'eld', 'small-ngrams.json');

let model: NgramScorer | undefined = preloadedParts ? new NgramScorer(preloadedParts.table, preloadedParts.text) : undefined;
let warming: Promise<void> | undefined;

/** The installed eld package folder (its exports map offers only the entry files). */
function eldDir(): string {
  return path.resolve(path.dirname(fileURLToPath(import.meta.resolve('eld'))), '..', '..');
}

/** The JSON copy's table when it was made from the installed eld, else undefined. */
function matchingTable(text: string | undefined): NgramTable | undefined {
  if (text === undefined) return undefined;
  try {
    const file = JSON.parse(text) as NgramsFile;
    const installed = (JSON.parse(readFileSync(path.join(eldDir(), 'package.json'), 'utf8')) as { version: string }).version;
    return file.eld_version === installed ? file.ngramsData : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The scorer over the JSON copy's table (`text`; undefined: no build), else over eld's own module. Always
 * through require(): a detection's synchronous load and the warm-up may meet, and a require() of
 * an ES module that an import() is still loading throws (ERR_REQUIRE_CYCLE_MODULE) instead of
 * waiting, so the two must not use different loaders.
 */
export function loadFrom(text: string | undefined): NgramScorer {
  const req = createRequire(import.meta.url);
  const src = (file: string) => req(path.join(eldDir(), 'src', file)) as Record<string, unknown>;
  const table = matchingTable(text) ?? (src('ngrams/small.js').ngramsData as NgramTable);
  const eld: EldText = { separators: src('regexPatterns.js').separators as RegExp, dictionary: src('dictionary.js').dictionary as string[] };
  return new NgramScorer(table, eld);
}

function loadSync(): NgramScorer {
  let text: string | undefined;
  try {
    text = readFileSync(ELD_JSON_FILE, 'utf8');
  } catch {
    // no build: eld's own module
  }
  return loadFrom(text);
}

/** The scorer, loaded now if nothing loaded it yet. */
export function languageScorer(): NgramScorer {
  model ??= loadSync();
  return model;
}

/** Whether the model is in memory (a detection now costs no load). */
export function languageModelLoaded(): boolean {
  return model !== undefined;
}

/**
 * Loads the model without blocking on the file read; the parse itself (tens of milliseconds) runs
 * on this thread. Never rejects: a failure here is met again, and reported, by the first detection.
 */
export function warmLanguageModel(): Promise<void> {
  warming ??= (async () => {
    if (model) return;
    const text = await readFile(ELD_JSON_FILE, 'utf8').catch(() => undefined);
    model ??= loadFrom(text);
  })().catch(() => undefined);
  return warming;
}
