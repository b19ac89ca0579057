/**
 * Tables on a PDF page from text positions (and ruling lines where the author drew them).
 *
 * Ruled tables: horizontal and vertical rules that cross each other form a grid (at least 3 x 3
 * lines, i.e. 2 x 2 cells); every text box falls into the cell that holds its centre, so cells
 * that wrap onto several lines stay one cell.
 *
 * Borderless tables: runs of consecutive lines made of short segments (no prose) whose segments
 * line up in columns. Columns are the x-ranges between "whitespace rivers", vertical strips that
 * (almost) no segment of the run covers. A single-segment line that starts outside every column or
 * straddles several (a centred title between two tables) splits the run, and each part is tried
 * again with its own columns. Lines whose vertical extents overlap are one row (a cell centred
 * beside a two-line cell). In the first row a header centred over columns that lower header lines
 * fill is spread over them, giving two header rows (a two-level header), as docling renders them.
 *
 * A candidate becomes a table only with >= 2 columns, >= 2 rows with several cells, segments that
 * fit single columns and at most a few words per cell, so prose and two-column pages stay text.
 */
import { median, toSegment, type Box, type Rule, type Seg } from './pdf-geometry.ts';

export interface PdfTable {
  /** Every row, header rows first, each as wide as the table. */
  rows: string[][];
  /** How many of rows are header rows (1, or 2 for a two-level header). */
  headerRows: number;
  /** One label per column (the header rows' texts joined where they differ). */
  headers: string[];
  detection: 'ruled' | 'aligned';
  x0: number;
  x1: number;
  top: number;
  bottom: number;
}

/** A cell with more words than this is prose, not a table cell. */
const MAX_CELL_WORDS = 10;
/** Median words per cell above which a run of lines is prose in columns, not a table. */
const MAX_MEDIAN_CELL_WORDS = 4;
/** A cell with this many words reads like a sentence... */
const LONG_CELL_WORDS = 6;
/** ...and more than this share of such cells makes a run prose beside labels, not a table. */
const MAX_LONG_CELL_SHARE = 0.4;
/** A lone line inside a table (a section label such as "Supplies") has at most this many words. */
const MAX_SINGLE_LINE_WORDS = 5;
/** Vertical gap (in line heights) between lines of one table at most. */
const MAX_ROW_GAP_EM = 2.2;
/** Narrowest whitespace river (in ems) between two columns. */
const MIN_COLUMN_GAP_EM = 0.5;
/** Share of segments of multi-cell lines that must sit in exactly one column. */
const MIN_FITTING_SHARE = 0.75;
/** Rules a ruled table needs at least (a grid of 3 x 3 lines). */
export const MIN_TABLE_RULES = 6;
/** Rules closer than this (device units) are the same line; crossings within it connect. */
const RULE_TOLERANCE = 2;

interface Line {
  segs: Seg[];
  top: number;
  bottom: number;
  base: number;
}

interface Column {
  x0: number;
  x1: number;
}

// ---------------------------------------------------------------------------------------------
// Borderless tables

/** Tables among the lines of a frame (each line's segments left to right); `used` holds their segments. */
export function findAlignedTables(lineSegs: Seg[][], medH: number): { tables: PdfTable[]; used: Set<Seg> } {
  const lines: Line[] = lineSegs
    .filter((l) => l.length)
    .map((segs) => {
      // Every line of every page comes here: bounds in one pass, no spread arrays.
      let top = Infinity;
      let bottom = -Infinity;
      for (const s of segs) {
        if (s.top < top) top = s.top;
        if (s.bottom > bottom) bottom = s.bottom;
      }
      const sorted = segs.length === 1 ? [segs[0]] : [...segs].sort((a, b) => a.x0 - b.x0);
      return { segs: sorted, top, bottom, base: segs.length === 1 ? segs[0].base : median(segs.map((s) => s.base)) };
    })
    .sort((a, b) => a.base - b.base);
  const tables: PdfTable[] = [];
  const used = new Set<Seg>();
  let i = 0;
  while (i < lines.length) {
    if (!candidateLine(lines[i], medH)) {
      i++;
      continue;
    }
    let j = i + 1;
    while (j < lines.length && candidateLine(lines[j], medH) && lines[j].top - lines[j - 1].bottom <= MAX_ROW_GAP_EM * medH) j++;
    tryRun(lines.slice(i, j), medH, tables, used);
    i = j;
  }
  return { tables, used };
}

function candidateLine(line: Line, medH: number): boolean {
  if (line.segs.some((s) => s.rtl)) return false;
  // Display type (a cover page's title beside its date) is layout, not a table row.
  if (line.segs.some((s) => s.h > 1.4 * medH || s.h < 0.5 * medH)) return false;
  if (line.segs.length === 1) return line.segs[0].words <= MAX_SINGLE_LINE_WORDS;
  return line.segs.every((s) => s.words <= MAX_CELL_WORDS);
}

/** Segments cut out of a wider one at a river: the segment of the page text they came from. */
const sourceOf = new WeakMap<Seg, Seg>();

function tryRun(run: Line[], medH: number, tables: PdfTable[], used: Set<Seg>): void {
  let multi = run.filter((l) => l.segs.length >= 2);
  if (multi.length < 2) return;
  const cols = findColumns(multi, medH);
  if (cols.length < 2) return;
  // Cells closer than the segment gap were read as one segment: cut them where a river runs.
  run = run.map((l) => splitAtRivers(l, cols, medH));
  multi = run.filter((l) => l.segs.length >= 2);
  // A lone segment that starts outside every column, straddles columns or starts where no cell
  // of the run starts (a centred title between two tables) ends one table.
  const starts = segsOf(multi).map((s) => s.x0);
  // Column starts are shared by several cells; one stray cell there is a coincidence.
  const aligned = (s: Seg) => starts.filter((x) => Math.abs(x - s.x0) <= 0.5 * medH).length >= 2;
  // A line that overlaps its neighbour vertically belongs to its row (a label centred beside two lines).
  const inRow = (k: number) =>
    (k > 0 && run[k - 1].bottom - run[k].top > 0.1 * medH) || (k + 1 < run.length && run[k].bottom - run[k + 1].top > 0.1 * medH);
  const breaks = run.map(
    (l, k) =>
      l.segs.length === 1 &&
      !inRow(k) &&
      (startColumn(l.segs[0], cols, medH) < 0 || spannedColumns(l.segs[0], cols).length > 1 || !aligned(l.segs[0])),
  );
  if (breaks.some(Boolean)) {
    let start = 0;
    for (let k = 0; k <= run.length; k++) {
      if (k === run.length || breaks[k]) {
        if (k > start && (start > 0 || k < run.length)) tryRun(run.slice(start, k), medH, tables, used);
        start = k + 1;
      }
    }
    return;
  }
  const table = buildAligned(run, cols, medH);
  if (!table) return;
  tables.push(table);
  for (const l of run) for (const s of l.segs) used.add(sourceOf.get(s) ?? s);
}

function splitAtRivers(line: Line, cols: Column[], medH: number): Line {
  if (!line.segs.some((s) => s.boxes.length > 1 && spannedColumns(s, cols).length > 1)) return line;
  const inColumn = (x: number) => cols.some((c) => x > c.x0 && x < c.x1);
  const segs: Seg[] = [];
  for (const s of line.segs) {
    if (s.boxes.length < 2 || spannedColumns(s, cols).length < 2) {
      segs.push(s);
      continue;
    }
    const boxes = [...s.boxes].sort((a, b) => a.x0 - b.x0);
    let cur: Box[] = [boxes[0]];
    let reach = boxes[0].x1;
    const parts: Box[][] = [];
    for (const b of boxes.slice(1)) {
      if (b.x0 - reach >= 0.25 * medH && !inColumn((b.x0 + reach) / 2)) {
        parts.push(cur);
        cur = [];
      }
      cur.push(b);
      reach = Math.max(reach, b.x1);
    }
    parts.push(cur);
    if (parts.length === 1) {
      segs.push(s);
      continue;
    }
    for (const p of parts) {
      const piece = toSegment(p);
      sourceOf.set(piece, sourceOf.get(s) ?? s);
      segs.push(piece);
    }
  }
  return { ...line, segs };
}

/** Columns between whitespace rivers of the multi-segment lines. */
function findColumns(multi: Line[], medH: number): Column[] {
  const segs = segsOf(multi);
  // A larger table may have one cell (a centred header) that bridges a river.
  const tolerance = multi.length >= 6 ? 1 : 0;
  const events: Array<[number, number]> = [];
  for (const s of segs) {
    events.push([s.x0, 1], [s.x1, -1]);
  }
  events.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const cols: Column[] = [];
  let depth = 0;
  let colStart: number | null = null;
  let lastCovered = -Infinity;
  for (const [x, d] of events) {
    const before = depth;
    depth += d;
    if (before <= tolerance && depth > tolerance) {
      if (colStart === null) colStart = x;
      else if (x - lastCovered >= MIN_COLUMN_GAP_EM * medH) {
        cols.push({ x0: colStart, x1: lastCovered });
        colStart = x;
      }
    } else if (before > tolerance && depth <= tolerance) lastCovered = x;
  }
  if (colStart !== null && lastCovered > colStart) cols.push({ x0: colStart, x1: lastCovered });
  return cols;
}

function overlap(s: { x0: number; x1: number }, c: Column): number {
  return Math.min(s.x1, c.x1) - Math.max(s.x0, c.x0);
}

/** Columns a segment really covers (more than a sliver). */
function spannedColumns(s: Seg, cols: Column[]): number[] {
  const out: number[] = [];
  for (let k = 0; k < cols.length; k++) {
    const c = cols[k];
    if (overlap(s, c) > Math.min(2, 0.25 * (c.x1 - c.x0))) out.push(k);
  }
  return out;
}

function startColumn(s: Seg, cols: Column[], medH: number): number {
  return cols.findIndex((c) => s.x0 >= c.x0 - 0.5 * medH && s.x0 <= c.x1);
}

/** The column a segment belongs to: the one it overlaps most, else the nearest. */
function primaryColumn(s: Seg, cols: Column[]): number {
  let best = 0;
  let bestScore = -Infinity;
  for (let k = 0; k < cols.length; k++) {
    const score = overlap(s, cols[k]);
    if (score > bestScore) {
      bestScore = score;
      best = k;
    }
  }
  return best;
}

/** Whether the segments of a row group fall in at least two columns (by primaryColumn). */
function spansColumns(group: Line[], cols: Column[]): boolean {
  let first = -1;
  for (const l of group) {
    for (const s of l.segs) {
      const k = primaryColumn(s, cols);
      if (first < 0) first = k;
      else if (k !== first) return true;
    }
  }
  return false;
}

/** The segments of `lines` in order (flatMap is several times slower in V8; this runs for every candidate run of lines). */
function segsOf(lines: Line[]): Seg[] {
  const out: Seg[] = [];
  for (const l of lines) for (const s of l.segs) out.push(s);
  return out;
}

function buildAligned(run: Line[], cols: Column[], medH: number): PdfTable | null {
  const multi = run.filter((l) => l.segs.length >= 2);
  const segs = segsOf(run);
  if (median(segs.map((s) => s.words)) > MAX_MEDIAN_CELL_WORDS) return null;
  // Text columns beside labels (a back cover, a sidebar) have many sentence-long pieces.
  if (segs.filter((s) => s.words >= LONG_CELL_WORDS).length > MAX_LONG_CELL_SHARE * segs.length) return null;
  const multiSegs = segsOf(multi);
  const fitting = multiSegs.filter((s) => spannedColumns(s, cols).length <= 1).length;
  if (fitting < MIN_FITTING_SHARE * multiSegs.length) return null;
  // Rows: lines whose vertical extents overlap belong together.
  const groups: Line[][] = [];
  for (const l of run) {
    const last = groups[groups.length - 1];
    const lastBottom = last ? Math.max(...last.map((x) => x.bottom)) : -Infinity;
    if (last && lastBottom - l.top > 0.1 * medH) last.push(l);
    else groups.push([l]);
  }
  const rowsWithCells = groups.filter((g) => spansColumns(g, cols));
  if (rowsWithCells.length < 2) return null;

  const width = cols.length;
  const cellsOf = (g: Line[], skip?: Set<Seg>): string[] => {
    const parts: Seg[][] = Array.from({ length: width }, () => []);
    for (const l of g) for (const s of l.segs) if (!skip?.has(s)) parts[primaryColumn(s, cols)].push(s);
    return parts.map((p) =>
      p
        .sort((a, b) => a.top - b.top || a.x0 - b.x0)
        .map((s) => s.text)
        .join(' ')
        .trim(),
    );
  };
  const rows = groups.map((g) => cellsOf(g));
  let headerRows = 1;
  const spans = headerSpans(groups[0], cols);
  if (spans.size) {
    // Two-level header: the spanning labels over their columns, then the labels below them.
    const top = rows[0].slice();
    const below = cellsOf(groups[0], new Set(spans.keys()));
    for (const [s, range] of spans) for (let k = range[0]; k <= range[1]; k++) top[k] = s.text;
    rows.splice(0, 1, top, below.map((v, k) => v || top[k]));
    headerRows = 2;
  } else {
    // A single header label straddling columns (a group title) is repeated over them.
    for (const l of groups[0]) {
      for (const s of l.segs) {
        const spanned = spannedColumns(s, cols);
        if (spanned.length > 1 && spanned.every((k) => rows[0][k] === '' || rows[0][k] === s.text)) for (const k of spanned) rows[0][k] = s.text;
      }
    }
  }
  const headers = rows[0].map((h, k) => (headerRows === 2 && rows[1][k] !== h ? `${h} ${rows[1][k]}`.trim() : h));
  return {
    rows,
    headerRows,
    headers,
    detection: 'aligned',
    x0: Math.min(...segs.map((s) => s.x0)),
    x1: Math.max(...segs.map((s) => s.x1)),
    top: Math.min(...run.map((l) => l.top)),
    bottom: Math.max(...run.map((l) => l.bottom)),
  };
}

/**
 * Header cells of the first row's top line that are centred over neighbouring columns which are
 * empty on that line but filled by the row's lower lines: each spreads over those columns.
 */
function headerSpans(group: Line[], cols: Column[]): Map<Seg, [number, number]> {
  const spans = new Map<Seg, [number, number]>();
  if (group.length < 2) return spans;
  const topLine = group.reduce((a, b) => (b.top < a.top ? b : a));
  const onTop = new Set(topLine.segs.map((s) => primaryColumn(s, cols)));
  // Only lines wholly under the top line: a label beside it (vertically centred) is no sub-header.
  const below = new Set<number>();
  for (const l of group) if (l.top >= topLine.bottom - 0.1 * (topLine.bottom - topLine.top)) for (const s of l.segs) below.add(primaryColumn(s, cols));
  for (const s of topLine.segs) {
    const k = primaryColumn(s, cols);
    let lo = k;
    let hi = k;
    // Symmetric growth: a centred label covers as many columns on its left as on its right.
    while (lo - 1 >= 0 && hi + 1 < cols.length && !onTop.has(lo - 1) && !onTop.has(hi + 1) && below.has(lo - 1) && below.has(hi + 1)) {
      lo--;
      hi++;
    }
    // An even number of columns: the label straddles the river between the middle two.
    const spanned = spannedColumns(s, cols);
    if (lo === hi && spanned.length >= 2 && spanned.every((c) => below.has(c) && (c === k || !onTop.has(c)))) {
      [lo, hi] = [spanned[0], spanned[spanned.length - 1]];
    }
    if (hi > lo && below.has(k)) spans.set(s, [lo, hi]);
  }
  return spans;
}

// ---------------------------------------------------------------------------------------------
// Ruled tables

interface Grid {
  xs: number[];
  ys: number[];
  h: Rule[];
  v: Rule[];
}

/** Grids formed by crossing rules, with the boxes inside them as cells; `used` holds those boxes. */
export function findRuledTables(lines: Box[][], rules: Rule[]): { tables: PdfTable[]; used: Set<Box> } {
  const tables: PdfTable[] = [];
  const used = new Set<Box>();
  if (rules.length < MIN_TABLE_RULES) return { tables, used };
  const boxes = lines.flat();
  for (const grid of findGrids(rules)) {
    const table = gridTable(grid, boxes.filter((b) => !used.has(b)));
    if (!table) continue;
    for (const b of table.inside) used.add(b);
    tables.push(table.table);
  }
  return { tables, used };
}

/**
 * Cells of a grid: neighbouring slots without a rule between them are one cell (a spanning
 * header); its text is repeated in every slot it covers, as docling renders spans.
 */
function gridTable(grid: Grid, boxes: Box[]): { table: PdfTable; inside: Box[] } | null {
  const { xs, ys, h, v } = grid;
  const nr = ys.length - 1;
  const nc = xs.length - 1;
  const covered = (rs: Rule[], at: number, mid: number) => rs.some((r) => Math.abs(r.at - at) <= RULE_TOLERANCE && r.a0 <= mid && r.a1 >= mid);
  const parent = Array.from({ length: nr * nc }, (_, k) => k);
  const find = (k: number): number => (parent[k] === k ? k : (parent[k] = find(parent[k])));
  const id = (r: number, c: number) => r * nc + c;
  for (let r = 0; r < nr; r++) {
    for (let c = 0; c < nc; c++) {
      if (c + 1 < nc && !covered(v, xs[c + 1], (ys[r] + ys[r + 1]) / 2)) parent[find(id(r, c + 1))] = find(id(r, c));
      if (r + 1 < nr && !covered(h, ys[r + 1], (xs[c] + xs[c + 1]) / 2)) parent[find(id(r + 1, c))] = find(id(r, c));
    }
  }
  const cellBoxes = new Map<number, Box[]>();
  const inside: Box[] = [];
  for (const b of boxes) {
    const c = slot(xs, (b.x0 + b.x1) / 2);
    const r = slot(ys, b.base - 0.3 * b.h);
    if (c < 0 || r < 0) continue;
    const root = find(id(r, c));
    let list = cellBoxes.get(root);
    if (!list) cellBoxes.set(root, (list = []));
    list.push(b);
    inside.push(b);
  }
  // A page frame or layout boxes are no table: their "cells" hold whole paragraphs.
  const linesPerCell = [...cellBoxes.values()].map((bs) => new Set(bs.map((b) => b.line)).size);
  if (cellBoxes.size < 4 || median(linesPerCell) > 2) return null;
  const slotsOf = new Map<number, number>();
  for (let k = 0; k < parent.length; k++) slotsOf.set(find(k), (slotsOf.get(find(k)) ?? 0) + 1);
  const spanning = [...cellBoxes.keys()].filter((root) => (slotsOf.get(root) ?? 1) > 1).length;
  if (spanning > 0.5 * cellBoxes.size) return null;
  const texts = new Map([...cellBoxes].map(([root, bs]) => [root, cellText(bs)]));
  const all = Array.from({ length: nr }, (_, r) => Array.from({ length: nc }, (_, c) => texts.get(find(id(r, c))) ?? ''));
  const keepRows = all.map((_, r) => r).filter((r) => all[r].some(Boolean));
  const keepCols = all[0].map((_, c) => c).filter((c) => all.some((row) => row[c]));
  if (keepRows.length < 2 || keepCols.length < 2) return null;
  const rows = keepRows.map((r) => keepCols.map((c) => all[r][c]));
  // Header rows: the first row and every row a first-row cell reaches down into.
  let headerRows = 1;
  for (let c = 0; c < nc; c++) {
    const root = find(id(keepRows[0], c));
    for (let k = 1; k < keepRows.length; k++) if (find(id(keepRows[k], c)) === root) headerRows = Math.max(headerRows, k + 1);
  }
  headerRows = Math.min(headerRows, rows.length - 1);
  const headers = keepCols.map((_, c) => [...new Set(rows.slice(0, headerRows).map((row) => row[c]).filter(Boolean))].join(' '));
  return { table: { rows, headerRows, headers, detection: 'ruled', x0: xs[0], x1: xs[nc], top: ys[0], bottom: ys[nr] }, inside };
}

function slot(edges: number[], v: number): number {
  if (v <= edges[0] || v >= edges[edges.length - 1]) return -1;
  for (let k = 0; k + 1 < edges.length; k++) if (v < edges[k + 1]) return k;
  return -1;
}

function cellText(boxes: Box[]): string {
  if (!boxes.length) return '';
  const byLine = new Map<number, Box[]>();
  for (const b of boxes) {
    let l = byLine.get(b.line);
    if (!l) byLine.set(b.line, (l = []));
    l.push(b);
  }
  return [...byLine.values()]
    .map((l) => l.sort((a, b) => a.x0 - b.x0))
    .sort((a, b) => a[0].base - b[0].base)
    .map((l) => toSegment(l).text)
    .join(' ')
    .trim();
}

/** Merges collinear touching rules of one direction. */
function mergeRules(rules: Rule[]): Rule[] {
  const sorted = [...rules].sort((a, b) => a.at - b.at || a.a0 - b.a0);
  const out: Rule[] = [];
  for (const r of sorted) {
    const same = out.find((o) => Math.abs(o.at - r.at) <= RULE_TOLERANCE && r.a0 <= o.a1 + RULE_TOLERANCE && r.a1 >= o.a0 - RULE_TOLERANCE);
    if (same) {
      same.a0 = Math.min(same.a0, r.a0);
      same.a1 = Math.max(same.a1, r.a1);
    } else out.push({ ...r });
  }
  return out;
}

function distinct(values: number[]): number[] {
  const out: number[] = [];
  for (const v of [...values].sort((a, b) => a - b)) if (!out.length || v - out[out.length - 1] > RULE_TOLERANCE) out.push(v);
  return out;
}

function findGrids(rules: Rule[]): Grid[] {
  const h = mergeRules(rules.filter((r) => r.dir === 'h'));
  const v = mergeRules(rules.filter((r) => r.dir === 'v'));
  if (h.length < 3 || v.length < 3) return [];
  const crosses = (a: Rule, b: Rule) =>
    b.at >= a.a0 - RULE_TOLERANCE && b.at <= a.a1 + RULE_TOLERANCE && a.at >= b.a0 - RULE_TOLERANCE && a.at <= b.a1 + RULE_TOLERANCE;
  // Connected components of the crossing graph (h rules index 0.., v rules after them).
  const parent = Array.from({ length: h.length + v.length }, (_, k) => k);
  const find = (k: number): number => (parent[k] === k ? k : (parent[k] = find(parent[k])));
  for (let a = 0; a < h.length; a++) for (let b = 0; b < v.length; b++) if (crosses(h[a], v[b])) parent[find(a)] = find(h.length + b);
  const comps = new Map<number, { h: Rule[]; v: Rule[] }>();
  for (let k = 0; k < parent.length; k++) {
    const root = find(k);
    let c = comps.get(root);
    if (!c) comps.set(root, (c = { h: [], v: [] }));
    if (k < h.length) c.h.push(h[k]);
    else c.v.push(v[k - h.length]);
  }
  const grids: Grid[] = [];
  for (const c of comps.values()) {
    // Tables ruled only inside (no outer verticals) end where their horizontal rules end.
    const xs = distinct([...c.v.map((r) => r.at), Math.min(...c.h.map((r) => r.a0)), Math.max(...c.h.map((r) => r.a1))]);
    const ys = distinct([...c.h.map((r) => r.at), Math.min(...c.v.map((r) => r.a0)), Math.max(...c.v.map((r) => r.a1))]);
    if (xs.length >= 3 && ys.length >= 3) grids.push({ xs, ys, h: c.h, v: c.v });
  }
  return grids;
}
