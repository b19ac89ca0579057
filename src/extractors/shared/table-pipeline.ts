/**
 * The table steps shared by spreadsheets (XLSX/XLS) and CSV/TSV: header-row detection, unique
 * header names, per-column typing and density, and the pipe-table rendering used as content.
 *
 * Input is a grid of non-empty rows with their 1-based source row numbers, so results can point
 * back at the row a user sees in Excel or in the CSV file.
 */
import { toPipeTable } from './markdown-table.ts';

export type Cell = string | number | boolean | null;
export type ColumnType = 'numeric' | 'datetime' | 'text' | 'empty';

/** Rows scanned for the header (the first 10 non-empty rows). */
export const HEADER_SCAN_ROWS = 10;
/** Data rows shown per table in document content (tables[].rows keeps them all). */
export const CONTENT_MAX_ROWS = 20;
/** Largest rendering of one table in tables[].content. */
export const TABLE_CONTENT_MAX_CHARS = 5_000;
/** A column is numeric / datetime when more than this share of its non-empty cells are. */
const TYPE_THRESHOLD = 0.8;
/** Non-empty values per column looked at for its type (enough for a stable share, cheap on big files). */
const TYPE_SAMPLE = 10_000;

export interface AnalyzedTable {
  /** Unique, non-empty header names ("Column N" for blanks, "Name (2)" for repeats). */
  headers: string[];
  /** Header cells as written (blank stays blank, repeats stay repeated), for rendering. */
  displayHeaders: string[];
  /** Data rows (below the header), each padded to headers.length. */
  rows: Cell[][];
  /** 1-based source row number of each data row. */
  rowNumbers: number[];
  /** 1-based source row of the header, null when the table is empty. */
  headerRow: number | null;
  /** Text of the (title-like) rows above the header, in order. */
  preamble: string[];
  /** Text of footnote rows below the data (merged across the table, or one long note in a wide table). */
  footnotes: string[];
  columnTypes: Record<string, ColumnType>;
  /** Share of non-empty cells per column, 0..1 (3 decimals). */
  columnDensity: Record<string, number>;
  /** Share of non-empty data cells in the whole table, 0..1 (3 decimals). */
  density: number;
}

export function isEmptyCell(value: Cell | undefined): boolean {
  return value === null || value === undefined || (typeof value === 'string' && value.trim() === '');
}

/** Display text of a cell: numbers without float noise, whitespace (newlines too) collapsed. */
export function cellText(value: Cell | undefined): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return String(value);
    return Number.isInteger(value) ? String(value) : String(Number(value.toPrecision(15)));
  }
  if (typeof value === 'boolean') return value ? 'TRUE' : 'FALSE';
  return value.replace(/\s+/g, ' ').trim();
}

/**
 * Header score of a row (the seed's rule): uniqueness x 0.5 + text ratio x 0.3 + coverage x 0.2,
 * where uniqueness and text ratio are over the row's non-empty cells and coverage over the width.
 */
export function headerScore(row: Cell[], width: number): number {
  const filled = row.filter((v) => !isEmptyCell(v));
  if (filled.length === 0 || width === 0) return 0;
  const texts = filled.map((v) => cellText(v).toLowerCase());
  const uniqueness = new Set(texts).size / filled.length;
  const textRatio = filled.filter((v) => typeof v === 'string' && !isNumericText(v)).length / filled.length;
  const coverage = filled.length / width;
  return uniqueness * 0.5 + textRatio * 0.3 + coverage * 0.2;
}

/** Distinct non-empty values of a row (a merged title spread over five cells counts once). */
export function distinctValues(row: Cell[]): number {
  return new Set(row.filter((v) => !isEmptyCell(v)).map((v) => cellText(v).toLowerCase())).size;
}

/**
 * A row filling at least half the width with 2+ distinct values (any value when the table is one
 * column wide). Titles merged across the width are not dense.
 */
export function isDenseRow(row: Cell[], width: number): boolean {
  const distinct = distinctValues(row);
  return distinct >= Math.max(1, Math.ceil(width / 2)) && (width < 2 || distinct >= 2);
}

/** A row whose 2+ non-empty cells all hold one value: a title or footnote spread by a merge. */
function isSpreadRow(row: Cell[]): boolean {
  let first: Cell | undefined;
  let count = 0;
  for (const v of row) {
    if (isEmptyCell(v)) continue;
    if (count === 0) first = v;
    else if (v !== first) return false;
    count++;
  }
  return count >= 2;
}

/**
 * Index of the header row in `grid`. Candidates are the first HEADER_SCAN_ROWS rows, but never past
 * the first dense row: rows above a header are sparse titles ("Quarterly report", "In millions of
 * CHF"); a dense row is itself the header or data, and a header below data is not a header.
 */
export function detectHeaderRow(grid: Cell[][], width: number): number {
  let best = 0;
  let bestScore = -1;
  const last = Math.min(grid.length, HEADER_SCAN_ROWS);
  for (let i = 0; i < last; i++) {
    const score = headerScore(grid[i], width);
    if (score > bestScore) {
      best = i;
      bestScore = score;
    }
    if (isDenseRow(grid[i], width)) break;
  }
  return best;
}

/** Header names: whitespace collapsed, blanks -> "Column N" (1-based), repeats -> "Name (2)". */
export function uniqueHeaders(raw: Cell[], width: number): string[] {
  const used = new Set<string>();
  // Next suffix to try per base name: retrying from 2 each time is quadratic in repeated names
  // (a row of 10,000 identical headers).
  const nextSuffix = new Map<string, number>();
  const out: string[] = [];
  for (let c = 0; c < width; c++) {
    const base = cellText(raw[c]) || `Column ${c + 1}`;
    const baseKey = base.toLowerCase();
    let name = base;
    let n = nextSuffix.get(baseKey) ?? 2;
    while (used.has(name.toLowerCase())) name = `${base} (${n++})`;
    nextSuffix.set(baseKey, n);
    used.add(name.toLowerCase());
    out.push(name);
  }
  return out;
}

const NUMERIC_RE = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?%?$/i;
const THOUSANDS_RE = /^[+-]?\d{1,3}(?:,\d{3})+(?:\.\d+)?%?$/;

/** '12', '-3.5', '1,234.5', '1e3', '45%' are numeric; '001-808', '2020-08-24' are not. */
export function isNumericText(value: string): boolean {
  const s = value.trim();
  return s !== '' && (NUMERIC_RE.test(s) || THOUSANDS_RE.test(s));
}

const ISO_DATE_RE = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;
const LOCAL_DATE_RE = /^\d{1,2}[/.-]\d{1,2}[/.-](?:\d{2}|\d{4})(?:[ T]\d{1,2}:\d{2}(?::\d{2})?)?$/;

export function isDateText(value: string): boolean {
  const s = value.trim();
  return ISO_DATE_RE.test(s) || LOCAL_DATE_RE.test(s);
}

function classify(value: Cell): 'numeric' | 'datetime' | 'text' {
  if (typeof value === 'number') return 'numeric';
  if (typeof value === 'boolean') return 'text';
  const s = String(value);
  if (isNumericText(s)) return 'numeric';
  if (isDateText(s)) return 'datetime';
  return 'text';
}

export function columnType(values: Cell[]): ColumnType {
  const filled: Cell[] = [];
  for (const v of values) {
    if (isEmptyCell(v)) continue;
    filled.push(v);
    if (filled.length >= TYPE_SAMPLE) break;
  }
  if (filled.length === 0) return 'empty';
  let numeric = 0;
  let dates = 0;
  for (const v of filled) {
    const kind = classify(v);
    if (kind === 'numeric') numeric++;
    else if (kind === 'datetime') dates++;
  }
  if (numeric / filled.length > TYPE_THRESHOLD) return 'numeric';
  if (dates / filled.length > TYPE_THRESHOLD) return 'datetime';
  return 'text';
}

const round3 = (x: number): number => Math.round(x * 1000) / 1000;

/**
 * Turns a grid of non-empty rows into a typed table. `rowNumbers[i]` is the source row of grid[i].
 */
export function analyzeTable(grid: Cell[][], rowNumbers: number[]): AnalyzedTable {
  let width = grid.reduce((w, row) => Math.max(w, trimmedLength(row)), 0);
  if (grid.length === 0 || width === 0) {
    return { headers: [], displayHeaders: [], rows: [], rowNumbers: [], headerRow: null, preamble: [], footnotes: [], columnTypes: {}, columnDensity: {}, density: 0 };
  }
  const h = detectHeaderRow(grid, width);
  let end = grid.length;
  while (end > h + 1 && isFootnoteRow(grid[end - 1], width)) end--;
  const second = isSecondHeaderRow(grid, h, end, width);
  const first = second ? h + 2 : h + 1;
  const headerRowCells = second ? combineHeaderRows(grid[h], grid[h + 1], width) : padRow(grid[h], width);
  // Spacer columns (blank in the header and every data row) carry nothing once titles are set apart.
  const full = grid.slice(first, end).map((row) => padRow(row, width));
  const cols: number[] = [];
  for (let c = 0; c < width; c++) {
    if (!isEmptyCell(headerRowCells[c]) || full.some((r) => r[c] !== null)) cols.push(c);
  }
  const headerCells = cols.map((c) => headerRowCells[c] ?? null);
  const rows = cols.length === width ? full : full.map((r) => cols.map((c) => r[c]));
  width = cols.length;
  const headers = uniqueHeaders(headerCells, width);
  const preamble = rowTexts(grid.slice(0, h));
  const footnotes = rowTexts(grid.slice(end));

  const columnTypes: Record<string, ColumnType> = {};
  const columnDensity: Record<string, number> = {};
  let filledCells = 0;
  // Titles and footnotes merged across the table say nothing about a column's type.
  const typed = rows.filter((r) => !isSpreadRow(r));
  for (let c = 0; c < width; c++) {
    const values = rows.map((r) => r[c]);
    const filled = values.filter((v) => !isEmptyCell(v)).length;
    filledCells += filled;
    columnTypes[headers[c]] = columnType(typed.map((r) => r[c]));
    columnDensity[headers[c]] = rows.length ? round3(filled / rows.length) : 0;
  }
  return {
    headers,
    displayHeaders: headerCells.map(cellText),
    rows,
    rowNumbers: rowNumbers.slice(first, end),
    headerRow: rowNumbers[h],
    preamble,
    footnotes,
    columnTypes,
    columnDensity,
    density: rows.length ? round3(filledCells / (rows.length * width)) : 0,
  };
}

/**
 * Two-level headers ("January–June 2023" above "Sales", "Profit"): the row under the header holds
 * only text, fills a column the header leaves blank, and some of its text sits atop a column whose
 * data below is numeric.
 */
function isSecondHeaderRow(grid: Cell[][], h: number, end: number, width: number): boolean {
  const next = grid[h + 1];
  if (!next || h + 2 >= end) return false;
  const filled = next.filter((v) => !isEmptyCell(v));
  if (filled.length < 2 || filled.some((v) => typeof v !== 'string' || isNumericText(v) || isDateText(v))) return false;
  // The lower row must name a column the upper one leaves blank (a group label over several
  // columns); a fully written upper row is the header and the row under it is data.
  const header = grid[h];
  if (!next.some((v, c) => !isEmptyCell(v) && isEmptyCell(header[c]))) return false;
  const below = grid.slice(h + 2, end);
  for (let c = 0; c < width; c++) {
    if (isEmptyCell(next[c])) continue;
    if (columnType(below.map((r) => r[c] ?? null)) === 'numeric') return true;
  }
  return false;
}

function combineHeaderRows(top: Cell[], bottom: Cell[], width: number): Cell[] {
  const out: Cell[] = [];
  for (let c = 0; c < width; c++) {
    const a = cellText(top[c]);
    const b = cellText(bottom[c]);
    out.push(a && b && a !== b ? `${a} ${b}` : a || b || null);
  }
  return out;
}

/** One line per row; a value spread by a merge reads once, and so does a line repeated below itself. */
function rowTexts(rows: Cell[][]): string[] {
  const lines = rows
    .map((row) => row.filter((v) => !isEmptyCell(v)).map(cellText))
    .map((cells) => cells.filter((v, i) => i === 0 || v !== cells[i - 1]).join(' '))
    .filter((line) => line !== '');
  return lines.filter((line, i) => i === 0 || line !== lines[i - 1]);
}

function isFootnoteRow(row: Cell[], width: number): boolean {
  if (width < 2) return false;
  if (isSpreadRow(row)) return true;
  const filled = row.filter((v) => !isEmptyCell(v));
  return width >= 3 && filled.length === 1 && typeof filled[0] === 'string' && filled[0].trim().length >= 30;
}

function trimmedLength(row: Cell[]): number {
  let n = row.length;
  while (n > 0 && isEmptyCell(row[n - 1])) n--;
  return n;
}

function padRow(row: Cell[], width: number): Cell[] {
  const out: Cell[] = new Array(width);
  for (let c = 0; c < width; c++) out[c] = isEmptyCell(row[c]) ? null : row[c];
  return out;
}

/** Pipe table of the header and the first `maxRows` rows, every column. */
export function renderTable(headers: string[], rows: Cell[][], maxRows = CONTENT_MAX_ROWS): string {
  return toPipeTable([headers, ...rows.slice(0, maxRows).map((r) => r.map(cellText))]);
}

/**
 * Pipe table bounded by `maxChars` (tables[].content): as many leading columns as keep the header
 * line within half the budget, then as many rows (up to maxRows) as fit; what was left out is
 * stated on a last line so a reader knows the table goes on.
 */
export function renderBoundedTable(
  headers: string[],
  rows: Cell[][],
  maxRows = CONTENT_MAX_ROWS,
  maxChars = TABLE_CONTENT_MAX_CHARS,
): string {
  const clip = (s: string) => (s.length > 200 ? `${s.slice(0, 199)}…` : s);
  let cols = headers.length;
  while (cols > 1 && toPipeTable([headers.slice(0, cols).map(clip)]).length > maxChars / 2) {
    cols = Math.max(1, Math.floor(cols * 0.8));
  }
  const head = headers.slice(0, cols).map(clip);
  const body = rows.slice(0, maxRows).map((r) => r.slice(0, cols).map((v) => clip(cellText(v))));
  const noteFor = (shown: number): string => {
    const parts: string[] = [];
    if (shown < rows.length) parts.push(`${shown} of ${rows.length} rows`);
    if (cols < headers.length) parts.push(`${cols} of ${headers.length} columns`);
    return parts.length ? `\n\n_Showing ${parts.join(', ')}._` : '';
  };
  let shown = body.length;
  let text = toPipeTable([head, ...body.slice(0, shown)]) + noteFor(shown);
  while (text.length > maxChars && shown > 0) {
    shown--;
    text = toPipeTable([head, ...body.slice(0, shown)]) + noteFor(shown);
  }
  return text.length > maxChars ? text.slice(0, maxChars) : text;
}

/** Column names (case-insensitive) present in two or more of the given tables, first spelling kept. */
export function commonColumns(tables: Array<{ headers: string[] }>): string[] {
  const seen = new Map<string, { name: string; count: number }>();
  for (const t of tables) {
    for (const key of new Set(t.headers.filter((h) => !/^Column \d+$/.test(h)).map((h) => h.toLowerCase()))) {
      const entry = seen.get(key);
      if (entry) entry.count++;
      else seen.set(key, { name: t.headers.find((h) => h.toLowerCase() === key) as string, count: 1 });
    }
  }
  return [...seen.values()].filter((e) => e.count >= 2).map((e) => e.name);
}
