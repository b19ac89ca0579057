/**
 * Rules for the scripts that several languages share. The statistical detector scores every
 * language it knows; these rules (1) keep only the languages written in the text's script and
 * (2) apply orthographic facts that short texts leave the n-gram statistics unsure about:
 * letters only one language of the script uses, and function words (Hindi है/में, Marathi
 * आहे/आणि, Nepali छ/पनि).
 */
import type { Script } from './scripts.ts';

/** The languages the detector may report for a text in each shared script; the first is the fallback. */
export const SCRIPT_CANDIDATES: Readonly<Partial<Record<Script, readonly string[]>>> = Object.freeze({
  Latin: [
    'en', 'es', 'fr', 'de', 'it', 'pt', 'nl', 'az', 'ca', 'cs', 'da', 'et', 'eu', 'fi', 'hr', 'hu',
    'is', 'lt', 'lv', 'ms', 'no', 'pl', 'ro', 'sk', 'sl', 'sq', 'sv', 'tl', 'tr', 'vi', 'yo',
  ],
  Cyrillic: ['ru', 'uk', 'bg', 'be', 'sr'],
  Arabic: ['ar', 'ur', 'fa', 'ku'],
  Devanagari: ['hi', 'mr', 'ne'],
});

/** Letters that rule a Cyrillic language in (one must be present) or out (none may be present). */
const CYRILLIC_LETTERS: Readonly<Record<string, { needs?: RegExp; forbids?: RegExp }>> = Object.freeze({
  ru: { forbids: /[іїєґўђјљњћџ]/i },
  uk: { needs: /[іїєґ]/i, forbids: /[ыэёъўђјљњћџ]/i },
  be: { needs: /[ўі]/i, forbids: /[ищъїєґђјљњћџ]/i },
  bg: { needs: /[ъщ]/i, forbids: /[ыэёіїєґўђјљњћџ]/i },
  sr: { needs: /[ђјљњћџ]/i, forbids: /[ыэёъщйяюєїіґў]/i },
});

/** Drops Cyrillic languages whose alphabet cannot have written the text. */
export function cyrillicAllowed(language: string, text: string): boolean {
  const rule = CYRILLIC_LETTERS[language];
  if (rule === undefined) return true;
  if (rule.needs !== undefined && !rule.needs.test(text)) return false;
  return rule.forbids === undefined || !rule.forbids.test(text);
}

// Letters of the Arabic script that only Urdu uses (ٹ ڈ ڑ ں ے ۓ ہ ھ), and Arabic's own letters that
// Urdu and Persian replace (ة, ى, and the Arabic forms ي ك where they write ی ک).
const URDU_LETTERS = /[\u0679\u0688\u0691\u06ba\u06d2\u06d3\u06c1\u06be]/g;
const ARABIC_LETTERS = /[\u0629\u0649\u064a\u0643]/g;
const PERSIAN_OR_URDU_LETTERS = /[\u06cc\u06a9\u067e\u0686\u0698\u06af]/g;

/** A decision from letters alone when they are unambiguous, else undefined. */
export function arabicScriptByLetters(text: string): string | undefined {
  const urdu = text.match(URDU_LETTERS)?.length ?? 0;
  const arabic = text.match(ARABIC_LETTERS)?.length ?? 0;
  const persianOrUrdu = text.match(PERSIAN_OR_URDU_LETTERS)?.length ?? 0;
  if (urdu >= 2 && urdu > arabic) return 'ur';
  if (arabic >= 2 && urdu === 0 && persianOrUrdu === 0) return 'ar';
  return undefined;
}

const HINDI_WORDS = new Set([
  'है', 'हैं', 'था', 'थी', 'थे', 'और', 'में', 'के', 'से', 'को', 'ने', 'नहीं', 'लिए', 'गया',
  'गई', 'गए', 'किया', 'रहा', 'रही', 'रहे', 'यह', 'वह', 'इस', 'उस', 'भी', 'हुआ', 'हुई', 'होता',
  'होती', 'करने', 'करें', 'सकता', 'सकती', 'सकते', 'कुछ', 'लेकिन', 'अपने', 'उनके',
]);
const MARATHI_WORDS = new Set([
  'आहे', 'आहेत', 'आहोत', 'आणि', 'नाही', 'नाहीत', 'केले', 'केला', 'केली', 'मी', 'आम्ही', 'तुम्ही',
  'त्या', 'त्याने', 'त्यांनी', 'ते', 'ती', 'हे', 'असे', 'असून', 'असलेल्या', 'असलेले', 'करणार',
  'झाले', 'झाला', 'झाली', 'आला', 'आली', 'आले', 'गेले', 'गेला', 'गेली', 'म्हणून', 'तसेच', 'मला',
  'आता', 'येथे', 'पण', 'काही', 'पासून', 'करून', 'मधून', 'होऊन', 'घेऊन', 'देऊन', 'जाऊन', 'किंवा',
  'नये', 'आपल्या', 'आपले',
]);
const NEPALI_WORDS = new Set([
  'छ', 'छन्', 'छु', 'छौं', 'छैन', 'छिन्', 'थियो', 'थिए', 'भएको', 'गरेको', 'गरेका', 'पनि', 'र', 'यो',
  'त्यो', 'एउटा', 'लागि', 'हुन्छ', 'हुन्छन्', 'गर्न', 'भने', 'गरी', 'रहेको', 'हुने', 'गर्ने',
]);
// Word endings no other language of the script has: Marathi genitive -च्या, dative plural -ांना,
// -साठी, -मध्ये; Nepali -लाई, -हरू, present tense -छ/-छन्/-छिन्, participle -एको.
const MARATHI_ENDINGS = ['च्या', 'ांना', 'साठी', 'मध्ये', 'ांचा', 'ांची', 'ांचे'];
const NEPALI_ENDINGS = ['लाई', 'हरू', '्छ', '्छन्', '्छिन्', 'एको', 'ेको'];

const WORD_SPLIT = /[\s\p{P}\p{S}\p{N}]+/u;

/** Function-word and word-ending evidence for Hindi, Marathi and Nepali in a Devanagari text. */
export function devanagariCues(text: string): Record<'hi' | 'mr' | 'ne', number> {
  const cues = { hi: 0, mr: 0, ne: 0 };
  for (const word of text.split(WORD_SPLIT)) {
    if (word === '') continue;
    if (HINDI_WORDS.has(word)) cues.hi++;
    else if (MARATHI_WORDS.has(word)) cues.mr++;
    else if (NEPALI_WORDS.has(word)) cues.ne++;
    else if (MARATHI_ENDINGS.some((e) => word.length > e.length && word.endsWith(e))) cues.mr++;
    else if (NEPALI_ENDINGS.some((e) => word.length > e.length + 1 && word.endsWith(e))) cues.ne++;
    // ळ is a Marathi letter that Hindi and Nepali spell with ल.
    if (word.includes('ळ')) cues.mr++;
  }
  return cues;
}

/**
 * The language the cues clearly favour: the only one with any cue, or at least two cues and twice
 * as many as any other.
 */
export function devanagariByCues(text: string): { language: string; strength: number } | undefined {
  const cues = devanagariCues(text);
  const ranked = (Object.entries(cues) as [string, number][]).sort((a, b) => b[1] - a[1]);
  const [first, second] = ranked;
  if ((first[1] >= 1 && second[1] === 0) || (first[1] >= 2 && first[1] >= 2 * second[1])) {
    // Strength grows with the lead and with the number of cues (three or more is full evidence).
    return { language: first[0], strength: (1 - second[1] / first[1]) * Math.min(1, first[1] / 3) };
  }
  return undefined;
}
