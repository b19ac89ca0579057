/**
 * Page numbers for DOCX content. A Word file has no pages of its own; what it does record is where
 * pages broke: explicit breaks (w:br w:type="page", pageBreakBefore, section breaks that start a
 * new page) and, in files Word saved, w:lastRenderedPageBreak wherever its layout broke a page.
 *
 * document.xml gets an invisible marker (a private noncharacter) at each break before mammoth
 * reads it; after the Markdown walk the markers are taken out again and their offsets become the
 * page boundaries. Pages are only reported when they can be trusted: Word's own rendered breaks
 * are present, or the explicit breaks account for every page app.xml counts (a one-page file with
 * no break included). Otherwise (generated files, or explicit breaks only in an 872-page
 * handbook) the page of a passage is unknown and chunks say null rather than a wrong number.
 */
import type { PageSpan } from '../shared/types.ts';

export const PAGE_MARK = '\uFDD2';

export interface PageBreakCounts {
  explicit: number;
  rendered: number;
}

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** [start, end) of mc:Choice elements: mammoth shows mc:Fallback, so breaks in a Choice do not count. */
function choiceRanges(xml: string, mc: string | null): Array<[number, number]> {
  if (!mc || !xml.includes(`<${mc}:Choice`)) return [];
  const out: Array<[number, number]> = [];
  const open = `<${mc}:Choice`;
  const close = `</${mc}:Choice>`;
  for (let at = xml.indexOf(open); at >= 0; at = xml.indexOf(open, at + 1)) {
    const end = xml.indexOf(close, at);
    if (end < 0) break;
    out.push([at, end + close.length]);
    at = end;
  }
  return out;
}

/**
 * document.xml with a marker at every page break, and how many of each kind there are. `w` and
 * `mc` are the prefixes bound to WordprocessingML and markup compatibility in the part.
 */
export function markPageBreaks(xml: string, w: string, mc: string | null): { xml: string; counts: PageBreakCounts } {
  const counts: PageBreakCounts = { explicit: 0, rendered: 0 };
  const p = escapeRe(w);
  if (!xml.includes(`${w}:br`) && !xml.includes(`${w}:lastRenderedPageBreak`) && !xml.includes(`${w}:pageBreakBefore`) && !xml.includes(`${w}:sectPr`)) {
    return { xml, counts };
  }
  const markText = `<${w}:t>${PAGE_MARK}</${w}:t>`;
  const markRun = `<${w}:r>${markText}</${w}:r>`;
  const choices = choiceRanges(xml, mc);
  let nextChoice = 0;
  const inChoice = (at: number): boolean => {
    while (nextChoice < choices.length && choices[nextChoice][1] <= at) nextChoice++;
    return nextChoice < choices.length && choices[nextChoice][0] <= at;
  };
  const firstText = Math.min(...[`<${w}:t>`, `<${w}:t `].map((s) => xml.indexOf(s)).map((i) => (i < 0 ? xml.length : i)));
  const re = new RegExp(
    `<${p}:br\\b[^>]*?/>|<${p}:lastRenderedPageBreak\\s*/>|<${p}:pPr(?:\\s[^>]*?)?(?<!/)>([\\s\\S]*?)</${p}:pPr>`,
    'g',
  );
  const typePage = new RegExp(`${p}:type\\s*=\\s*["']page["']`);
  const pageBreakBefore = new RegExp(`<${p}:pageBreakBefore\\b([^>]*)/?>`);
  const offValue = new RegExp(`${p}:val\\s*=\\s*["'](?:0|false|off)["']`);
  const continuous = new RegExp(`<${p}:type\\b[^>]*${p}:val\\s*=\\s*["']continuous["']`);
  const numberRun = `<${w}:r><${w}:t>\uFDD0`;
  const edits: Array<{ at: number; insert: string }> = [];
  for (let m = re.exec(xml); m; m = re.exec(xml)) {
    if (inChoice(m.index)) continue;
    const tag = m[0];
    const end = m.index + tag.length;
    if (m[1] === undefined) {
      if (tag.includes('lastRenderedPageBreak')) counts.rendered++;
      else if (typePage.test(tag)) counts.explicit++;
      else continue;
      edits.push({ at: end, insert: markText });
      continue;
    }
    const props = m[1];
    // Old properties of a tracked change nest a pPr: the first </pPr> is not this one's end.
    if (props.includes(`<${w}:pPrChange`)) continue;
    const before = pageBreakBefore.exec(props);
    // Word starts no new page for the first paragraph of a document.
    if (before && !offValue.test(before[1]) && m.index > firstText) {
      counts.explicit++;
      // After the numbering marker, which must open the paragraph (docx-number-labels.ts).
      let at = end;
      if (xml.startsWith(numberRun, at)) {
        const runEnd = xml.indexOf(`</${w}:r>`, at);
        if (runEnd > 0) at = runEnd + `</${w}:r>`.length;
      }
      edits.push({ at, insert: markRun });
    }
    if (props.includes(`<${w}:sectPr`) && !continuous.test(props)) {
      // A section break in this paragraph: the next section starts on a new page.
      const close = xml.indexOf(`</${w}:p>`, end);
      if (close > 0) {
        counts.explicit++;
        edits.push({ at: close, insert: markRun });
      }
    }
  }
  if (edits.length === 0) return { xml, counts };
  edits.sort((a, b) => a.at - b.at);
  const pieces: string[] = [];
  let copied = 0;
  for (const e of edits) {
    pieces.push(xml.slice(copied, e.at), e.insert);
    copied = e.at;
  }
  pieces.push(xml.slice(copied));
  return { xml: pieces.join(''), counts };
}

/** Characters that may precede text on a Markdown line without being text (heading, list, quote, table). */
const LINE_PREFIX = /^[\s#>*+\-|\d.)]*$/;

/**
 * Takes the page markers out of the Markdown: the text without them, and the offsets where pages
 * start (after the first). A block that held only markers (a paragraph with just a break) goes
 * with them; breaks with nothing but blank or prefix characters between them count once (Word
 * records a rendered break right after an explicit one); a break at the start of a line moves to
 * the line's start, so the heading or list item it opens is on the new page.
 */
export function takePageMarks(markdown: string): { text: string; breaks: number[] } {
  if (!markdown.includes(PAGE_MARK)) return { text: markdown, breaks: [] };
  let out = '';
  const breaks: number[] = [];
  let copied = 0;
  for (let at = markdown.indexOf(PAGE_MARK); at >= 0; at = markdown.indexOf(PAGE_MARK, copied)) {
    out += markdown.slice(copied, at);
    copied = at + PAGE_MARK.length;
    if ((out === '' || out.endsWith('\n\n')) && (markdown.startsWith('\n\n', copied) || copied === markdown.length)) copied += 2;
    const lineStart = out.lastIndexOf('\n') + 1;
    const b = LINE_PREFIX.test(out.slice(lineStart)) ? lineStart : out.length;
    const last = breaks[breaks.length - 1];
    if (last !== undefined && out.slice(last, b).trim() === '') continue;
    breaks.push(b);
  }
  out += markdown.slice(Math.min(copied, markdown.length));
  // Removing a trailing marker block can leave the blank line that separated it.
  const text = out.replace(/\s+$/, '');
  return { text, breaks: breaks.map((b) => Math.min(b, text.length)).filter((b, i, all) => i === 0 || b !== all[i - 1]) };
}

/** Page spans from break offsets: page 1 up to the first break, and so on. */
export function pageSpans(length: number, breaks: number[]): PageSpan[] {
  const starts = [0, ...breaks.filter((b) => b > 0 && b < length)];
  // A break at offset 0 (a page break before any text) leaves page 1 blank.
  const first = breaks.length > 0 && breaks[0] === 0 ? 2 : 1;
  return starts.map((start, i) => ({
    number: first + i,
    unit: 'page' as const,
    start,
    end: i + 1 < starts.length ? starts[i + 1] : length,
  }));
}

/**
 * Whether the breaks give true page numbers: Word's own layout was recorded (rendered breaks), or
 * the explicit breaks make exactly the page count app.xml gives.
 */
export function pagesKnown(counts: PageBreakCounts | null, pageCount: number | undefined, pagesFound: number): boolean {
  if (counts && counts.rendered > 0) return true;
  return typeof pageCount === 'number' && pageCount >= 1 && pageCount === pagesFound;
}
