/**
 * eld's language scores, computed as eld computes them from the same 'small' table (60
 * languages), without what eld builds around them per call.
 *
 * eld's detect() then getScores() build a result object with two closures, an array of
 * [language, score] pairs sorted by score, and an object keyed by language code (in dictionary
 * mode: 60 keys added one by one), which the caller then walks with for...in; its inner loop walks
 * each n-gram's entry, an object with integer keys, with for...in too. Served over HTTP, that
 * cost a detect_language call about 50 us of CPU where the same steps on arrays cost a few.
 *
 * Same numbers: the text is cut to eld's 1,000 characters, split with eld's own separator pattern
 * and encoded with eld's own byte dictionary (both read from the installed eld), its n-grams are
 * taken with eld's rule, and each language's score is the same sum of integers, scaled by the
 * same expression. test/language/ngram-scorer.test.ts compares every score with eld's getScores()
 * on texts in many scripts.
 */

/** eld's table: language index -> ISO 639-1 code, n-gram -> { language index: score }. */
export interface NgramTable {
  languages: Record<string, string>;
  ngrams: Record<string, Record<string, number>>;
}

/** The two pieces of eld's text processing the scores depend on, read from the installed eld. */
export interface EldText {
  /** Runs of non-letters (eld's regexPatterns.separators; global). */
  separators: RegExp;
  /** Byte value -> the one-character string eld's table spells that byte with. */
  dictionary: readonly string[];
}

/** eld subtracts this from every stored n-gram score to keep its table small, and adds it back. */
const BASE_NGRAM_SCORE = 53;
/** eld's scale: a language's score is s / (s + 25), s its mean n-gram score. */
const SCALE = 25;
/** eld reads no more of a text. */
const MAX_CHARS = 1000;
/** strToUtf8Bytes: stop at the first space after this many bytes, and after any character past ENFORCE_CUT_AFTER. */
const CUT_AFTER = 350;
const ENFORCE_CUT_AFTER = 380;
/** getByteNgrams reads at most this many bytes of a word. */
const MAX_WORD = 70;

const NONE: readonly number[] = [];

export class NgramScorer {
  /** Language index -> code. */
  readonly codes: readonly string[];
  private readonly index = new Map<string, number>();
  /**
   * N-gram -> [language, score + BASE, language, score + BASE, ...], filled as n-grams are met.
   * Only the table's own n-grams are kept, so it never holds more entries than the table.
   */
  private readonly entries = new Map<string, readonly number[]>();
  private readonly raw: Float64Array;
  private readonly out: Float64Array;

  constructor(
    private readonly table: NgramTable,
    private readonly eld: EldText,
  ) {
    const n = Object.keys(table.languages).length;
    const codes: string[] = new Array(n);
    for (let i = 0; i < n; i++) {
      codes[i] = table.languages[i];
      this.index.set(codes[i], i);
    }
    this.codes = codes;
    this.raw = new Float64Array(n);
    this.out = new Float64Array(n);
  }

  /** The index of a language code in `codes` (undefined: not one of the table's languages). */
  indexOf(code: string): number | undefined {
    return this.index.get(code);
  }

  /**
   * eld's score per language index for `text` (what getScores() gives for that language's code),
   * 0 for a language without evidence. One array per scorer, overwritten by the next call
   * (detection is synchronous: read it before scoring again).
   */
  scores(text: string): Float64Array {
    const out = this.out;
    out.fill(0);
    const grams = ngramsOf(this.words(text.substring(0, MAX_CHARS)));
    const raw = this.raw;
    raw.fill(0);
    for (const gram of grams) {
      const entry = this.entry(gram);
      for (let i = 0; i < entry.length; i += 2) raw[entry[i]] += entry[i + 1];
    }
    const count = grams.size;
    for (let l = 0; l < raw.length; l++) {
      if (raw[l] > 0) {
        const s = raw[l] / count;
        out[l] = s / (s + SCALE);
      }
    }
    return out;
  }

  private entry(gram: string): readonly number[] {
    const known = this.entries.get(gram);
    if (known !== undefined) return known;
    if (!Object.hasOwn(this.table.ngrams, gram)) return NONE;
    const langs = this.table.ngrams[gram];
    const pairs: number[] = [];
    for (const l in langs) pairs.push(Number(l), langs[l] + BASE_NGRAM_SCORE);
    this.entries.set(gram, pairs);
    return pairs;
  }

  /** eld's textProcessor: separators to spaces, trimmed, lower case, each word spelt in eld's byte characters. */
  private words(text: string): string[] {
    const str = text.replace(this.eld.separators, ' ').trim().toLowerCase();
    const dict = this.eld.dictionary;
    const words: string[] = [];
    let encoded = '';
    let bytes = 0;
    for (let i = 0; i < str.length; i++) {
      let c = str.charCodeAt(i);
      if (c < 0x80) {
        if (c === 32) {
          if (encoded !== '') {
            words.push(encoded);
            encoded = '';
          }
          if (bytes > CUT_AFTER) break;
        } else encoded += str[i];
        bytes++;
      } else if (c < 0x800) {
        encoded += dict[0xc0 | (c >> 6)] + dict[0x80 | (c & 0x3f)];
        bytes += 2;
      } else if (c < 0xd800 || c >= 0xe000) {
        encoded += dict[0xe0 | (c >> 12)] + dict[0x80 | ((c >> 6) & 0x3f)] + dict[0x80 | (c & 0x3f)];
        bytes += 3;
      } else {
        // A surrogate pair, read as eld reads it (whatever follows the high half).
        i++;
        c = 0x10000 + (((c & 0x3ff) << 10) | (str.charCodeAt(i) & 0x3ff));
        encoded += dict[0xf0 | (c >> 18)] + dict[0x80 | ((c >> 12) & 0x3f)] + dict[0x80 | ((c >> 6) & 0x3f)] + dict[0x80 | (c & 0x3f)];
        bytes += 4;
      }
      if (bytes > ENFORCE_CUT_AFTER) break;
    }
    if (encoded !== '') words.push(encoded);
    return words;
  }
}

/** eld's getByteNgrams: 4-byte n-grams at a stride of 3, a space marking a word's start and end. */
function ngramsOf(words: readonly string[]): Set<string> {
  const grams = new Set<string>();
  for (const word of words) {
    const len = Math.min(word.length, MAX_WORD);
    let j = 0;
    for (; j + 4 < len; j += 3) grams.add((j === 0 ? ' ' : '') + word.substring(j, j + 4));
    // From len - 4 to the word's end (not to len): eld's expression, kept for the same n-grams.
    grams.add((j === 0 ? ' ' : '') + word.substring(len !== 3 ? len - 4 : 0) + ' ');
  }
  return grams;
}
