/**
 * Where OCR languages come from and which scripts they cover. A language is a tesseract
 * `.traineddata` file, found in the npm data packages (@tesseract.js-data/<code>, gzip) or in a
 * folder (TESSDATA_DIR, e.g. what Debian's tesseract-ocr-* packages install). Everything here is
 * synchronous file checks so that a misconfigured OCR_LANGUAGES fails at start-up, not on the
 * first scan.
 */
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { toolError } from '../../errors.ts';

export interface LanguageSource {
  code: string;
  file: string;
  gzip: boolean;
  origin: 'npm' | 'tessdata_dir';
}

const requireHere = createRequire(import.meta.url);
const CODE = /^[A-Za-z_]{3,16}$/;
/** Orientation and script detection data: not a reading language. */
export const OSD = 'osd';

/** Splits 'eng+deu' / 'eng,deu' / ['eng', 'deu'] into unique codes, order kept. */
export function parseLanguages(value: string | readonly string[]): string[] {
  const parts = (typeof value === 'string' ? value.split(/[+,\s]+/) : value.flatMap((v) => v.split(/[+,\s]+/))).map((s) => s.trim()).filter(Boolean);
  return [...new Set(parts)];
}

/**
 * npm packages first (pinned, the LSTM "best_int" models for reading; the full model for osd, which
 * needs the legacy engine), then the folder.
 */
function npmSource(code: string): LanguageSource | null {
  try {
    const dir = path.dirname(requireHere.resolve(`@tesseract.js-data/${code}/package.json`));
    for (const sub of code === OSD ? ['4.0.0', '4.0.0_best_int'] : ['4.0.0_best_int', '4.0.0']) {
      const file = path.join(dir, sub, `${code}.traineddata.gz`);
      if (fs.existsSync(file)) return { code, file, gzip: true, origin: 'npm' };
    }
  } catch {
    // not installed
  }
  return null;
}

function folderSource(code: string, dir: string | undefined): LanguageSource | null {
  if (!dir) return null;
  for (const [name, gzip] of [[`${code}.traineddata`, false], [`${code}.traineddata.gz`, true]] as const) {
    const file = path.join(dir, name);
    try {
      if (fs.statSync(file).size > 0) return { code, file, gzip, origin: 'tessdata_dir' };
    } catch {
      // not there
    }
  }
  return null;
}

export function findLanguage(code: string, tessdataDir?: string): LanguageSource | null {
  if (!CODE.test(code)) return null;
  return npmSource(code) ?? folderSource(code, tessdataDir);
}

/** Seconds a listing of the installed languages is reused (it does ten package lookups and reads a folder). */
const INSTALLED_TTL_MS = 30_000;
/** By TESSDATA_DIR: one or two entries in practice; cleared past 16 so it stays bounded. */
const installedCache = new Map<string, { at: number; list: string[] }>();

/**
 * Every reading language installed (npm data packages and the folder), sorted; osd excluded.
 * Reused for INSTALLED_TTL_MS: every extraction and /health ask, and the lookups are synchronous
 * file-system calls on the main thread. A language added meanwhile shows within the TTL.
 */
export function installedLanguages(tessdataDir?: string): string[] {
  const key = tessdataDir ?? '';
  const hit = installedCache.get(key);
  if (hit && performance.now() - hit.at < INSTALLED_TTL_MS) return [...hit.list];
  const list = listInstalledLanguages(tessdataDir);
  if (installedCache.size >= 16) installedCache.clear();
  installedCache.set(key, { at: performance.now(), list });
  return [...list];
}

function listInstalledLanguages(tessdataDir?: string): string[] {
  const found = new Set<string>();
  for (const code of ['eng', 'fra', 'deu', 'spa', 'ita', 'por', 'chi_sim', 'chi_tra', 'jpn', 'kor']) if (npmSource(code)) found.add(code);
  if (tessdataDir) {
    try {
      for (const f of fs.readdirSync(tessdataDir)) {
        const m = /^([A-Za-z_]{3,16})\.traineddata(\.gz)?$/.exec(f);
        if (m && m[1] !== OSD) found.add(m[1]);
      }
    } catch {
      // an unreadable folder adds nothing; checkTessdataDir reports it
    }
  }
  return [...found].sort();
}

/** Start-up check of TESSDATA_DIR: a folder that is set must exist. */
export function checkTessdataDir(tessdataDir: string | undefined): void {
  if (!tessdataDir) return;
  let ok = false;
  try {
    ok = fs.statSync(tessdataDir).isDirectory();
  } catch {
    ok = false;
  }
  if (!ok) throw toolError('VALIDATION_ERROR', 'TESSDATA_DIR does not name a readable folder of .traineddata files');
}

/**
 * Resolves requested languages to files, or throws a coded error naming what is missing and
 * what is installed. `setting` names where the list came from (OCR_LANGUAGES or ocr_languages).
 */
export function resolveLanguages(codes: readonly string[], tessdataDir: string | undefined, setting: string): LanguageSource[] {
  if (!codes.length) throw toolError('VALIDATION_ERROR', `${setting} names no language`);
  const out: LanguageSource[] = [];
  const missing: string[] = [];
  for (const code of codes) {
    const src = code === OSD ? null : findLanguage(code, tessdataDir);
    if (src) out.push(src);
    else missing.push(code);
  }
  if (missing.length) {
    const have = installedLanguages(tessdataDir);
    throw toolError(
      'VALIDATION_ERROR',
      `OCR language${missing.length > 1 ? 's' : ''} not installed: ${missing.join(', ')} (${setting}). Installed: ${have.join(', ') || 'none'}. ` +
        'Add <code>.traineddata files to the folder named by TESSDATA_DIR (e.g. Debian tesseract-ocr-<code> packages).',
    );
  }
  return out;
}

/**
 * Tesseract OSD script names -> languages that read them. Latin-script languages are many; any
 * of these counts as covering Latin.
 */
const SCRIPT_LANGUAGES: Record<string, string[]> = {
  Latin: ['eng', 'fra', 'deu', 'spa', 'ita', 'por', 'nld', 'pol', 'ces', 'swe', 'dan', 'nor', 'fin', 'tur', 'vie', 'ron', 'hun', 'cat', 'lat', 'ind', 'msa'],
  Han: ['chi_sim', 'chi_tra', 'jpn', 'chi_sim_vert', 'chi_tra_vert', 'jpn_vert'],
  Japanese: ['jpn', 'jpn_vert'],
  Katakana: ['jpn', 'jpn_vert'],
  Hiragana: ['jpn', 'jpn_vert'],
  Hangul: ['kor', 'kor_vert'],
  Korean: ['kor', 'kor_vert'],
  Cyrillic: ['rus', 'ukr', 'bel', 'bul', 'srp', 'mkd', 'kaz', 'kir', 'tgk', 'uzb_cyrl', 'mon'],
  Arabic: ['ara', 'fas', 'urd', 'pus', 'uig', 'snd'],
  Greek: ['ell', 'grc'],
  Hebrew: ['heb', 'yid'],
  Devanagari: ['hin', 'mar', 'nep', 'san'],
  Thai: ['tha'],
  Bengali: ['ben', 'asm'],
  Tamil: ['tam'],
  Telugu: ['tel'],
  Kannada: ['kan'],
  Malayalam: ['mal'],
  Gujarati: ['guj'],
  Gurmukhi: ['pan'],
  Armenian: ['hye'],
  Georgian: ['kat'],
  Ethiopic: ['amh', 'tir'],
  Khmer: ['khm'],
  Lao: ['lao'],
  Myanmar: ['mya'],
  Sinhala: ['sin'],
  Tibetan: ['bod'],
};

/** Languages that read `script`; null when the script name is unknown (then nothing is claimed). */
export function languagesForScript(script: string): string[] | null {
  return SCRIPT_LANGUAGES[script] ?? null;
}

/** True when one of `languages` reads `script` (unknown scripts count as covered: no false alarms). */
export function scriptCovered(script: string, languages: readonly string[]): boolean {
  const readers = languagesForScript(script);
  if (!readers) return true;
  // Script-named models (e.g. script/Latin) and custom models are trusted to cover their script.
  return languages.some((l) => readers.includes(l) || l.toLowerCase().includes(script.toLowerCase()));
}

/** What to tell the user when a page's script is not covered by the languages used. */
export function uncoveredScriptAdvice(script: string, used: readonly string[], installed: readonly string[]): string {
  const readers = languagesForScript(script) ?? [];
  const available = readers.filter((l) => installed.includes(l));
  const base = `The text looks like ${script} script, which the OCR languages used (${used.join('+')}) do not read`;
  return available.length
    ? `${base}; pass ocr_languages: [${available.map((l) => `"${l}"`).join(', ')}] (installed)`
    : `${base}, and no installed language does; add ${readers.slice(0, 3).map((l) => `${l}.traineddata`).join(' or ') || 'a matching .traineddata'} to TESSDATA_DIR`;
}
