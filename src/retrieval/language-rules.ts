/**
 * Per-language word rules for the lexical analyzer: which Snowball-family stemmer and stop-word list
 * a language gets (from @orama/stemmers and @orama/stopwords, maintained ports of the Snowball
 * algorithms), and whether diacritics may be folded.
 *
 * English is not here on purpose: it keeps the Porter stemmer and the English stop words the BM25
 * parameters were tuned with (SciFact), so English indexes score exactly as before.
 *
 * Modules are loaded on first use of their language, synchronously (a stemmer is a few kilobytes of
 * CommonJS), so a server that never sees Finnish never loads the Finnish stemmer.
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** ISO 639-1 code -> the package entry of its stemmer (and of its stop words, same name). */
const STEMMED: Readonly<Record<string, string>> = Object.freeze({
  ar: 'arabic',
  bg: 'bulgarian',
  da: 'danish',
  de: 'german',
  el: 'greek',
  es: 'spanish',
  fi: 'finnish',
  fr: 'french',
  hu: 'hungarian',
  id: 'indonesian',
  it: 'italian',
  lt: 'lithuanian',
  nl: 'dutch',
  no: 'norwegian',
  nb: 'norwegian',
  pt: 'portuguese',
  ro: 'romanian',
  ru: 'russian',
  sr: 'serbian',
  sv: 'swedish',
  tr: 'turkish',
  uk: 'ukrainian',
});

/**
 * Languages whose diacritics tell words apart: Vietnamese tone marks distinguish syllables
 * ("ma", "má", "mà", "mả", "mã", "mạ" are six words), so folding them merges distinct words.
 */
const KEEP_DIACRITICS: ReadonlySet<string> = new Set(['vi']);

/**
 * Languages written in the Latin script. In any other language an ASCII word is a borrowing (a
 * name, a term, code) and is analysed as English, as the same word in an English text would be.
 */
const LATIN_SCRIPT: ReadonlySet<string> = new Set([
  'af', 'ca', 'cs', 'cy', 'da', 'de', 'en', 'eo', 'es', 'et', 'eu', 'fi', 'fr', 'ga', 'gl', 'hr', 'hu', 'id', 'is', 'it', 'lt', 'lv', 'ms', 'mt',
  'nb', 'nl', 'nn', 'no', 'pl', 'pt', 'ro', 'sk', 'sl', 'sq', 'sv', 'sw', 'tl', 'tr', 'vi',
]);

export interface LanguageRules {
  readonly language: string;
  /** Whether the language is written in the Latin script (else ASCII words are taken as English). */
  readonly latin: boolean;
  readonly stem: ((word: string) => string) | null;
  readonly stopWords: ReadonlySet<string> | null;
  readonly foldDiacritics: boolean;
}

const cache = new Map<string, LanguageRules>();

/** The languages that get a stemmer of their own (English has Porter, outside this table). */
export const STEMMED_LANGUAGES: readonly string[] = Object.freeze(Object.keys(STEMMED).sort());

/** Rules for `language` (an ISO 639-1 code); a language without a stemmer gets none. */
export function languageRules(language: string): LanguageRules {
  let rules = cache.get(language);
  if (rules) return rules;
  const entry = STEMMED[language];
  let stem: LanguageRules['stem'] = null;
  let stopWords: ReadonlySet<string> | null = null;
  if (entry) {
    stem = (require(`@orama/stemmers/${entry}`) as { stemmer: (w: string) => string }).stemmer;
    try {
      stopWords = new Set((require(`@orama/stopwords/${entry}`) as { stopwords: string[] }).stopwords);
    } catch {
      stopWords = null; // a stemmer without a stop-word list (none for some languages)
    }
  }
  rules = Object.freeze({ language, latin: LATIN_SCRIPT.has(language), stem, stopWords, foldDiacritics: !KEEP_DIACRITICS.has(language) });
  cache.set(language, rules);
  return rules;
}
