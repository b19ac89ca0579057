/**
 * Rewrites word/document.xml before mammoth reads it, for the two things mammoth cannot show:
 * - numbered paragraphs get an invisible marker run (private noncharacters around an index into
 *   the computed labels), which docx-number-labels.ts later turns into the displayed number;
 * - equations (m:oMathPara, m:oMath) are replaced by a text run holding `$$latex$$` / `$latex$`.
 * - list levels whose labels are not plain counters ("1.2.", "a)") are made bullet levels in
 *   numbering.xml, so mammoth emits them as bullet lists whose items then begin with the label
 *   (rebuilding those lists in the DOM afterwards would cost far more on long documents).
 * The document is scanned as text rather than parsed whole: a 5 MB body would cost a full tree for
 * a handful of edits, and paragraph properties and equations are easy to delimit. Each equation is
 * parsed with the safe XML parser on its own.
 */
import { isToolError } from '../../errors.ts';
import { ommlToLatex } from './docx-math.ts';
import { createNumberer, isPlainCounter, type NumberLabel, type NumberingDefinitions } from './docx-numbering.ts';
import { parseXml } from '../shared/xml.ts';
import { markPageBreaks, type PageBreakCounts } from './docx-pages.ts';

export const MARK_OPEN = '\uFDD0';
export const MARK_CLOSE = '\uFDD1';

export interface AnnotatedDocument {
  xml: string;
  /** Labels by marker index. */
  labels: NumberLabel[];
  equations: number;
  /** Page breaks marked in the text (docx-pages.ts); null when the part could not be scanned. */
  pageBreaks: PageBreakCounts | null;
  /** False when nothing was changed (the original part can be used as is). */
  changed: boolean;
}

const NS_WORD = ['http://schemas.openxmlformats.org/wordprocessingml/2006/main', 'http://purl.oclc.org/ooxml/wordprocessingml/main'];
const NS_MATH = ['http://schemas.openxmlformats.org/officeDocument/2006/math', 'http://purl.oclc.org/ooxml/officeDocument/math'];
const NS_MC = ['http://schemas.openxmlformats.org/markup-compatibility/2006'];

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function escapeXmlText(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** The prefix bound to one of these namespace URIs in the root element (null when none is). */
function prefixFor(xml: string, uris: string[]): string | null {
  const head = xml.slice(0, Math.min(xml.length, 64 * 1024));
  for (const uri of uris) {
    const m = new RegExp(`xmlns:([A-Za-z_][\\w.-]*)\\s*=\\s*["']${escapeRe(uri)}["']`).exec(head);
    if (m) return m[1];
  }
  return null;
}

function attrVal(tag: string, w: string): string | undefined {
  const m = new RegExp(`${w}:val\\s*=\\s*(?:"([^"]*)"|'([^']*)')`).exec(tag);
  return m ? (m[1] ?? m[2]) : undefined;
}

/** Matches open and close tags of one element name; pass it to elementEnd. */
function tagPattern(qname: string): RegExp {
  return new RegExp(`<(/?)${escapeRe(qname)}(?=[\\s>/])[^>]*?(/?)>`, 'g');
}

/** Index just past the element that starts at `open` (nesting of the same name is followed). */
function elementEnd(xml: string, open: number, tags: RegExp): number {
  const tagEnd = xml.indexOf('>', open);
  if (tagEnd < 0) return -1;
  if (xml[tagEnd - 1] === '/') return tagEnd + 1;
  tags.lastIndex = tagEnd + 1;
  let depth = 1;
  for (let m = tags.exec(xml); m; m = tags.exec(xml)) {
    if (m[1]) depth--;
    else if (!m[2]) depth++;
    if (depth === 0) return m.index + m[0].length;
  }
  return -1;
}

/** Whether the paragraph whose properties end at `from` has text (or an equation) before it ends. */
function hasContent(xml: string, from: number, w: string, math: string | null): boolean {
  const end = xml.indexOf(`</${w}:p>`, from);
  const body = xml.slice(from, end < 0 ? xml.length : end);
  return body.includes(`<${w}:t>`) || body.includes(`<${w}:t `) || (math !== null && body.includes(`<${math}:oMath`));
}

function markerRun(w: string, index: number): string {
  return `<${w}:r><${w}:t>${MARK_OPEN}${index}${MARK_CLOSE}</${w}:t></${w}:r>`;
}

/** [start, end) of every mc:Choice element, in document order. */
function choiceRanges(xml: string, mc: string | null): Array<[number, number]> {
  if (!mc || !xml.includes(`<${mc}:Choice`)) return [];
  const out: Array<[number, number]> = [];
  const re = new RegExp(`<${escapeRe(mc)}:Choice(?=[\\s>/])`, 'g');
  const tags = tagPattern(`${mc}:Choice`);
  for (let m = re.exec(xml); m; m = re.exec(xml)) {
    const end = elementEnd(xml, m.index, tags);
    if (end < 0) break;
    out.push([m.index, end]);
    re.lastIndex = end;
  }
  return out;
}

/**
 * Insert a marker run after the properties of every paragraph that Word numbers. Paragraphs in
 * mc:Choice are skipped: the same text box is repeated in mc:Fallback, which is the copy mammoth
 * shows, and counting both would number the list twice.
 */
function markNumberedParagraphs(
  xml: string,
  w: string,
  mc: string | null,
  math: string | null,
  defs: NumberingDefinitions,
  labels: NumberLabel[],
): string {
  const numberer = createNumberer(defs);
  const choices = choiceRanges(xml, mc);
  let nextChoice = 0;
  const pOpen = new RegExp(`<${escapeRe(w)}:p(?=[\\s>/])`, 'g');
  const pPrOpen = `<${w}:pPr`;
  const pPrTags = tagPattern(`${w}:pPr`);
  const pPrClose = `</${w}:pPr>`;
  const pPrChangeOpen = `<${w}:pPrChange`;
  const numPrOpen = `<${w}:numPr`;
  const pStyleOpen = `<${w}:pStyle`;
  const change = new RegExp(`<${escapeRe(w)}:pPrChange[\\s>][\\s\\S]*?</${escapeRe(w)}:pPrChange>`, 'g');
  const styleRe = new RegExp(`<${escapeRe(w)}:pStyle\\b[^>]*>`);
  const numPrRe = new RegExp(`<${escapeRe(w)}:numPr[\\s>][\\s\\S]*?</${escapeRe(w)}:numPr>`);
  const ilvlRe = new RegExp(`<${escapeRe(w)}:ilvl\\b[^>]*>`);
  const numIdRe = new RegExp(`<${escapeRe(w)}:numId\\b[^>]*>`);
  const pieces: string[] = [];
  let copied = 0;
  for (let m = pOpen.exec(xml); m; m = pOpen.exec(xml)) {
    while (nextChoice < choices.length && choices[nextChoice][1] <= m.index) nextChoice++;
    if (nextChoice < choices.length && choices[nextChoice][0] <= m.index) {
      pOpen.lastIndex = choices[nextChoice][1];
      continue;
    }
    const tagEnd = xml.indexOf('>', m.index);
    if (tagEnd < 0) break;
    if (xml[tagEnd - 1] === '/') continue;
    // Pretty-printed parts put whitespace before the properties.
    let after = tagEnd + 1;
    while (after < xml.length && (xml[after] === ' ' || xml[after] === '\n' || xml[after] === '\r' || xml[after] === '\t')) after++;
    if (!xml.startsWith(pPrOpen, after) || !/[\s>]/.test(xml[after + pPrOpen.length] ?? '')) continue;
    // Fast path: paragraph properties nest another pPr only inside a tracked change (pPrChange).
    const close = xml.indexOf(pPrClose, after);
    if (close < 0) break;
    let pPrEnd = close + pPrClose.length;
    let pPr = xml.slice(after, pPrEnd);
    if (pPr.includes(pPrChangeOpen)) {
      pPrEnd = elementEnd(xml, after, pPrTags);
      if (pPrEnd < 0) continue;
      pPr = xml.slice(after, pPrEnd).replace(change, '');
    }
    pOpen.lastIndex = pPrEnd;
    if (!pPr.includes(numPrOpen) && !pPr.includes(pStyleOpen)) continue;
    const styleTag = styleRe.exec(pPr)?.[0];
    const numPr = numPrRe.exec(pPr)?.[0];
    const ilvlTag = numPr ? ilvlRe.exec(numPr)?.[0] : undefined;
    const numIdTag = numPr ? numIdRe.exec(numPr)?.[0] : undefined;
    const ilvl = ilvlTag ? Number.parseInt(attrVal(ilvlTag, w) ?? '', 10) : Number.NaN;
    const label = numberer({
      styleId: styleTag ? attrVal(styleTag, w) : undefined,
      numId: numIdTag ? attrVal(numIdTag, w) : undefined,
      ilvl: Number.isFinite(ilvl) ? ilvl : undefined,
    });
    if (!label || label.bullet || !label.text) continue;
    // mammoth drops empty paragraphs; a marker would turn them into a bare number.
    if (!hasContent(xml, pPrEnd, w, math)) continue;
    pieces.push(xml.slice(copied, pPrEnd), markerRun(w, labels.length));
    labels.push(label);
    copied = pPrEnd;
  }
  if (copied === 0) return xml;
  pieces.push(xml.slice(copied));
  return pieces.join('');
}

/** Equations kept only in mc:Choice (with a picture as the fallback mammoth reads) move out. */
function unwrapMathAlternates(xml: string, mc: string, m: string): string {
  const block = new RegExp(
    `<${escapeRe(mc)}:AlternateContent[\\s>](?:(?!<${escapeRe(mc)}:AlternateContent[\\s>])[\\s\\S])*?</${escapeRe(mc)}:AlternateContent>`,
    'g',
  );
  const choice = new RegExp(`<${escapeRe(mc)}:Choice\\b[^>]*>([\\s\\S]*?)</${escapeRe(mc)}:Choice>`);
  return xml.replace(block, (whole) => {
    if (!whole.includes(`<${m}:oMath`)) return whole;
    return choice.exec(whole)?.[1] ?? whole;
  });
}

function replaceEquations(xml: string, w: string, m: string): { xml: string; count: number } {
  const open = new RegExp(`<${escapeRe(m)}:oMath(Para)?(?=[\\s>/])`, 'g');
  const tags = { oMath: tagPattern(`${m}:oMath`), oMathPara: tagPattern(`${m}:oMathPara`) };
  const pieces: string[] = [];
  let copied = 0;
  let count = 0;
  for (let hit = open.exec(xml); hit; hit = open.exec(xml)) {
    const end = elementEnd(xml, hit.index, hit[1] ? tags.oMathPara : tags.oMath);
    if (end < 0) break;
    let latex = '';
    try {
      latex = ommlToLatex(parseXml(xml.slice(hit.index, end), 'equation').children[0]);
    } catch (err) {
      if (isToolError(err) && err.code === 'PAYLOAD_TOO_LARGE') throw err;
      latex = '';
    }
    pieces.push(xml.slice(copied, hit.index));
    if (latex) {
      const fence = hit[1] ? '$$' : '$';
      pieces.push(`<${w}:r><${w}:t xml:space="preserve">${escapeXmlText(`${fence}${latex}${fence}`)}</${w}:t></${w}:r>`);
      count++;
    }
    copied = end;
    open.lastIndex = end;
  }
  if (copied === 0) return { xml, count: 0 };
  pieces.push(xml.slice(copied));
  return { xml: pieces.join(''), count };
}

/**
 * Annotate document.xml for mammoth: number markers (when numbering definitions are given), page
 * break markers and equations as text. Documents without a prefixed WordprocessingML namespace
 * are returned as is.
 */
export function annotateDocumentXml(xml: string, defs: NumberingDefinitions | null): AnnotatedDocument {
  const labels: NumberLabel[] = [];
  const w = prefixFor(xml, NS_WORD);
  if (!w) return { xml, labels, equations: 0, pageBreaks: null, changed: false };
  const mc = prefixFor(xml, NS_MC);
  const m = prefixFor(xml, NS_MATH);
  let out = xml;
  if (defs && defs.nums.size > 0) out = markNumberedParagraphs(out, w, mc, m, defs, labels);
  // After the numbering markers: a page marker must not come between a list item and its number.
  const pages = markPageBreaks(out, w, mc);
  out = pages.xml;
  let equations = 0;
  if (m && out.includes(`<${m}:oMath`)) {
    if (mc && out.includes(`${mc}:AlternateContent`)) out = unwrapMathAlternates(out, mc, m);
    const r = replaceEquations(out, w, m);
    out = r.xml;
    equations = r.count;
  }
  return { xml: out, labels, equations, pageBreaks: pages.counts, changed: out !== xml };
}

/**
 * numbering.xml with every labelled level (any level whose label is not a plain counter, bullets
 * excepted) turned into a bullet level, for mammoth's eyes only. Returns the input when nothing
 * changes or the part has no prefixed WordprocessingML namespace.
 */
export function bulletLabelledLevels(numberingXml: string, defs: NumberingDefinitions): string {
  const w = prefixFor(numberingXml, NS_WORD);
  if (!w) return numberingXml;
  const p = escapeRe(w);
  const abstractRe = new RegExp(`<${p}:abstractNum\\b[^>]*>[\\s\\S]*?</${p}:abstractNum>`, 'g');
  const idRe = new RegExp(`${p}:abstractNumId\\s*=\\s*(?:"([^"]*)"|'([^']*)')`);
  const lvlRe = new RegExp(`(<${p}:lvl\\b[^>]*?(?<!/)>)([\\s\\S]*?)(</${p}:lvl>)`, 'g');
  const ilvlRe = new RegExp(`${p}:ilvl\\s*=\\s*(?:"([^"]*)"|'([^']*)')`);
  const numFmtRe = new RegExp(`<${p}:numFmt\\b[^>]*?(/?)>`, 'g');
  const bullet = `<${w}:numFmt ${w}:val="bullet"/>`;
  return numberingXml.replace(abstractRe, (block) => {
    const idMatch = idRe.exec(block.slice(0, block.indexOf('>') + 1));
    const abstract = defs.abstracts.get(idMatch?.[1] ?? idMatch?.[2] ?? '');
    if (!abstract) return block;
    return block.replace(lvlRe, (whole, open: string, body: string, close: string) => {
      const ilvlMatch = ilvlRe.exec(open);
      const ilvl = Number.parseInt(ilvlMatch?.[1] ?? ilvlMatch?.[2] ?? '0', 10);
      const def = abstract.levels.get(Number.isFinite(ilvl) ? ilvl : 0);
      if (!def || def.numFmt === 'bullet' || isPlainCounter(def, ilvl)) return whole;
      // Every numFmt (an mc:AlternateContent may hold several) says bullet; a level without one gets one.
      const replaced = body.replace(numFmtRe, (_m, selfClosing: string) => (selfClosing ? bullet : `<${w}:numFmt ${w}:val="bullet">`));
      return replaced === body ? `${open}${bullet}${body}${close}` : `${open}${replaced}${close}`;
    });
  });
}
