/**
 * Reading order for one PDF page from positioned text items.
 *
 * 1. Items are moved into their own text frame (text rotated by 90/180/270 degrees is read in its
 *    own direction), duplicates from fake-bold double drawing are dropped.
 * 2. Items with overlapping vertical extent form lines; a line is cut into segments where the
 *    horizontal gap is wider than about one em (column gutters, table cells).
 * 3. A recursive XY-cut orders the segments: a column gutter (an empty vertical strip between two
 *    sides that both hold multi-word text) is cut first, so two-column pages read column by column;
 *    otherwise the region is cut into horizontal bands at blank strips, and consecutive bands that
 *    share a gutter are read together so columns stay whole across paragraph gaps.
 * 4. Each leaf is read line by line (top to bottom, left to right, right to left for RTL lines),
 *    words joined with a space where there is a visible gap (or where the PDF drew a space),
 *    words hyphenated across lines marked for pdf-hyphens.ts to join or keep.
 *
 * Before the XY-cut, tables are found (pdf-tables.ts): ruled grids from the page's rules, then
 * borderless ones from aligned segments. Each table takes the place of its text as one block,
 * rendered as a pipe table, so it is read where it stands.
 */
import { toPipeTable } from '../shared/markdown-table.ts';
import { ASCENT, DESCENT, median, toSegment, type Box, type Rule, type Seg } from './pdf-geometry.ts';
import { HYPHEN_BREAK, resolveHyphenBreaks } from './pdf-hyphens.ts';
import { findAlignedTables, findRuledTables, type PdfTable } from './pdf-tables.ts';

export interface PositionedTextItem {
  str: string;
  /** Item matrix in device space (viewport applied: origin top-left, y down, page rotation applied). */
  transform: number[];
  /** Advance width along the text direction, device units. */
  width: number;
  /** Font height if the matrix carries none. */
  height: number;
  dir?: string;
}

/** Horizontal gap (in ems) that splits a line into separate segments. */
const SEGMENT_GAP_EM = 1.0;
/** Minimum width (in ems) of a column gutter. */
const GUTTER_EM = 0.9;
/** Minimum blank vertical strip (in ems) that separates horizontal bands. */
const BAND_GAP_EM = 0.45;

export interface PageLayout {
  /** The page's text; tables are pipe tables in it. Hyphen breaks are still marked (HYPHEN_BREAK). */
  text: string;
  /** The page's tables in reading order. */
  tables: PdfTable[];
  /** Upright lines with a gap of half an em or more between items: below 2, no page rules are worth fetching. */
  gappedLines: number;
}

/** Reading order of one page: its text (hyphen breaks decided from this page alone). */
export function layoutPageText(items: PositionedTextItem[], rules: Rule[] = []): string {
  return resolveHyphenBreaks([layoutPage(items, rules).text])[0];
}

/**
 * Text and tables of one page. `rules` are the page's ruling lines in device space; they apply to
 * upright text. Hyphen breaks stay marked so a caller can decide them with the whole document.
 */
export function layoutPage(items: PositionedTextItem[], rules: Rule[] = []): PageLayout {
  const buckets = new Map<number, Box[]>();
  let spaceBefore = false;
  for (const it of items) {
    const str = sanitize(it.str);
    if (!str.trim()) {
      // A drawn space separates words even when the fonts leave almost no gap (Korean PDFs).
      if (str) spaceBefore = true;
      continue;
    }
    const m = it.transform;
    if (!m || m.length < 6 || !m.every(Number.isFinite)) continue;
    const angle = (((Math.round((Math.atan2(m[1], m[0]) * 180) / Math.PI / 90) * 90) % 360) + 360) % 360;
    const rad = (angle * Math.PI) / 180;
    const cos = Math.round(Math.cos(rad));
    const sin = Math.round(Math.sin(rad));
    // Rotate the origin into the text's frame so that text always runs along +x.
    const x = m[4] * cos + m[5] * sin;
    const y = -m[4] * sin + m[5] * cos;
    const h = Math.hypot(m[2], m[3]) || it.height || Math.hypot(m[0], m[1]) || 1;
    const w = Math.max(0, it.width || 0);
    const box: Box = { str, x0: x, x1: x + w, base: y, h, rtl: it.dir === 'rtl', line: -1, ...(spaceBefore ? { spaceBefore } : {}) };
    spaceBefore = false;
    let list = buckets.get(angle);
    if (!list) buckets.set(angle, (list = []));
    list.push(box);
  }
  // The dominant direction first; sideways margin notes (e.g. arXiv stamps) after.
  const ordered = [...buckets.entries()].sort((a, b) => b[1].length - a[1].length || a[0] - b[0]);
  const tables: PdfTable[] = [];
  const stats = { gappedLines: 0 };
  const text = ordered
    .map(([angle, boxes]) => layoutFrame(dedupe(boxes), angle === 0 ? rules : [], tables, angle === 0 ? stats : undefined))
    .filter(Boolean)
    .join('\n\n');
  return { text, tables, gappedLines: stats.gappedLines };
}

/** Any character sanitize changes (both of its classes): most text items have none. */
const UNSANITARY = /[\u0000-\u001f\u007f\u00ad\u200b\ufeff\ue000]/;

function sanitize(s: string): string {
  if (!UNSANITARY.test(s)) return s;
  // Control characters and soft hyphens carry no text.
  // U+E000 is this module's hyphen-break mark and must not come from the page.
  return s.replace(/[\u0000-\u0008\u000b-\u001f\u007f\u00ad\u200b\ufeff\ue000]/g, '').replace(/[\t\n\r]+/g, ' ');
}

function dedupe(boxes: Box[]): Box[] {
  const seen = new Set<string>();
  const out: Box[] = [];
  for (const b of boxes) {
    const q = Math.max(1, b.h * 0.3);
    const key = `${b.str}|${Math.round(b.x0 / q)}|${Math.round(b.base / q)}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(b);
  }
  return out;
}

/** A table standing in the reading order as one segment (no boxes) whose text is the pipe table. */
const tableSegs = new WeakMap<Seg, PdfTable>();

function layoutFrame(boxes: Box[], rules: Rule[], tablesOut: PdfTable[], stats?: { gappedLines: number }): string {
  if (!boxes.length) return '';
  const medH = median(boxes.map((b) => b.h)) || 1;
  let lines = clusterLines(boxes);
  if (stats) stats.gappedLines += lines.filter((l) => hasGap(l, 0.5)).length;
  const ruled = findRuledTables(lines, rules);
  if (ruled.used.size) lines = lines.map((l) => l.filter((b) => !ruled.used.has(b))).filter((l) => l.length);
  const segLines = lines.map((line) => splitSegments(line));
  const aligned = findAlignedTables(segLines, medH);
  const segs = aligned.used.size ? segLines.flat().filter((s) => !aligned.used.has(s)) : segLines.flat();
  let nextLine = lines.length + 1;
  for (const t of [...ruled.tables, ...aligned.tables]) segs.push(tableSegment(t, nextLine++));
  const blocks: Seg[][] = [];
  xyCut(segs, medH, blocks);
  let out = '';
  let prev: { top: number; bottom: number; table: boolean } | null = null;
  for (const block of blocks) {
    const text = readBlock(block);
    if (!text) continue;
    let table = false;
    for (const s of [...block].sort((a, b) => a.top - b.top)) {
      const t = tableSegs.get(s);
      if (t) {
        tablesOut.push(t);
        table = true;
      }
    }
    const top = Math.min(...block.map((s) => s.top));
    const bottom = Math.max(...block.map((s) => s.bottom));
    if (prev) out += top > prev.bottom + 0.7 * medH || top < prev.top || table || prev.table ? '\n\n' : '\n';
    out += text;
    prev = { top, bottom, table };
  }
  return out;
}

function tableSegment(t: PdfTable, line: number): Seg {
  const seg: Seg = {
    boxes: [],
    x0: t.x0,
    x1: t.x1,
    top: t.top,
    bottom: t.bottom,
    base: t.top,
    h: t.bottom - t.top,
    line,
    text: toPipeTable(t.rows),
    words: t.rows.length * (t.rows[0]?.length ?? 1),
    rtl: false,
  };
  tableSegs.set(seg, t);
  return seg;
}

function clusterLines(boxes: Box[]): Box[][] {
  const sorted = [...boxes].sort((a, b) => a.base - b.base || a.x0 - b.x0);
  const lines: Array<{ base: number; h: number; boxes: Box[] }> = [];
  for (const b of sorted) {
    let target: (typeof lines)[number] | undefined;
    for (let i = lines.length - 1; i >= 0; i--) {
      const l = lines[i];
      if (l.base < b.base - 3 * Math.max(l.h, b.h)) break;
      const top = Math.max(l.base - ASCENT * l.h, b.base - ASCENT * b.h);
      const bottom = Math.min(l.base + DESCENT * l.h, b.base + DESCENT * b.h);
      if (bottom - top >= 0.5 * Math.min(l.h, b.h)) {
        target = l;
        break;
      }
    }
    if (target) {
      target.boxes.push(b);
      // The line's reference is its tallest item, so sub/superscripts do not drag it.
      if (b.h > target.h) {
        target.h = b.h;
        target.base = b.base;
      }
    } else {
      lines.push({ base: b.base, h: b.h, boxes: [b] });
    }
  }
  lines.forEach((l, i) => l.boxes.forEach((b) => (b.line = i)));
  return lines.map((l) => l.boxes);
}

function hasGap(line: Box[], em: number): boolean {
  if (line.length < 2) return false;
  const boxes = [...line].sort((a, b) => a.x0 - b.x0);
  let reach = boxes[0].x1;
  for (let i = 1; i < boxes.length; i++) {
    if (boxes[i].x0 - reach > em * boxes[i].h) return true;
    reach = Math.max(reach, boxes[i].x1);
  }
  return false;
}

function splitSegments(line: Box[]): Seg[] {
  const boxes = [...line].sort((a, b) => a.x0 - b.x0);
  const groups: Box[][] = [];
  let cur: Box[] = [];
  let reach = -Infinity;
  for (const b of boxes) {
    if (cur.length && b.x0 - reach > SEGMENT_GAP_EM * Math.max(b.h, cur[cur.length - 1].h)) {
      groups.push(cur);
      cur = [];
    }
    reach = cur.length ? Math.max(reach, b.x1) : b.x1;
    cur.push(b);
  }
  if (cur.length) groups.push(cur);
  return groups.map(toSegment);
}

function xyCut(segs: Seg[], medH: number, out: Seg[][]): void {
  if (segs.length <= 1) {
    if (segs.length) out.push(segs);
    return;
  }
  const cols = findColumnSplit(segs, medH);
  if (cols) {
    xyCut(cols[0], medH, out);
    xyCut(cols[1], medH, out);
    return;
  }
  const bands = splitBands(segs, BAND_GAP_EM * medH);
  if (bands.length === 1) {
    out.push(segs);
    return;
  }
  const groups: Seg[][][] = [];
  for (const band of bands) {
    const last = groups[groups.length - 1];
    if (last && findColumnSplit([...last.flat(), ...band], medH)) last.push(band);
    else groups.push([band]);
  }
  for (const g of groups) {
    const flat = g.flat();
    if (flat.length === segs.length) out.push(flat);
    else xyCut(flat, medH, out);
  }
}

function splitBands(segs: Seg[], minGap: number): Seg[][] {
  const sorted = [...segs].sort((a, b) => a.top - b.top || a.x0 - b.x0);
  const bands: Seg[][] = [];
  let cur: Seg[] = [];
  let bottom = -Infinity;
  for (const s of sorted) {
    if (cur.length && s.top - bottom >= minGap) {
      bands.push(cur);
      cur = [];
    }
    cur.push(s);
    bottom = cur.length === 1 ? s.bottom : Math.max(bottom, s.bottom);
  }
  if (cur.length) bands.push(cur);
  return bands;
}

/** A vertical gutter with multi-word text on both sides: read left side, then right side. */
function findColumnSplit(segs: Seg[], medH: number): [Seg[], Seg[]] | null {
  if (segs.length < 4) return null;
  const sorted = [...segs].sort((a, b) => a.x0 - b.x0);
  const candidates: Array<{ gap: number; at: number }> = [];
  let reach = sorted[0].x1;
  for (let i = 1; i < sorted.length; i++) {
    const s = sorted[i];
    if (s.x0 - reach >= GUTTER_EM * medH) candidates.push({ gap: s.x0 - reach, at: (s.x0 + reach) / 2 });
    reach = Math.max(reach, s.x1);
  }
  candidates.sort((a, b) => b.gap - a.gap);
  for (const c of candidates) {
    const left = segs.filter((s) => s.x1 <= c.at);
    const right = segs.filter((s) => s.x0 >= c.at);
    if (textColumn(left, medH) && textColumn(right, medH)) return [left, right];
  }
  return null;
}

function textColumn(segs: Seg[], medH: number): boolean {
  if (segs.length < 2) return false;
  if (new Set(segs.map((s) => s.line)).size < 2) return false;
  const top = Math.min(...segs.map((s) => s.top));
  const bottom = Math.max(...segs.map((s) => s.bottom));
  if (bottom - top < 2 * medH) return false;
  return median(segs.map((s) => s.words)) >= 3;
}

// A line ending in a lowercase letter and a hyphen, the next starting lowercase: a word broken at
// the line end (module constants, built once rather than per line).
const ENDS_LOWER_HYPHEN = /\p{Ll}-$/u;
const STARTS_LOWER = /^\p{Ll}/u;

function readBlock(block: Seg[]): string {
  const byLine = new Map<number, Seg[]>();
  for (const s of block) {
    let l = byLine.get(s.line);
    if (!l) byLine.set(s.line, (l = []));
    l.push(s);
  }
  const lines = [...byLine.values()]
    .map((segs) => {
      const rtlCount = segs.filter((s) => s.rtl).length;
      const rtl = rtlCount > 0 && rtlCount * 2 >= segs.length;
      const ordered = [...segs].sort((a, b) => (rtl ? b.x1 - a.x1 : a.x0 - b.x0));
      const table = segs.some((s) => tableSegs.has(s));
      return { base: Math.min(...segs.map((s) => s.base)), text: ordered.map((s) => s.text).filter(Boolean).join(' '), table };
    })
    .filter((l) => l.text)
    .sort((a, b) => a.base - b.base);
  let text = '';
  let prevTable = false;
  for (const l of lines) {
    if (!text) text = l.text;
    // A pipe table needs blank lines around it to stay a table in Markdown.
    else if (l.table || prevTable) text += '\n\n' + l.text;
    else if (ENDS_LOWER_HYPHEN.test(text) && STARTS_LOWER.test(l.text)) text += HYPHEN_BREAK + l.text;
    else text += '\n' + l.text;
    prevTable = l.table;
  }
  return text;
}
