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

const LETTER = /^\p{L}$/u;
/** Per BMP code unit beyond ASCII: 0 not asked yet, 1 a letter, 2 not (64 KB, filled as met). */
const BMP_LETTER = new Uint8Array(0x10000);

/**
 * Code points of `text` that are letters (\p{L}): what summing the code points of its
 * /\p{L}+/gu runs gives, counted without a match or a string per run (judged on every page of
 * every PDF). ASCII is decided inline; any other code point by the same property.
 */
export function letterCount(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) {
      if ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x7a) n++;
      continue;
    }
    const cp = text.codePointAt(i)!;
    if (cp > 0xffff) {
      i++;
      if (LETTER.test(String.fromCodePoint(cp))) n++;
      continue;
    }
    let known = BMP_LETTER[cp]!;
    if (known === 0) known = BMP_LETTER[cp] = LETTER.test(String.fromCharCode(cp)) ? 1 : 2;
    if (known === 1) n++;
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
  const letters = letterCount(text);
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
