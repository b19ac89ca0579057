/**
 * The lexical analyzer shared by the BM25 index, the diversity filter and the evaluation harness:
 * Unicode NFKC, lower case, letters/digits of every script, Latin/Greek/Cyrillic diacritics folded,
 * scripts written without spaces (Han, kana, Thai, Lao, Khmer, Myanmar) split into character
 * bigrams, English stop words dropped and English words stemmed (Porter). Korean words carry
 * particles ("개선과제는"), so Hangul words give their bigrams too, and the whole word.
 */
import { stemmer } from 'stemmer';
import { languageRules, type LanguageRules } from './language-rules.ts';
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
  /**
   * Apply the rules of the language passed to `tokenize` (its Snowball stemmer and stop words, and
   * diacritics kept where they tell words apart) instead of the English ones (default false).
   */
  languages?: boolean;
  /**
   * With `languages`, text in a language other than English also gives the character trigrams of
   * its words (terms of their own, which never equal a word term), and Thai, Lao, Khmer and Myanmar
   * runs are indexed by trigrams instead of bigrams (default 3; 0: off). Inflected forms a stemmer
   * misses still share most of their trigrams. English keeps words only: trigrams measured no better
   * there (SciFact, XQuAD) and cost five times the query time.
   */
  grams?: 0 | 3;
}

/**
 * The analyzer the server builds its indexes with: per-language rules and trigrams (measured by
 * `npm run bench:languages`: nDCG@10 0.957-0.974 in 12 languages against 0.879-0.973 for the v2
 * analyzer, English unchanged). Indexes carry the signature they were built with; a snapshot of
 * another analyzer is rebuilt from the stored chunks when it is opened.
 */
export const SERVER_ANALYZER: Readonly<AnalyzerOptions> = Object.freeze({ languages: true });

/** Marks a character n-gram term, so "ion" the gram and "ion" the word are different terms. */
export const GRAM_MARK = '\u0001';

// A decimal number, a hyphenated compound, or a run of letters/marks/digits of any script.
const TOKEN_RE_DECIMALS = /\p{N}+(?:[.,]\p{N}+)+|[\p{L}\p{N}\p{M}]+(?:-[\p{L}\p{N}\p{M}]+)*/gu;
const TOKEN_RE_PLAIN = /[\p{L}\p{N}\p{M}]+(?:-[\p{L}\p{N}\p{M}]+)*/gu;
// Scripts written without spaces between words: indexed as overlapping character bigrams.
const UNSPACED_RUN_RE = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}\u30fc\p{M}]+|[\uac00-\ud7a3]+/gu;
const HAS_UNSPACED_RE = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}\uac00-\ud7a3]/u;
const HANGUL_RE = /^[\uac00-\ud7a3]/;
// Unspaced scripts without a word-like unit: trigrams match them better than bigrams.
const TRIGRAM_RUN_RE = /^[\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/u;
const HAS_TRIGRAM_SCRIPT_RE = /[\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/u;
const TRIGRAM_SPACE_RE = /(?<=[\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}])\s+(?=[\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}])/gu;
/** Per-language word results cached at most this long (a long Han run's bigrams are not kept). */
const CACHED_TERMS_MAX = 24;
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
type Terms = string | readonly string[] | null;

export class Analyzer {
  readonly options: Required<Omit<AnalyzerOptions, 'stem'>> & { stem: 'porter' | 'none' };
  private readonly stemCache = new Map<string, string>();
  /** Whole word -> its terms (null for a stop word): most words repeat, so one lookup serves. */
  private readonly wordCache = new Map<string, Terms>();
  /** The same per language with rules of its own (the default rules use wordCache). */
  private readonly languageCaches = new Map<string, Map<string, Terms>>();
  private readonly tokenRe: RegExp;
  private readonly hotHash = new Int32Array(HOT_MASK + 1);
  private readonly hotRaw: Array<string | undefined> = new Array(HOT_MASK + 1);
  private readonly hotTerm: Terms[] = new Array(HOT_MASK + 1).fill(null);
  private readonly stops: ReadonlySet<string> | null;

  constructor(opts: AnalyzerOptions = {}) {
    this.options = {
      stem: opts.stem === false ? 'none' : 'porter',
      stopWords: opts.stopWords ?? 'extended',
      keepDecimals: opts.keepDecimals ?? true,
      joinHyphenated: opts.joinHyphenated ?? false,
      languages: opts.languages ?? false,
      grams: opts.languages ? (opts.grams ?? 3) : 0,
    };
    this.stops = stopWordSet(this.options.stopWords);
    this.tokenRe = this.options.keepDecimals ? TOKEN_RE_DECIMALS : TOKEN_RE_PLAIN;
  }

  /**
   * This analyzer with `language` as the default of every tokenize call (caches shared): an index of
   * one document in one language, and its queries, use that language's rules.
   */
  withLanguage(language: string | undefined): Analyzer {
    if (!language || !this.options.languages) return this;
    const bound = Object.create(this) as Analyzer & { defaultLanguage?: string };
    bound.defaultLanguage = language;
    return bound;
  }

  /** Set on an analyzer made by withLanguage. */
  protected defaultLanguage?: string;

  /** A stable description of the options, stored beside indexes built with this analyzer. */
  get signature(): string {
    const o = this.options;
    const v2 = `stem=${o.stem}:stop=${o.stopWords}:dec=${o.keepDecimals}:hy=${o.joinHyphenated}`;
    // Indexes built before languages and grams existed carry the v2 signature and keep it.
    if (!o.languages) return `v2:${v2}`;
    // `script-grams`: Thai-like runs are trigrams whatever the language (before, only with a
    // language's rules); a snapshot without it is rebuilt from the stored chunks.
    return `v3:${v2}:lang=rules:grams=${o.grams}:script-grams`;
  }

  /**
   * Index terms of a text, in order (duplicates kept: term frequency matters). `language` (ISO 639-1,
   * e.g. the document's or the query's detected language) picks that language's rules when the
   * analyzer applies languages; absent or unknown, the English rules apply.
   */
  tokenize(text: string, language?: string): string[] {
    const out: string[] = [];
    if (!text) return out;
    const rules = this.rulesFor(language ?? this.defaultLanguage);
    // ASCII is its own NFKC form and has no marks, so a plain scan finds the very tokens the
    // Unicode regex would; the regex path (normalize + \p{} classes) was most of indexing's CPU.
    const ascii = !NON_ASCII_RE.test(text);
    let normalized = ascii ? text.toLowerCase() : text.normalize('NFKC').toLowerCase();
    // Thai-like scripts put spaces between phrases, not words: their trigrams run across the space.
    // Decided by the script, not the language label: a Thai document full of Latin names may be
    // detected with low confidence (no language, so English rules) and must still meet its queries.
    if (this.options.grams && !ascii && HAS_TRIGRAM_SCRIPT_RE.test(normalized)) normalized = normalized.replace(TRIGRAM_SPACE_RE, '');
    if (ascii && !rules) this.scanAscii(normalized, out);
    else for (const raw of normalized.match(this.tokenRe) ?? []) this.emitRaw(raw, out, rules);
    return out;
  }

  /** The rules of `language`; null for English, for no language, and when languages are off. */
  private rulesFor(language: string | undefined): LanguageRules | null {
    if (!this.options.languages || !language || language === 'en') return null;
    return languageRules(language);
  }

  private emitRaw(raw: string, out: string[], rules: LanguageRules | null): void {
    const cache = rules ? this.cacheOf(rules.language) : this.wordCache;
    const known = cache.get(raw);
    if (known !== undefined) {
      pushTerms(known, out);
      return;
    }
    if (raw.includes('-')) {
      const parts = raw.split('-');
      for (const p of parts) this.emitWord(p, out, rules);
      if (this.options.joinHyphenated) this.emitWord(parts.join(''), out, rules);
    } else {
      const before = out.length;
      this.emitWord(raw, out, rules);
      const added = out.length - before;
      if (added <= CACHED_TERMS_MAX) {
        // The cache only saves time; dropping it when full keeps memory bounded.
        if (cache.size >= STEM_CACHE_MAX) cache.clear();
        cache.set(raw, added === 0 ? null : added === 1 ? out[before] : out.slice(before));
      }
    }
  }

  private cacheOf(language: string): Map<string, Terms> {
    let cache = this.languageCaches.get(language);
    if (!cache) {
      cache = new Map();
      this.languageCaches.set(language, cache);
    }
    return cache;
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
        this.emitRaw(s.slice(start, end), out, null);
        continue;
      }
      let h = 0x811c9dc5;
      for (let k = start; k < end; k++) h = Math.imul(h ^ s.charCodeAt(k), 0x01000193);
      const slot = (h ^ (h >>> 15)) & HOT_MASK;
      const key = hotRaw[slot];
      if (key !== undefined && hotHash[slot] === h && key.length === end - start && sameChars(s, start, key)) {
        pushTerms(hotTerm[slot], out);
        continue;
      }
      const raw = s.slice(start, end);
      this.emitRaw(raw, out, null);
      const term = this.wordCache.get(raw);
      if (term !== undefined) {
        hotHash[slot] = h;
        hotRaw[slot] = raw;
        hotTerm[slot] = term;
      }
    }
  }

  private emitWord(word: string, out: string[], rules: LanguageRules | null): void {
    if (!word) return;
    if (NON_ASCII_RE.test(word) && HAS_UNSPACED_RE.test(word)) {
      this.emitMixed(word, out, rules);
      return;
    }
    this.emitSpaced(word, out, rules);
  }

  /** A word of a spaced script: its term (stemmed, folded by the rules) and, when on, its trigrams. */
  private emitSpaced(word: string, out: string[], rules: LanguageRules | null): void {
    const fold = (rules?.foldDiacritics ?? true) && NON_ASCII_RE.test(word) && FOLDABLE_RE.test(word);
    const folded = fold ? word.normalize('NFD').replace(MARKS_RE, '').normalize('NFC') || word : word;
    if (rules && (rules.latin || NON_ASCII_RE.test(word))) {
      if (rules.stopWords?.has(word) || rules.stopWords?.has(folded)) return;
      const stemmed = rules.stem ? rules.stem(word) : word;
      out.push(fold ? stemmed.normalize('NFD').replace(MARKS_RE, '').normalize('NFC') || stemmed : stemmed);
    } else {
      if (this.stops?.has(folded)) return;
      this.emitTerm(folded, out);
    }
    if (rules && this.options.grams) emitGrams(folded, this.options.grams, GRAM_MARK, out);
  }

  /**
   * Words mixing an unspaced script with others: bigrams for Han, kana and Hangul runs (trigrams for
   * Thai-like runs when grams are on), words elsewhere.
   */
  private emitMixed(word: string, out: string[], rules: LanguageRules | null): void {
    let last = 0;
    for (const m of word.matchAll(UNSPACED_RUN_RE)) {
      const run = m[0];
      const at = m.index ?? 0;
      if (at > last) this.emitMixedPart(word.slice(last, at), out, rules);
      last = at + run.length;
      const chars = Array.from(run);
      if (this.options.grams && TRIGRAM_RUN_RE.test(run)) {
        emitGrams(run, 3, '', out);
        continue;
      }
      if (chars.length === 1) out.push(chars[0]);
      // A whole Hangul word still matches itself exactly (and outranks a mere bigram overlap).
      else if (chars.length > 2 && HANGUL_RE.test(run)) out.push(run);
      for (let i = 0; i + 1 < chars.length; i++) out.push(chars[i] + chars[i + 1]);
    }
    if (last < word.length) this.emitMixedPart(word.slice(last), out, rules);
  }

  /** The spaced-script part of a mixed word; the v2 analyzer took it as it was (no folding). */
  private emitMixedPart(part: string, out: string[], rules: LanguageRules | null): void {
    if (rules) {
      this.emitSpaced(part, out, rules);
      return;
    }
    if (this.stops?.has(part)) return;
    this.emitTerm(part, out);
  }

  private emitTerm(term: string, out: string[]): void {
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

function pushTerms(terms: Terms, out: string[]): void {
  if (terms === null) return;
  if (typeof terms === 'string') out.push(terms);
  else for (const t of terms) out.push(t);
}

/** The character n-grams of `word` (the word itself when not longer than n), each prefixed by `mark`. */
function emitGrams(word: string, n: number, mark: string, out: string[]): void {
  const chars = Array.from(word);
  if (chars.length <= n) {
    out.push(mark + word);
    return;
  }
  for (let i = 0; i + n <= chars.length; i++) {
    let g = mark;
    for (let k = i; k < i + n; k++) g += chars[k];
    out.push(g);
  }
}
