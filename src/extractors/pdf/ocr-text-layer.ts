/**
 * Whether a PDF page's text layer is worth keeping, or is garbage that hides a scan: OCR engines
 * that write invisible text badly produce letters spaced apart ("A l e t t e r") and non-words
 * ("Aaalggfitted"). Such a layer counts as no text layer in `ocr: auto`.
 */

/** Share of single-letter tokens above which the layer is "letters spaced apart". */
const SPACED_LETTER_SHARE = 0.45;
/** Share of plausible words below which the layer is gibberish. */
const MIN_WORDLIKE_SHARE = 0.5;
/** Tokens needed before judging: short layers (a page number, a caption) are left alone. */
const MIN_TOKENS = 12;

/** Single letters that are words in common Latin-script languages. */
const ONE_LETTER_WORDS = new Set(['a', 'i', 'o', 'y', 'e', 'à', 'á', 'è', 'é', 'u']);

// Module constants, built once: the checks run on every token of every page (and tsx, which runs
// the sources, still writes a \p{...} literal as a `new RegExp(...)` built at each evaluation).
const DIGITS = /^\p{N}+$/u;
const VOWEL = /[aeiouyàáâäèéêëìíîïòóôöùúûü]/;
const UPPER = /^\p{Lu}+$/u;
const TRIPLE = /(.)\1\1/;
const CONSONANTS = /[bcdfghjklmnpqrstvwxz]{5,}/;
const CASE_FLIP = /\p{Ll}\p{Lu}/u;
const LATIN_RUNS = /[A-Za-zÀ-ÿ]+/g;
const LETTER_RUNS = /\p{L}+/gu;

/**
 * A token looks like a word when it has a vowel, no run of 3+ identical letters, no run of 5+
 * consonants, and no case flips inside (wOrD). Only Latin-script tokens are judged.
 */
function wordLike(token: string): boolean {
  if (DIGITS.test(token)) return true;
  const lower = token.toLowerCase();
  if (!VOWEL.test(lower)) return token.length <= 3 && UPPER.test(token);
  if (TRIPLE.test(lower)) return false;
  if (CONSONANTS.test(lower)) return false;
  if (CASE_FLIP.test(token.slice(1)) && !UPPER.test(token)) return false;
  return true;
}

/** Code points of a string (a surrogate pair is one), without an array of them. */
function codePoints(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xdc00 && c <= 0xdfff && i > 0 && s.charCodeAt(i - 1) >= 0xd800 && s.charCodeAt(i - 1) <= 0xdbff) n--;
  }
  return n;
}

export interface TextLayerVerdict {
  garbled: boolean;
  reason?: 'spaced_letters' | 'non_words';
}

export function judgeTextLayer(text: string): TextLayerVerdict {
  const latin = text.match(LATIN_RUNS) ?? [];
  if (latin.length < MIN_TOKENS) return { garbled: false };
  // Only a mostly Latin-script layer is judged: Arabic, CJK... text with Latin bits is left alone.
  // Counted without a string per letter: judged on every page of every PDF.
  let letters = 0;
  for (const run of text.matchAll(LETTER_RUNS)) letters += codePoints(run[0]);
  let latinLetters = 0;
  for (const t of latin) latinLetters += t.length;
  if (latinLetters < 0.6 * letters) return { garbled: false };
  const singles = latin.filter((t) => t.length === 1 && !ONE_LETTER_WORDS.has(t.toLowerCase())).length;
  if (singles / latin.length > SPACED_LETTER_SHARE) return { garbled: true, reason: 'spaced_letters' };
  const multi = latin.filter((t) => t.length > 1);
  if (multi.length < MIN_TOKENS) return { garbled: false };
  // Words are counted until the share can no longer fall below MIN_WORDLIKE_SHARE (most pages stop
  // about halfway); the verdict is the one counting them all would give.
  const enough = MIN_WORDLIKE_SHARE * multi.length;
  let words = 0;
  for (const t of multi) if (wordLike(t) && ++words >= enough) return { garbled: false };
  return { garbled: true, reason: 'non_words' };
}
