/**
 * Unicode script census of a text. Many languages are decided by their script alone (Tamil, Telugu,
 * Hangul, ...); for the shared scripts (Latin, Cyrillic, Arabic, Devanagari) the script narrows the
 * candidates the statistical detector may choose from.
 */
export type Script =
  | 'Latin' | 'Greek' | 'Cyrillic' | 'Armenian' | 'Hebrew' | 'Arabic' | 'Devanagari' | 'Bengali'
  | 'Gurmukhi' | 'Gujarati' | 'Oriya' | 'Tamil' | 'Telugu' | 'Kannada' | 'Malayalam' | 'Sinhala'
  | 'Thai' | 'Lao' | 'Myanmar' | 'Georgian' | 'Ethiopic' | 'Khmer' | 'Hangul' | 'Kana' | 'Han';

/** [first, last, script] code point ranges of letters (and combining vowel signs) per script. */
const RANGES: readonly (readonly [number, number, Script])[] = [
  [0x0041, 0x005a, 'Latin'], [0x0061, 0x007a, 'Latin'], [0x00c0, 0x00d6, 'Latin'],
  [0x00d8, 0x00f6, 'Latin'], [0x00f8, 0x024f, 'Latin'], [0x1e00, 0x1eff, 'Latin'],
  [0x0370, 0x03ff, 'Greek'], [0x1f00, 0x1fff, 'Greek'],
  [0x0400, 0x052f, 'Cyrillic'],
  [0x0531, 0x058f, 'Armenian'],
  [0x05d0, 0x05ea, 'Hebrew'],
  [0x0620, 0x065f, 'Arabic'], [0x066e, 0x06d3, 'Arabic'], [0x06d5, 0x06ef, 'Arabic'],
  [0x06fa, 0x06ff, 'Arabic'], [0x0750, 0x077f, 'Arabic'], [0x08a0, 0x08ff, 'Arabic'],
  [0xfb50, 0xfdff, 'Arabic'], [0xfe70, 0xfefc, 'Arabic'],
  [0x0900, 0x097f, 'Devanagari'], [0xa8e0, 0xa8ff, 'Devanagari'],
  [0x0980, 0x09ff, 'Bengali'],
  [0x0a00, 0x0a7f, 'Gurmukhi'],
  [0x0a80, 0x0aff, 'Gujarati'],
  [0x0b00, 0x0b7f, 'Oriya'],
  [0x0b80, 0x0bff, 'Tamil'],
  [0x0c00, 0x0c7f, 'Telugu'],
  [0x0c80, 0x0cff, 'Kannada'],
  [0x0d00, 0x0d7f, 'Malayalam'],
  [0x0d80, 0x0dff, 'Sinhala'],
  [0x0e01, 0x0e4e, 'Thai'],
  [0x0e81, 0x0ecf, 'Lao'],
  [0x1000, 0x109f, 'Myanmar'],
  [0x10a0, 0x10ff, 'Georgian'],
  [0x1100, 0x11ff, 'Hangul'], [0x3131, 0x318e, 'Hangul'], [0xac00, 0xd7a3, 'Hangul'],
  [0x1200, 0x139f, 'Ethiopic'],
  [0x1780, 0x17dd, 'Khmer'],
  [0x3041, 0x309f, 'Kana'], [0x30a1, 0x30ff, 'Kana'], [0x31f0, 0x31ff, 'Kana'], [0xff66, 0xff9f, 'Kana'],
  [0x3400, 0x4dbf, 'Han'], [0x4e00, 0x9fff, 'Han'], [0xf900, 0xfaff, 'Han'], [0x20000, 0x3134f, 'Han'],
];

/** Scripts written for one language only (among those the detector reports). */
export const SINGLE_LANGUAGE_SCRIPTS: Readonly<Partial<Record<Script, string>>> = Object.freeze({
  Greek: 'el', Armenian: 'hy', Hebrew: 'he', Bengali: 'bn', Gurmukhi: 'pa', Gujarati: 'gu',
  Oriya: 'or', Tamil: 'ta', Telugu: 'te', Kannada: 'kn', Malayalam: 'ml', Sinhala: 'si', Thai: 'th',
  Lao: 'lo', Myanmar: 'my', Georgian: 'ka', Ethiopic: 'am', Khmer: 'km', Hangul: 'ko',
});

/**
 * An ideograph or syllable block carries about as much language as two or three alphabetic letters;
 * weighting them keeps a Chinese paragraph with a few English product names Chinese.
 */
const WEIGHT: Readonly<Partial<Record<Script, number>>> = Object.freeze({ Han: 2, Kana: 2, Hangul: 2 });

// A flat table for the Basic Multilingual Plane, built once: one lookup per character instead of a
// range search. Values are indexes into SCRIPT_LIST + 1 (0 = not a letter of a known script).
const SCRIPT_LIST: readonly Script[] = [...new Set(RANGES.map((r) => r[2]))];
const BMP_TABLE: Uint8Array = (() => {
  const table = new Uint8Array(0x10000);
  for (const [first, last, script] of RANGES) {
    const id = SCRIPT_LIST.indexOf(script) + 1;
    for (let cp = first; cp <= Math.min(last, 0xffff); cp++) table[cp] = id;
  }
  // Digits and punctuation inside the Indic blocks (danda, native digits) are not letters.
  for (let block = 0x0900; block < 0x0e00; block += 0x80) {
    for (let cp = block + 0x66; cp <= block + 0x6f; cp++) table[cp] = 0;
  }
  table[0x0964] = 0;
  table[0x0965] = 0;
  for (let cp = 0x0e50; cp <= 0x0e59; cp++) table[cp] = 0; // Thai digits
  return table;
})();

const HAN_ID = SCRIPT_LIST.indexOf('Han') + 1;
const KANA_ID = SCRIPT_LIST.indexOf('Kana') + 1;

export function scriptOf(codePoint: number): Script | undefined {
  if (codePoint <= 0xffff) {
    const id = BMP_TABLE[codePoint];
    return id === 0 ? undefined : SCRIPT_LIST[id - 1];
  }
  return codePoint >= 0x20000 && codePoint <= 0x3134f ? 'Han' : undefined;
}

export interface ScriptCensus {
  /** Weighted letter counts per script. */
  counts: Partial<Record<Script, number>>;
  /** Sum of all weighted counts. */
  total: number;
  /** Unweighted counts of kana and Han characters (to tell Japanese from Chinese). */
  kana: number;
  han: number;
}

export function countScripts(text: string): ScriptCensus {
  const tally = new Float64Array(SCRIPT_LIST.length + 1);
  for (let i = 0; i < text.length; i++) {
    let cp = text.charCodeAt(i);
    if (cp < 0x41) continue; // spaces, digits, ASCII punctuation: the common case, skipped cheaply
    let id: number;
    if (cp >= 0xd800 && cp <= 0xdbff && i + 1 < text.length) {
      cp = text.codePointAt(i) ?? cp;
      i++;
      id = cp >= 0x20000 && cp <= 0x3134f ? HAN_ID : 0;
    } else {
      id = BMP_TABLE[cp];
    }
    tally[id]++;
  }
  const counts: Partial<Record<Script, number>> = {};
  let total = 0;
  for (let id = 1; id < tally.length; id++) {
    if (tally[id] === 0) continue;
    const script = SCRIPT_LIST[id - 1];
    const weighted = tally[id] * (WEIGHT[script] ?? 1);
    counts[script] = weighted;
    total += weighted;
  }
  return { counts, total, kana: tally[KANA_ID], han: tally[HAN_ID] };
}

/**
 * The script with the most (weighted) letters. Kana and Han count together as one writing system,
 * reported as 'Kana' when kana make up at least 5% of it (Japanese mixes both; Chinese uses none),
 * else 'Han'.
 */
export function dominantScript(census: ScriptCensus): { script: Script; share: number } | undefined {
  if (census.total === 0) return undefined;
  let best: Script | undefined;
  let bestCount = 0;
  const cjk = (census.counts.Kana ?? 0) + (census.counts.Han ?? 0);
  for (const [script, count] of Object.entries(census.counts) as [Script, number][]) {
    if (script === 'Kana' || script === 'Han') continue;
    if (count > bestCount) {
      best = script;
      bestCount = count;
    }
  }
  if (cjk > bestCount) {
    const japanese = census.kana > 0 && census.kana >= 0.05 * (census.kana + census.han);
    return { script: japanese ? 'Kana' : 'Han', share: cjk / census.total };
  }
  return best === undefined ? undefined : { script: best, share: bestCount / census.total };
}
