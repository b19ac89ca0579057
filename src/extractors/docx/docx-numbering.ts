/**
 * Word's automatic numbering ("1.2 Introduction", "a)", "iv."), which mammoth does not render:
 * it only knows whether a list level is ordered. We read word/numbering.xml and word/styles.xml,
 * then count paragraphs in document order the way Word does, so each numbered paragraph gets the
 * label Word would display.
 *
 * Counting rules (ECMA-376 §17.9): counters belong to the abstract numbering definition, so every
 * w:num that points at the same w:abstractNum continues one sequence, except a w:num that restarts
 * a level with w:lvlOverride/w:startOverride: that one counts on its own from the override. A level
 * restarts when a higher level is used (or only after the level named by w:lvlRestart; 0 = never).
 * Higher levels that were never used since their reset show their start value.
 */
import { isToolError } from '../../errors.ts';
import { attr, child, children, parseXml, path, type XmlNode } from '../shared/xml.ts';

export interface NumberingLevel {
  start: number;
  /** decimal, lowerLetter, upperRoman, bullet, none, ... */
  numFmt: string;
  /** Template such as "%1.%2." (placeholders are 1-based level numbers). */
  lvlText: string;
  /** w:lvlRestart: restart after this 1-based level is used; 0 = never; undefined = after any higher level. */
  restart?: number;
  /** w:isLgl: show every placeholder as an Arabic number. */
  legal: boolean;
  /** Paragraph style linked to this level (w:pStyle). */
  pStyle?: string;
}

interface AbstractNum {
  levels: Map<number, NumberingLevel>;
  numStyleLink?: string;
}

interface NumInstance {
  abstractId: string;
  /** Level -> start value from w:lvlOverride/w:startOverride. */
  startOverrides: Map<number, number>;
  /** Level -> replacement definition from w:lvlOverride/w:lvl. */
  levelOverrides: Map<number, NumberingLevel>;
}

interface StyleNumbering {
  numId?: string;
  ilvl?: number;
}

export interface NumberingDefinitions {
  nums: Map<string, NumInstance>;
  abstracts: Map<string, AbstractNum>;
  /** Paragraph style id -> its own numPr (not yet following basedOn). */
  styleNumPr: Map<string, StyleNumbering>;
  /** Paragraph style id -> basedOn style id. */
  basedOn: Map<string, string>;
  /** Numbering style id (w:type="numbering") -> numId of its numPr. */
  numberingStyles: Map<string, string>;
}

/** The numbering properties of one paragraph as written on the paragraph itself. */
export interface ParagraphNumbering {
  styleId?: string;
  numId?: string;
  ilvl?: number;
}

export interface NumberLabel {
  /** The label as Word shows it ("1.2.", "a)", "IV"); empty for numFmt none without literal text. */
  text: string;
  /** Bullets carry no number; callers usually leave them to the list rendering. */
  bullet: boolean;
  /**
   * True when the label is just this level's counter in Arabic digits with optional "." or ")"
   * (what a Markdown ordered list shows), so a `1.` marker with the right start says the same.
   */
  simple: boolean;
  /** The counter of the paragraph's own level. */
  value: number;
  level: number;
}

function intAttr(node: XmlNode | undefined, name = 'w:val'): number | undefined {
  const v = attr(node, name);
  if (v === undefined) return undefined;
  const n = Number.parseInt(v, 10);
  return Number.isFinite(n) ? n : undefined;
}

function readLevel(lvl: XmlNode): NumberingLevel {
  const legal = child(lvl, 'isLgl');
  const legalVal = attr(legal, 'w:val');
  return {
    start: intAttr(child(lvl, 'start')) ?? 1,
    // Word 2010+ wraps custom formats in mc:AlternateContent; the fallback is a standard format.
    numFmt: attr(child(lvl, 'numFmt') ?? path(lvl, 'AlternateContent', 'Fallback', 'numFmt'), 'w:val') ?? 'decimal',
    lvlText: attr(child(lvl, 'lvlText'), 'w:val') ?? '',
    restart: intAttr(child(lvl, 'lvlRestart')),
    legal: legal !== undefined && legalVal !== 'false' && legalVal !== '0',
    pStyle: attr(child(lvl, 'pStyle'), 'w:val'),
  };
}

function parsePart(xml: Buffer | undefined, what: string): XmlNode | undefined {
  if (!xml) return undefined;
  try {
    return parseXml(xml, what);
  } catch (err) {
    // A damaged numbering or styles part costs the labels, not the document.
    if (isToolError(err) && err.code === 'PAYLOAD_TOO_LARGE') throw err;
    return undefined;
  }
}

/** Read numbering.xml and styles.xml (either may be absent or damaged: then fewer labels). */
export function readNumberingDefinitions(numberingXml?: Buffer, stylesXml?: Buffer): NumberingDefinitions {
  const defs: NumberingDefinitions = {
    nums: new Map(),
    abstracts: new Map(),
    styleNumPr: new Map(),
    basedOn: new Map(),
    numberingStyles: new Map(),
  };
  const numbering = child(parsePart(numberingXml, 'word/numbering.xml'), 'numbering');
  for (const a of children(numbering, 'abstractNum')) {
    const id = attr(a, 'w:abstractNumId');
    if (id === undefined) continue;
    const levels = new Map<number, NumberingLevel>();
    for (const lvl of children(a, 'lvl')) levels.set(intAttr(lvl, 'w:ilvl') ?? 0, readLevel(lvl));
    defs.abstracts.set(id, { levels, numStyleLink: attr(child(a, 'numStyleLink'), 'w:val') });
  }
  for (const n of children(numbering, 'num')) {
    const id = attr(n, 'w:numId');
    const abstractId = attr(child(n, 'abstractNumId'), 'w:val');
    if (id === undefined || abstractId === undefined) continue;
    const inst: NumInstance = { abstractId, startOverrides: new Map(), levelOverrides: new Map() };
    for (const o of children(n, 'lvlOverride')) {
      const ilvl = intAttr(o, 'w:ilvl') ?? 0;
      const start = intAttr(child(o, 'startOverride'));
      if (start !== undefined) inst.startOverrides.set(ilvl, start);
      const lvl = child(o, 'lvl');
      if (lvl) inst.levelOverrides.set(ilvl, readLevel(lvl));
    }
    defs.nums.set(id, inst);
  }

  const styles = child(parsePart(stylesXml, 'word/styles.xml'), 'styles');
  for (const s of children(styles, 'style')) {
    const id = attr(s, 'w:styleId');
    if (id === undefined) continue;
    const numPr = child(child(s, 'pPr'), 'numPr');
    const numId = attr(child(numPr, 'numId'), 'w:val');
    if (attr(s, 'w:type') === 'numbering') {
      if (numId !== undefined) defs.numberingStyles.set(id, numId);
      continue;
    }
    const based = attr(child(s, 'basedOn'), 'w:val');
    if (based !== undefined) defs.basedOn.set(id, based);
    if (numPr) defs.styleNumPr.set(id, { numId, ilvl: intAttr(child(numPr, 'ilvl')) });
  }
  return defs;
}

const ROMAN: Array<[number, string]> = [
  [1000, 'm'], [900, 'cm'], [500, 'd'], [400, 'cd'], [100, 'c'], [90, 'xc'],
  [50, 'l'], [40, 'xl'], [10, 'x'], [9, 'ix'], [5, 'v'], [4, 'iv'], [1, 'i'],
];

function roman(n: number): string {
  if (n <= 0 || n >= 4000) return String(n);
  let out = '';
  for (const [v, s] of ROMAN) {
    while (n >= v) {
      out += s;
      n -= v;
    }
  }
  return out;
}

/** Word's letter numbering repeats the letter: a..z, aa..zz, aaa.. */
function letters(n: number): string {
  if (n <= 0) return String(n);
  const ch = String.fromCharCode(97 + ((n - 1) % 26));
  return ch.repeat(Math.floor((n - 1) / 26) + 1);
}

function ordinalSuffix(n: number): string {
  const t = n % 100;
  if (t >= 11 && t <= 13) return 'th';
  return ['th', 'st', 'nd', 'rd'][n % 10] ?? 'th';
}

/** One counter value in a numbering format; formats we do not model fall back to Arabic digits. */
export function formatNumber(n: number, numFmt: string): string {
  switch (numFmt) {
    case 'lowerRoman':
      return roman(n);
    case 'upperRoman':
      return roman(n).toUpperCase();
    case 'lowerLetter':
      return letters(n);
    case 'upperLetter':
      return letters(n).toUpperCase();
    case 'decimalZero':
      return n < 10 && n >= 0 ? `0${n}` : String(n);
    case 'ordinal':
      return `${n}${ordinalSuffix(n)}`;
    case 'none':
    case 'bullet':
      return '';
    default:
      return String(n);
  }
}

/**
 * True when a level's label is just its own counter in Arabic digits, optionally followed by "."
 * or ")": what a Markdown ordered list marker shows anyway.
 */
export function isPlainCounter(def: NumberingLevel, ilvl: number): boolean {
  return def.numFmt === 'decimal' && new RegExp(`^%${ilvl + 1}[.)]?$`).test(def.lvlText.trim());
}

const MAX_LEVELS = 9;
const MAX_LINK_HOPS = 8;

interface Counters {
  values: number[];
  used: boolean[];
}

/**
 * A numberer: call it for each paragraph in document order with the paragraph's own numbering
 * properties; it returns the label Word would display, or null for a paragraph that is not
 * numbered. Holds the running counters, so use one per document.
 */
export function createNumberer(defs: NumberingDefinitions): (p: ParagraphNumbering) => NumberLabel | null {
  const counters = new Map<string, Counters>();
  const seenNumIds = new Set<string>();

  const styleCache = new Map<string, StyleNumbering>();

  function styleNumbering(styleId: string | undefined): StyleNumbering {
    if (styleId === undefined) return {};
    let out = styleCache.get(styleId);
    if (!out) styleCache.set(styleId, (out = resolveStyleNumbering(styleId)));
    return out;
  }

  function resolveStyleNumbering(styleId: string): StyleNumbering {
    const out: StyleNumbering = {};
    const seen = new Set<string>();
    for (let id: string | undefined = styleId; id !== undefined && !seen.has(id) && seen.size < 16; id = defs.basedOn.get(id)) {
      seen.add(id);
      const np = defs.styleNumPr.get(id);
      if (!np) continue;
      if (out.numId === undefined && np.numId !== undefined) out.numId = np.numId;
      if (out.ilvl === undefined && np.ilvl !== undefined) out.ilvl = np.ilvl;
      if (out.numId !== undefined && out.ilvl !== undefined) break;
    }
    return out;
  }

  /** Follow w:numStyleLink to the abstract definition that holds the levels. */
  function resolveAbstract(numId: string): { abstractId: string; abstract: AbstractNum } | null {
    let inst = defs.nums.get(numId);
    for (let hop = 0; inst && hop < MAX_LINK_HOPS; hop++) {
      const abstract = defs.abstracts.get(inst.abstractId);
      if (!abstract) return null;
      if (!abstract.numStyleLink) return { abstractId: inst.abstractId, abstract };
      const linked = defs.numberingStyles.get(abstract.numStyleLink);
      if (linked === undefined) return null;
      inst = defs.nums.get(linked);
    }
    return null;
  }

  return (p: ParagraphNumbering): NumberLabel | null => {
    const fromStyle = p.numId === undefined || p.ilvl === undefined ? styleNumbering(p.styleId) : {};
    const numId = p.numId ?? fromStyle.numId;
    if (numId === undefined || numId === '0') return null;
    const inst = defs.nums.get(numId);
    const resolved = resolveAbstract(numId);
    if (!inst || !resolved) return null;
    const { abstractId, abstract } = resolved;

    let ilvl = p.ilvl ?? fromStyle.ilvl;
    if (ilvl === undefined && p.styleId !== undefined) {
      // A style linked from a level (w:pStyle) takes that level.
      for (const [k, lvl] of abstract.levels) if (lvl.pStyle === p.styleId) ilvl = k;
    }
    ilvl = Math.min(Math.max(ilvl ?? 0, 0), MAX_LEVELS - 1);
    const levelDef = (k: number): NumberingLevel | undefined => inst.levelOverrides.get(k) ?? abstract.levels.get(k);
    const def = levelDef(ilvl);
    if (!def) return null;

    // A w:num that restarts levels is a list of its own; plain ones continue their abstract's count.
    const key = inst.startOverrides.size > 0 ? `num:${numId}` : `abstract:${abstractId}`;
    let c = counters.get(key);
    if (!c) {
      c = { values: new Array<number>(MAX_LEVELS).fill(0), used: new Array<boolean>(MAX_LEVELS).fill(false) };
      counters.set(key, c);
    }
    if (!seenNumIds.has(numId)) {
      seenNumIds.add(numId);
      for (const [k, start] of inst.startOverrides) {
        if (k < 0 || k >= MAX_LEVELS) continue;
        c.values[k] = start - 1;
        c.used[k] = true;
      }
    }

    // Higher levels never used since their reset show their start value from now on.
    for (let k = 0; k < ilvl; k++) {
      if (!c.used[k]) {
        c.values[k] = levelDef(k)?.start ?? 1;
        c.used[k] = true;
      }
    }
    c.values[ilvl] = c.used[ilvl] ? c.values[ilvl] + 1 : def.start;
    c.used[ilvl] = true;
    for (let k = ilvl + 1; k < MAX_LEVELS; k++) {
      const restart = levelDef(k)?.restart;
      // lvlRestart names the (1-based) level after which level k restarts; 0 means never.
      const restartsHere = restart === undefined ? true : restart !== 0 && ilvl < restart;
      if (restartsHere) c.used[k] = false;
    }

    const value = c.values[ilvl];
    if (def.numFmt === 'bullet') return { text: def.lvlText, bullet: true, simple: false, value, level: ilvl };
    const text = def.lvlText.replace(/%([1-9])/g, (_m, d: string) => {
      const k = Number(d) - 1;
      const kd = levelDef(k);
      const v = k === ilvl ? value : c.used[k] ? c.values[k] : (kd?.start ?? 1);
      const fmt = def.legal && kd?.numFmt !== 'none' ? 'decimal' : (kd?.numFmt ?? 'decimal');
      return formatNumber(v, fmt);
    });
    const simple = isPlainCounter(def, ilvl);
    return { text: text.trim(), bullet: false, simple, value, level: ilvl };
  };
}
