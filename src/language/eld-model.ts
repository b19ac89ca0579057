/**
 * eld's 'small' model (60 languages), loaded once per process: by warmLanguageModel() once a
 * server answers, or synchronously by the first detection that comes before it.
 *
 * Two sources, the same table: the JSON copy that `npm run build` writes to
 * dist/eld/small-ngrams.json (scripts/build.mjs checks it equals eld's own data), read with
 * JSON.parse, which is about three times faster than V8 compiling and evaluating eld's
 * ngrams/small.js, a 1.6 MB object literal; or, without a build or when the copy was made from
 * another eld version, eld's own `eld/small` module.
 *
 * The synchronous load is a require() of ES modules (Node 20.19+ and 22.12+,
 * `process.features.require_module`); an older Node loads the model when this module is imported
 * (./eld-preload.ts).
 */
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PROJECT_ROOT } from '../project-root.ts';
import { preloadedEld } from './eld-preload.ts';

export type Eld = typeof import('eld/small').eld;

/** What scripts/build.mjs writes. */
interface NgramsFile {
  eld_version: string;
  ngramsData: unknown;
}

type CreateEld = () => { instance: Eld; loadData: (data: unknown) => unknown };

export const ELD_JSON_FILE = path.join(PROJECT_ROOT, 'dist', 'eld', 'small-ngrams.json');

let model: Eld | undefined = preloadedEld;
let warming: Promise<void> | undefined;

/** The installed eld package folder (its exports map offers only the entry files). */
function eldDir(): string {
  return path.resolve(path.dirname(fileURLToPath(import.meta.resolve('eld'))), '..', '..');
}

/** The JSON copy's table when it was made from the installed eld, else undefined. */
function matchingTable(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    const file = JSON.parse(text) as NgramsFile;
    const installed = (JSON.parse(readFileSync(path.join(eldDir(), 'package.json'), 'utf8')) as { version: string }).version;
    return file.eld_version === installed ? file.ngramsData : undefined;
  } catch {
    return undefined;
  }
}

function fromTable(createEld: CreateEld, table: unknown): Eld {
  const { instance, loadData } = createEld();
  loadData(table);
  return instance;
}

const detectorFile = () => path.join(eldDir(), 'src', 'languageDetector.js');

/**
 * The model from the JSON copy's text (undefined: no build), else eld's own module. Always
 * through require(): a detection's synchronous load and the warm-up may meet, and a require() of
 * an ES module that an import() is still loading throws (ERR_REQUIRE_CYCLE_MODULE) instead of
 * waiting, so the two must not use different loaders.
 */
function loadFrom(text: string | undefined): Eld {
  const req = createRequire(import.meta.url);
  const table = matchingTable(text);
  if (table !== undefined) return fromTable((req(detectorFile()) as { createEld: CreateEld }).createEld, table);
  return (req(fileURLToPath(import.meta.resolve('eld/small'))) as typeof import('eld/small')).eld;
}

function loadSync(): Eld {
  let text: string | undefined;
  try {
    text = readFileSync(ELD_JSON_FILE, 'utf8');
  } catch {
    // no build: eld's own module
  }
  return loadFrom(text);
}

/** The model, loaded now if nothing loaded it yet. */
export function eldModel(): Eld {
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
