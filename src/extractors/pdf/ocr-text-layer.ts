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

/**
 * A token looks like a word when it has a vowel, no run of 3+ identical letters, no run of 5+
 * consonants, and no case flips inside (wOrD). Only Latin-script tokens are judged.
 */
function wordLike(token: string): boolean {
  if (/^\p{N}+$/u.test(token)) return true;
  const lower = token.toLowerCase();
  if (!/[aeiouyàáâäèéêëìíîïòóôöùúûü]/.test(lower)) return token.length <= 3 && /^\p{Lu}+$/u.test(token);
  if (/(.)\1\1/.test(lower)) return false;
  if (/[bcdfghjklmnpqrstvwxz]{5,}/.test(lower)) return false;
  if (/\p{Ll}\p{Lu}/u.test(token.slice(1)) && !/^\p{Lu}+$/u.test(token)) return false;
  return true;
}

export interface TextLayerVerdict {
  garbled: boolean;
  reason?: 'spaced_letters' | 'non_words';
}

export function judgeTextLayer(text: string): TextLayerVerdict {
  const latin = text.match(/[A-Za-zÀ-ÿ]+/g) ?? [];
  if (latin.length < MIN_TOKENS) return { garbled: false };
  // Only a mostly Latin-script layer is judged: Arabic, CJK... text with Latin bits is left alone.
  // Counted without a string per letter: judged on every page of every PDF.
  let letters = 0;
  for (const run of text.matchAll(/\p{L}+/gu)) letters += [...run[0]].length;
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
