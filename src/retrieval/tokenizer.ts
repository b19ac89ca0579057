/**
 * The lexical analyzer shared by the BM25 index, the diversity filter and the evaluation harness:
 * Unicode NFKC, lower case, letters/digits of every script, Latin/Greek/Cyrillic diacritics folded,
 * scripts written without spaces (Han, kana, Thai, Lao, Khmer, Myanmar) split into character
 * bigrams, English stop words dropped and English words stemmed (Porter). Korean words carry
 * particles ("개선과제는"), so Hangul words give their bigrams too, and the whole word.
 */
import { stemmer } from 'stemmer';
import { stopWordSet, type StopWordList } from './stop-words.ts';

export interface AnalyzerOptions {
  /** Porter-stem ASCII words (default true). Porter2 (Snowball English) measured no better on SciFact. */
  stem?: boolean;
  /** Which English stop words to drop (default 'extended'). */
  stopWords?: StopWordList;
  /** Keep decimal numbers such as "0.05" or "1,000" as one token (default true). */
  keepDecimals?: boolean;
  /** Also emit the joined form of hyphenated compounds ("covid-19" -> "covid19") (default false). */
  joinHyphenated?: boolean;
}

// A decimal number, a hyphenated compound, or a run of letters/marks/digits of any script.
const TOKEN_RE_DECIMALS = /\p{N}+(?:[.,]\p{N}+)+|[\p{L}\p{N}\p{M}]+(?:-[\p{L}\p{N}\p{M}]+)*/gu;
const TOKEN_RE_PLAIN = /[\p{L}\p{N}\p{M}]+(?:-[\p{L}\p{N}\p{M}]+)*/gu;
// Scripts written without spaces between words: indexed as overlapping character bigrams.
const UNSPACED_RUN_RE = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}\u30fc\p{M}]+|[\uac00-\ud7a3]+/gu;
const HAS_UNSPACED_RE = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}\uac00-\ud7a3]/u;
const HANGUL_RE = /^[\uac00-\ud7a3]/;
const FOLDABLE_RE = /^[\p{Script=Latin}\p{Script=Greek}\p{Script=Cyrillic}\p{N}\p{M}]+$/u;
const NON_ASCII_RE = /[^\x00-\x7f]/;
const ASCII_WORD_RE = /^[a-z]+$/;
const MARKS_RE = /\p{Mn}/gu;

const STEM_CACHE_MAX = 200_000;

const isDigit = (c: number) => c >= 48 && c <= 57;
const isAlnum = (c: number) => (c >= 97 && c <= 122) || isDigit(c);

/** Slots of the hot-word table (bounded: it only saves time, a collision just replaces a word). */
const HOT_MASK = (1 << 14) - 1;

function sameChars(s: string, at: number, key: string): boolean {
  for (let k = 0; k < key.length; k++) if (s.charCodeAt(at + k) !== key.charCodeAt(k)) return false;
  return true;
}

/**
 * A configured analyzer. Stateful only for its stem cache (bounded), so one instance is shared by an
 * index and its queries; two instances with the same options produce identical tokens.
 */
export class Analyzer {
  readonly options: Required<Omit<AnalyzerOptions, 'stem'>> & { stem: 'porter' | 'none' };
  private readonly stemCache = new Map<string, string>();
  /** Whole word -> its single term (null for a stop word): most words repeat, so one lookup serves. */
  private readonly wordCache = new Map<string, string | null>();
  private readonly tokenRe: RegExp;
  private readonly hotHash = new Int32Array(HOT_MASK + 1);
  private readonly hotRaw: Array<string | undefined> = new Array(HOT_MASK + 1);
  private readonly hotTerm: Array<string | null> = new Array(HOT_MASK + 1).fill(null);
  private readonly stops: ReadonlySet<string> | null;

  constructor(opts: AnalyzerOptions = {}) {
    this.options = {
      stem: opts.stem === false ? 'none' : 'porter',
      stopWords: opts.stopWords ?? 'extended',
      keepDecimals: opts.keepDecimals ?? true,
      joinHyphenated: opts.joinHyphenated ?? false,
    };
    this.stops = stopWordSet(this.options.stopWords);
    this.tokenRe = this.options.keepDecimals ? TOKEN_RE_DECIMALS : TOKEN_RE_PLAIN;
  }

  /** A stable description of the options, stored beside indexes built with this analyzer. */
  get signature(): string {
    const o = this.options;
    return `v2:stem=${o.stem}:stop=${o.stopWords}:dec=${o.keepDecimals}:hy=${o.joinHyphenated}`;
  }

  /** Index terms of a text, in order (duplicates kept: term frequency matters). */
  tokenize(text: string): string[] {
    const out: string[] = [];
    if (!text) return out;
    // ASCII is its own NFKC form and has no marks, so a plain scan finds the very tokens the
    // Unicode regex would; the regex path (normalize + \p{} classes) was most of indexing's CPU.
    const ascii = !NON_ASCII_RE.test(text);
    const normalized = ascii ? text.toLowerCase() : text.normalize('NFKC').toLowerCase();
    if (ascii) this.scanAscii(normalized, out);
    else for (const raw of normalized.match(this.tokenRe) ?? []) this.emitRaw(raw, out);
    return out;
  }

  private emitRaw(raw: string, out: string[]): void {
    const known = this.wordCache.get(raw);
    if (known !== undefined) {
      if (known !== null) out.push(known);
      return;
    }
    if (raw.includes('-')) {
      const parts = raw.split('-');
      for (const p of parts) this.emitWord(p, out);
      if (this.options.joinHyphenated) this.emitWord(parts.join(''), out);
    } else {
      const before = out.length;
      this.emitWord(raw, out);
      const added = out.length - before;
      if (added <= 1) {
        if (this.wordCache.size >= STEM_CACHE_MAX) this.wordCache.clear();
        this.wordCache.set(raw, added === 1 ? out[before] : null);
      }
    }
  }

  /**
   * TOKEN_RE_DECIMALS / TOKEN_RE_PLAIN over lower-cased ASCII: the leftmost match at each point, a
   * decimal number tried first, else a word of letters/digits joined by single hyphens. A word seen
   * before is found by its characters in a small direct-mapped table, without cutting it out of
   * the text or hashing a new string (that and the Map lookup were most of the time per token).
   */
  private scanAscii(s: string, out: string[]): void {
    const keepDecimals = this.options.keepDecimals;
    const { hotHash, hotRaw, hotTerm } = this;
    const n = s.length;
    let i = 0;
    while (i < n) {
      if (!isAlnum(s.charCodeAt(i))) {
        i++;
        continue;
      }
      const start = i;
      let end = -1;
      let hyphen = false;
      if (keepDecimals && isDigit(s.charCodeAt(i))) {
        let j = i;
        while (j < n && isDigit(s.charCodeAt(j))) j++;
        for (;;) {
          const sep = s.charCodeAt(j);
          if ((sep !== 46 && sep !== 44) || !isDigit(s.charCodeAt(j + 1))) break;
          j++;
          while (j < n && isDigit(s.charCodeAt(j))) j++;
          end = j;
        }
      }
      if (end < 0) {
        let j = i;
        for (;;) {
          while (j < n && isAlnum(s.charCodeAt(j))) j++;
          if (s.charCodeAt(j) === 45 && isAlnum(s.charCodeAt(j + 1))) {
            hyphen = true;
            j++;
          } else break;
        }
        end = j;
      }
      i = end;
      if (hyphen) {
        this.emitRaw(s.slice(start, end), out);
        continue;
      }
      let h = 0x811c9dc5;
      for (let k = start; k < end; k++) h = Math.imul(h ^ s.charCodeAt(k), 0x01000193);
      const slot = (h ^ (h >>> 15)) & HOT_MASK;
      const key = hotRaw[slot];
      if (key !== undefined && hotHash[slot] === h && key.length === end - start && sameChars(s, start, key)) {
        const term = hotTerm[slot];
        if (term !== null) out.push(term);
        continue;
      }
      const raw = s.slice(start, end);
      this.emitRaw(raw, out);
      const term = this.wordCache.get(raw);
      if (term !== undefined) {
        hotHash[slot] = h;
        hotRaw[slot] = raw;
        hotTerm[slot] = term;
      }
    }
  }

  private emitWord(word: string, out: string[]): void {
    if (!word) return;
    if (NON_ASCII_RE.test(word)) {
      if (HAS_UNSPACED_RE.test(word)) {
        this.emitMixed(word, out);
        return;
      }
      if (FOLDABLE_RE.test(word)) {
        const folded = word.normalize('NFD').replace(MARKS_RE, '').normalize('NFC');
        if (folded) word = folded;
      }
    }
    this.emitTerm(word, out);
  }

  /** Words mixing an unspaced script with others: bigrams for the unspaced runs, words elsewhere. */
  private emitMixed(word: string, out: string[]): void {
    let last = 0;
    for (const m of word.matchAll(UNSPACED_RUN_RE)) {
      const run = m[0];
      const at = m.index ?? 0;
      if (at > last) this.emitTerm(word.slice(last, at), out);
      last = at + run.length;
      const chars = Array.from(run);
      if (chars.length === 1) out.push(chars[0]);
      // A whole Hangul word still matches itself exactly (and outranks a mere bigram overlap).
      else if (chars.length > 2 && HANGUL_RE.test(run)) out.push(run);
      for (let i = 0; i + 1 < chars.length; i++) out.push(chars[i] + chars[i + 1]);
    }
    if (last < word.length) this.emitTerm(word.slice(last), out);
  }

  private emitTerm(term: string, out: string[]): void {
    if (this.stops?.has(term)) return;
    if (this.options.stem !== 'none' && term.length > 2 && ASCII_WORD_RE.test(term)) term = this.stem(term);
    out.push(term);
  }

  private stem(word: string): string {
    let s = this.stemCache.get(word);
    if (s === undefined) {
      // The cache only saves time; dropping it when full keeps memory bounded.
      if (this.stemCache.size >= STEM_CACHE_MAX) this.stemCache.clear();
      s = stemmer(word);
      this.stemCache.set(word, s);
    }
    return s;
  }
}
