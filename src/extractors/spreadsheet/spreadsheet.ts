/**
 * XLSX and legacy XLS (and the XML/HTML "xls" that many web apps export) -> ProcessedDocument.
 *
 * Each worksheet is read from SheetJS's dense cell store (never through its declared used range:
 * files declare ranges like A1:C1048496 around seven real rows). Merged cells are spread to every
 * cell they cover, formulas read as their cached values, dates as ISO 8601. A sheet is split into
 * separate tables where the author left clear gaps (2+ blank rows, or blank columns between blocks
 * that do not share rows); each table gets its own header detection and column typing.
 */
import * as XLSX from 'xlsx';
import { toolError, isToolError } from '../../errors.ts';
import { assertSafeZip, DEFAULT_ZIP_LIMITS, looksLikeZip } from '../shared/zip.ts';
import { hasOle2Signature } from '../shared/signatures.ts';
import {
  analyzeTable,
  commonColumns,
  CONTENT_MAX_ROWS,
  distinctValues,
  isEmptyCell,
  renderBoundedTable,
  renderTable,
  type AnalyzedTable,
  type Cell,
} from '../shared/table-pipeline.ts';
import type { ExtractedTable, ExtractInput, PageSpan, ProcessedDocument } from '../shared/types.ts';
import { chartLines, type ChartData } from '../shared/chart-xml.ts';
import { readWorkbookCharts, type SheetCharts } from './xlsx-charts.ts';
import { countWorkbookCells, listSheets, packageOf, type WorkbookSheet } from './xlsx-sheets.ts';
import { planSheetReads, type SheetReadPlan } from './sheet-budget.ts';
import { thousands } from '../../util/thousands.ts';

/**
 * Rows SheetJS keeps per sheet of a legacy XLS (its `sheetRows` option: rows below are not
 * stored). XLSX sheets are bounded by the cell budget instead, counted before decoding.
 */
export const MAX_SHEET_ROWS = 50_000;
/**
 * Non-empty cells read across the whole workbook (sheet-budget.ts): sheets past the budget are
 * reported with their size, not decoded.
 */
export const MAX_WORKBOOK_CELLS = 2_000_000;
/** Columns considered per sheet (Excel's own maximum is 16,384). */
export const MAX_SHEET_COLUMNS = 2_000;

/** A table of a sheet, with the source row of each data row (for query results). */
export type SheetTable = ExtractedTable & { row_numbers?: number[] };

const ERROR_TEXT: Record<number, string> = {
  0x00: '#NULL!',
  0x07: '#DIV/0!',
  0x0f: '#VALUE!',
  0x17: '#REF!',
  0x1d: '#NAME?',
  0x24: '#NUM!',
  0x2a: '#N/A',
  0x2b: '#GETTING_DATA',
};

export interface SpreadsheetOptions {
  /** Cell budget of the workbook (default MAX_WORKBOOK_CELLS). */
  maxCells?: number;
}

export async function extractSpreadsheet(input: ExtractInput, opts: SpreadsheetOptions = {}): Promise<ProcessedDocument> {
  const maxCells = opts.maxCells ?? MAX_WORKBOOK_CELLS;
  const { bytes, signal } = input;
  signal.throwIfAborted();
  const isZip = looksLikeZip(bytes);
  const entries = isZip ? assertSafeZip(bytes) : [];
  if (!isZip && !hasOle2Signature(bytes) && !looksLikeMarkup(bytes)) {
    throw toolError('PROCESSING_ERROR', 'Not a valid XLSX or XLS workbook');
  }

  const kind = isZip ? 'xlsx' : 'xls';
  const pkg = isZip ? packageOf(bytes, entries) : null;
  const listed = pkg ? sheetsOf(pkg) : [];
  const plan = pkg && listed.length ? planSheetReads(listed, countWorkbookCells(pkg, listed, DEFAULT_ZIP_LIMITS.maxTotalUncompressed), maxCells) : null;
  const wb = readPlanned(bytes, plan);
  const chartsBySheet: Map<string, SheetCharts> = pkg ? readWorkbookCharts(pkg, listed) : new Map();
  const chartsMeta: Array<Record<string, unknown>> = [];
  const hidden = new Map<string, boolean>();
  wb.Workbook?.Sheets?.forEach((s) => {
    if (s.name) hidden.set(s.name, (s.Hidden ?? 0) > 0);
  });

  const parts: string[] = [];
  const pages: PageSpan[] = [];
  const tables: SheetTable[] = [];
  const notes: string[] = [];
  const sheetsMeta: Array<Record<string, unknown>> = [];
  const headersBySheet: Array<{ headers: string[] }> = [];
  let cellBudget = maxCells;
  let offset = 0;
  let sheetNumber = 0;

  for (const name of wb.SheetNames) {
    signal.throwIfAborted();
    sheetNumber++;
    const ws = wb.Sheets[name] as XLSX.WorkSheet | undefined;
    const type = ws?.['!type'];
    const drawn = chartsBySheet.get(name);
    const charts = drawn?.charts ?? [];
    const isChartSheet = drawn?.kind === 'chartsheet' || type === 'chart';
    const notRead = plan?.skipped.get(name);
    if (notRead) {
      const why = `${thousands(notRead.cells)} cells in ${thousands(notRead.rows)} rows, past the workbook's budget of ${thousands(maxCells)} cells`;
      notes.push(`Sheet "${name}" was not read: ${why}.`);
      const text = `## Sheet: ${name}\n\n_Not read: ${why}._`;
      if (parts.length) offset += 2;
      pages.push({ number: sheetNumber, unit: 'sheet', label: name, start: offset, end: offset + text.length });
      offset += text.length;
      parts.push(text);
      headersBySheet.push({ headers: [] });
      sheetsMeta.push({ name, index: sheetNumber, type: 'worksheet', rows: 0, tables: 0, charts: charts.length, hidden: hidden.get(name) ?? false, truncated: true, rows_total: notRead.rows, cells_total: notRead.cells });
      continue;
    }
    if (!isChartSheet && (!ws || (type && type !== 'sheet'))) {
      notes.push(`Sheet "${name}" is a ${type ?? 'non-worksheet'}sheet without cell data; skipped.`);
      continue;
    }
    const sheet = isChartSheet || !ws ? null : readSheet(ws, cellBudget);
    const full = plan?.counts.get(name);
    // XLS has no count before decoding: its declared range (!fullref) gives the full row count.
    const declared = !full && ws?.['!fullref'] ? XLSX.utils.decode_range(ws['!fullref']).e.r + 1 : undefined;
    const rowsTotal = full?.rows ?? declared;
    if (sheet) {
      cellBudget -= sheet.cells;
      if (sheet.truncated) {
        const of = rowsTotal ? ` of ${thousands(rowsTotal)}` : '';
        const limit = full
          ? `cell budget of ${thousands(maxCells)}`
          : `limits of ${thousands(MAX_SHEET_ROWS)} rows per sheet and ${thousands(maxCells)} cells`;
        notes.push(`Sheet "${name}": only the first ${sheet.lastRow} rows${of} were read (${limit}).`);
      }
    }

    const blocks = sheet ? splitBlocks(sheet.grid, sheet.mergeIds) : [];
    const analyzed = blocks.map((b) => ({ block: b, table: analyzeTable(b.grid, b.rowNumbers) })).filter((x) => x.table.headers.length > 0);

    const section: string[] = [`## Sheet: ${name}`];
    let sheetRows = 0;
    analyzed.forEach(({ block, table }, i) => {
      sheetRows += table.rows.length;
      if (table.preamble.length) section.push(table.preamble.join('\n'));
      section.push(renderTable(table.displayHeaders, table.rows, CONTENT_MAX_ROWS));
      section.push(rowsNote(table));
      if (table.footnotes.length) section.push(table.footnotes.join('\n'));
      tables.push(toExtractedTable(name, table, block, i, analyzed.length, kind));
    });
    for (const chart of charts) {
      section.push(chartLines(chart).join('\n'));
      chartsMeta.push(chartMeta(name, chart));
    }
    if (analyzed.length === 0 && charts.length === 0) section.push(isChartSheet ? '_Chart sheet without chart data._' : '_Empty sheet._');
    headersBySheet.push({ headers: analyzed.flatMap((a) => a.table.headers) });

    const text = section.join('\n\n');
    if (parts.length) offset += 2; // the "\n\n" joining sections
    pages.push({ number: sheetNumber, unit: 'sheet', label: name, start: offset, end: offset + text.length });
    offset += text.length;
    parts.push(text);
    sheetsMeta.push({
      name,
      index: sheetNumber,
      type: isChartSheet ? 'chartsheet' : 'worksheet',
      rows: sheetRows,
      tables: analyzed.length,
      charts: charts.length,
      hidden: hidden.get(name) ?? false,
      ...(sheet?.truncated ? { truncated: true, ...(rowsTotal ? { rows_total: rowsTotal } : {}), ...(full ? { cells_total: full.cells } : {}) } : {}),
    });
  }

  const common = commonColumns(headersBySheet);
  return {
    kind,
    content: parts.join('\n\n'),
    metadata: {
      format: kind,
      sheet_count: wb.SheetNames.length,
      sheet_names: [...wb.SheetNames],
      sheets: sheetsMeta,
      table_count: tables.length,
      total_rows: tables.reduce((n, t) => n + (t.rows?.length ?? 0), 0),
      common_columns: common,
      chart_count: chartsMeta.length,
      ...(chartsMeta.length ? { charts: chartsMeta } : {}),
      ...(notes.length ? { notes } : {}),
    },
    tables,
    images: [],
    urls: [],
    pages,
  };
}

/** Cached points per series kept in metadata.charts (point_count gives the full number). */
export const MAX_CHART_META_POINTS = 1_000;

function chartMeta(sheet: string, chart: ChartData): Record<string, unknown> {
  const points = Math.max(chart.categories.length, ...chart.series.map((s) => s.values.length), 0);
  return {
    sheet,
    type: chart.kinds.join(', ') || 'unknown',
    title: chart.title,
    categories: chart.categories.slice(0, MAX_CHART_META_POINTS),
    series: chart.series.map((s) => ({ name: s.name, values: s.values.slice(0, MAX_CHART_META_POINTS) })),
    point_count: points,
    ...(points > MAX_CHART_META_POINTS ? { truncated: true } : {}),
  };
}

/** The sheets the workbook part lists; none when it cannot be read (SheetJS then reports why). */
function sheetsOf(pkg: ReturnType<typeof packageOf>): WorkbookSheet[] {
  try {
    return listSheets(pkg);
  } catch (err) {
    if (isToolError(err) && err.code === 'PAYLOAD_TOO_LARGE') throw err;
    return [];
  }
}

/** The workbook as the plan says: everything when it all fits, else the sheets (and rows) that do. */
function readPlanned(bytes: Buffer, plan: SheetReadPlan | null): XLSX.WorkBook {
  if (!plan) return readWorkbook(bytes, { sheetRows: MAX_SHEET_ROWS });
  if (!plan.partial && plan.skipped.size === 0) return readWorkbook(bytes, {});
  const wb = readWorkbook(bytes, { sheets: plan.whole });
  if (plan.partial) {
    const part = readWorkbook(bytes, { sheets: [plan.partial.name], sheetRows: plan.partial.rows });
    const ws = part.Sheets[plan.partial.name];
    if (ws) wb.Sheets[plan.partial.name] = ws;
  }
  return wb;
}

function readWorkbook(bytes: Buffer, limits: { sheetRows?: number; sheets?: string[] }): XLSX.WorkBook {
  try {
    return XLSX.read(bytes, {
      ...limits,
      type: 'buffer',
      dense: true,
      cellDates: true,
      cellStyles: false,
      cellHTML: false,
      cellFormula: false,
      cellNF: false,
      bookVBA: false,
      WTF: false,
    });
  } catch (err) {
    if (isToolError(err)) throw err;
    const msg = err instanceof Error ? err.message : String(err);
    if (/password|encrypt/i.test(msg)) {
      throw toolError('PROCESSING_ERROR', 'The workbook is password-protected (encrypted); it cannot be read without the password', err);
    }
    throw toolError('PROCESSING_ERROR', `Could not read the workbook: ${msg}`, err);
  }
}

function looksLikeMarkup(bytes: Buffer): boolean {
  const head = bytes.subarray(0, 512).toString('latin1').replace(/^\uFEFF|^\xEF\xBB\xBF/, '').trimStart();
  return head.startsWith('<');
}

interface SheetGrid {
  /** Sparse rows (index = 0-based sheet row), values already converted. */
  grid: Cell[][];
  /** Merge range id per cell (same indices as grid), for cells covered by a merge. */
  mergeIds: Map<number, number>[];
  cells: number;
  lastRow: number;
  truncated: boolean;
}

function readSheet(ws: XLSX.WorkSheet, cellBudget: number): SheetGrid {
  const data = (ws['!data'] ?? []) as Array<Array<XLSX.CellObject | undefined> | undefined>;
  const grid: Cell[][] = [];
  let cells = 0;
  let truncated = Boolean(ws['!fullref'] && ws['!fullref'] !== ws['!ref']);
  let lastRow = 0;
  for (let r = 0; r < data.length; r++) {
    const row = data[r];
    if (!row) continue;
    const out: Cell[] = [];
    const width = Math.min(row.length, MAX_SHEET_COLUMNS);
    for (let c = 0; c < width; c++) {
      const v = cellValue(row[c]);
      if (v !== null) {
        out[c] = v;
        cells++;
      }
    }
    if (out.length) {
      grid[r] = out;
      lastRow = r + 1;
    }
    if (cells >= cellBudget) {
      truncated = true;
      break;
    }
  }

  // Spread merged values, clamped to where data actually is (a merge may span a whole column).
  const mergeIds: Map<number, number>[] = [];
  const maxRow = grid.length;
  (ws['!merges'] ?? []).forEach((m, id) => {
    const top = grid[m.s.r]?.[m.s.c] ?? null;
    if (top === null || m.s.r >= maxRow) return;
    const lastR = Math.min(m.e.r, maxRow - 1);
    const lastC = Math.min(m.e.c, MAX_SHEET_COLUMNS - 1);
    for (let r = m.s.r; r <= lastR; r++) {
      const row = (grid[r] ??= []);
      const ids = (mergeIds[r] ??= new Map());
      for (let c = m.s.c; c <= lastC; c++) {
        row[c] = top;
        ids.set(c, id);
      }
    }
  });
  return { grid, mergeIds, cells, lastRow, truncated };
}

function cellValue(cell: XLSX.CellObject | undefined): Cell {
  if (!cell) return null;
  switch (cell.t) {
    case 'n':
      return typeof cell.v === 'number' ? cell.v : null;
    case 'b':
      return Boolean(cell.v);
    case 'd':
      return cell.v instanceof Date ? isoDate(cell.v) : cell.v == null ? null : String(cell.v);
    case 'e':
      return ERROR_TEXT[cell.v as number] ?? cell.w ?? '#ERROR';
    case 's': {
      const s = cell.v == null ? '' : String(cell.v);
      return s.trim() === '' ? null : s;
    }
    default:
      return null;
  }
}

/**
 * SheetJS returns dates whose UTC reading is the wall-clock value in the sheet; spreadsheets carry
 * no time zone, so the ISO form has none: "2024-01-05" or "2024-02-29T13:45:30".
 */
export function isoDate(d: Date): string {
  if (Number.isNaN(d.getTime())) return '';
  const rounded = new Date(Math.round(d.getTime() / 1000) * 1000);
  const iso = rounded.toISOString();
  return iso.endsWith('T00:00:00.000Z') ? iso.slice(0, 10) : iso.slice(0, 19);
}

interface Block {
  grid: Cell[][];
  rowNumbers: number[];
  firstCol: number;
  lastCol: number;
}

/**
 * Splits a sheet into table blocks: bands separated by 2+ blank rows (unless the lower band reads
 * as a continuation of the table above), then column groups separated by 2+ blank columns, or by one
 * blank column when the groups do not share their rows (side-by-side tables rather than a spacer
 * column inside one table).
 */
function splitBlocks(grid: Cell[][], mergeIds: Map<number, number>[]): Block[] {
  const rowIdx: number[] = [];
  for (let r = 0; r < grid.length; r++) if (grid[r] && grid[r].some((v) => !isEmptyCell(v))) rowIdx.push(r);
  if (rowIdx.length === 0) return [];

  const bands: number[][] = [[rowIdx[0]]];
  for (let i = 1; i < rowIdx.length; i++) {
    if (rowIdx[i] - rowIdx[i - 1] >= 3) bands.push([]);
    bands[bands.length - 1].push(rowIdx[i]);
  }

  const blocks: Block[] = [];
  for (const band of bands) {
    const groups = splitColumns(grid, band);
    for (const g of groups) {
      const rows = band.filter((r) => hasValueIn(grid[r], g.first, g.last));
      if (!rows.length) continue;
      const keep = keptColumns(grid, mergeIds, rows, g.first, g.last);
      const block: Block = {
        grid: rows.map((r) => keep.map((c) => grid[r]?.[c] ?? null)),
        rowNumbers: rows.map((r) => r + 1),
        firstCol: g.first,
        lastCol: g.last,
      };
      const prev = blocks[blocks.length - 1];
      if (prev && (isTitleOnly(prev) || isContinuation(prev, block))) {
        prev.grid.push(...block.grid);
        prev.rowNumbers.push(...block.rowNumbers);
        prev.firstCol = Math.min(prev.firstCol, block.firstCol);
        prev.lastCol = Math.max(prev.lastCol, block.lastCol);
      } else blocks.push(block);
    }
  }
  return blocks;
}

/** Rows that are all single values (titles, captions): they belong above the next table. */
function isTitleOnly(block: Block): boolean {
  return block.grid.length <= 3 && block.grid.every((row) => distinctValues(row) <= 1);
}

function hasValueIn(row: Cell[] | undefined, first: number, last: number): boolean {
  if (!row) return false;
  for (let c = first; c <= last && c < row.length; c++) if (!isEmptyCell(row[c])) return true;
  return false;
}

function splitColumns(grid: Cell[][], band: number[]): Array<{ first: number; last: number }> {
  let width = 0;
  for (const r of band) width = Math.max(width, grid[r].length);
  const used: boolean[] = new Array(width).fill(false);
  for (const r of band) grid[r].forEach((v, c) => { if (!isEmptyCell(v)) used[c] = true; });

  // Runs of used columns.
  const runs: Array<{ first: number; last: number }> = [];
  for (let c = 0; c < width; c++) {
    if (!used[c]) continue;
    const last = runs[runs.length - 1];
    if (last && last.last === c - 1) last.last = c;
    else runs.push({ first: c, last: c });
  }
  const rowsOf = (g: { first: number; last: number }) => new Set(band.filter((r) => hasValueIn(grid[r], g.first, g.last)));
  const groups: Array<{ first: number; last: number }> = [];
  for (const run of runs) {
    const cur = groups[groups.length - 1];
    if (!cur) {
      groups.push({ ...run });
      continue;
    }
    const gap = run.first - cur.last - 1;
    const a = rowsOf(cur);
    const b = rowsOf(run);
    let shared = 0;
    for (const r of b) if (a.has(r)) shared++;
    const jaccard = shared / (a.size + b.size - shared);
    if (gap >= 2 || jaccard < 0.5) groups.push({ ...run });
    else cur.last = run.last;
  }
  return groups;
}

/**
 * Columns of a block minus those that only repeat their left neighbour through the same merged
 * range (a title merged across A:E reads once, not five times) and minus all-empty spacer columns.
 */
function keptColumns(grid: Cell[][], mergeIds: Map<number, number>[], rows: number[], first: number, last: number): number[] {
  const keep: number[] = [];
  for (let c = first; c <= last; c++) {
    let empty = true;
    let redundant = c > first;
    for (const r of rows) {
      const v = grid[r]?.[c];
      if (!isEmptyCell(v)) empty = false;
      if (redundant) {
        const id = mergeIds[r]?.get(c);
        const sameMerge = id !== undefined && mergeIds[r]?.get(c - 1) === id;
        const bothEmpty = isEmptyCell(v) && isEmptyCell(grid[r]?.[c - 1]);
        if (!sameMerge && !bothEmpty) redundant = false;
      }
    }
    if (!empty && !redundant) keep.push(c);
  }
  return keep;
}

/**
 * A lower band continues the block above when it sits in the same columns and its first full row
 * has the same kinds of values (numbers under numbers, text under text) as the rows above: a long
 * list with gaps, not a new table with its own header.
 */
function isContinuation(prev: Block, next: Block): boolean {
  if (next.firstCol !== prev.firstCol || next.lastCol !== prev.lastCol) return false;
  if (prev.grid.length < 2 || next.grid[0].length !== prev.grid[0].length) return false;
  const sample = next.grid.find((row) => row.filter((v) => !isEmptyCell(v)).length >= Math.ceil(row.length / 2)) ?? next.grid[0];
  const above = prev.grid[prev.grid.length - 1];
  let compared = 0;
  let same = 0;
  sample.forEach((v, c) => {
    const u = above[c];
    if (isEmptyCell(v) || isEmptyCell(u)) return;
    compared++;
    if (kindOf(v) === kindOf(u)) same++;
  });
  return compared > 0 && same / compared >= 0.8;
}

function kindOf(v: Cell): string {
  if (typeof v === 'number') return 'n';
  return typeof v;
}

function rowsNote(table: AnalyzedTable): string {
  const n = table.rows.length;
  const shown = Math.min(n, CONTENT_MAX_ROWS);
  const cols = table.headers.length;
  return n > shown
    ? `_${n} rows × ${cols} ${cols === 1 ? 'column' : 'columns'}; showing the first ${shown}._`
    : `_${n} ${n === 1 ? 'row' : 'rows'} × ${cols} ${cols === 1 ? 'column' : 'columns'}._`;
}

function columnLetter(c: number): string {
  let s = '';
  for (let n = c + 1; n > 0; n = Math.floor((n - 1) / 26)) s = String.fromCharCode(65 + ((n - 1) % 26)) + s;
  return s;
}

function toExtractedTable(sheet: string, table: AnalyzedTable, block: Block, index: number, count: number, kind: string): SheetTable {
  const lastRow = table.rowNumbers.length ? table.rowNumbers[table.rowNumbers.length - 1] : (table.headerRow ?? 1);
  const range = `${columnLetter(block.firstCol)}${table.headerRow ?? 1}:${columnLetter(block.lastCol)}${lastRow}`;
  return {
    content: renderBoundedTable(table.headers, table.rows),
    table_type: 'spreadsheet',
    location: count > 1 ? `sheet:${sheet}!${range}` : `sheet:${sheet}`,
    metadata: {
      sheet,
      format: kind,
      rows: table.rows.length,
      columns: table.headers.length,
      headers: table.headers,
      header_row: table.headerRow,
      range,
      table_index: index + 1,
      column_types: table.columnTypes,
      column_density: table.columnDensity,
      density: table.density,
      ...(table.preamble.length ? { title: table.preamble.join(' ').slice(0, 300) } : {}),
    },
    headers: table.headers,
    rows: table.rows,
    row_numbers: table.rowNumbers,
    sheet,
  };
}

