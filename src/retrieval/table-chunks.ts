/**
 * Row-complete chunks for spreadsheet documents (xlsx, xls, csv).
 *
 * The content of a spreadsheet shows at most 20 data rows per table, but tables[] carries every
 * row; indexing the content alone would leave row 4,321 of a 5,000-row sheet unfindable. So the
 * chunks of a spreadsheet are built from tables[]: consecutive rows of a table are grouped up to
 * the chunk size, and every chunk repeats the sheet name, the table's title (when it has one) and
 * the header row, so each one reads on its own for BM25 and for an embedder:
 *
 *   ## Sheet: Sales
 *
 *   | Region | Product | Revenue |
 *   | --- | --- | --- |
 *   | North | Widget | 1200 |
 *
 * Row groups do not overlap: a row is a whole record and the repeated header already gives every
 * chunk its context, so overlapping rows would only duplicate hits for a row-level query (and
 * grow the index) without adding meaning.
 *
 * Tables too wide for one row to fit in 2 x the chunk size are cut into column groups; each group
 * after the first repeats the table's first column (usually the row's key) when it is narrow, so
 * every cell of every row still lands in some chunk. Cells are rendered as in the content (ISO
 * dates, numbers as shown, pipes escaped) and clipped at MAX_CELL_CHARS, headers and titles at
 * MAX_LABEL_CHARS: a chunk with a single row stays far below the 5,000-char contract.
 *
 * The text of the content around the tables (title rows, footnotes, "_Empty sheet._") becomes a
 * text piece per sheet, which the chunker splits like any other text.
 */
import type { ExtractedTable, ProcessedDocument } from '../extractors/shared/types.ts';
import { cellText, type Cell } from '../extractors/shared/table-pipeline.ts';
import { escapeCell } from '../extractors/shared/markdown-table.ts';

/** Document kinds whose chunks come from tables[] when the extractor filled rows and headers. */
export const SPREADSHEET_KINDS: ReadonlySet<string> = new Set(['xlsx', 'xls', 'csv']);
/** A cell's text is clipped here (with "…"): one enormous cell cannot swamp a chunk. */
export const MAX_CELL_CHARS = 1000;
/** Header cells, sheet names and table titles are clipped here. */
export const MAX_LABEL_CHARS = 200;

export interface SheetPiece {
  /** 'table': a finished chunk of rows; 'text': sheet text still to be split by size. */
  kind: 'table' | 'text';
  text: string;
  /** Sheet name (the CSV file name for CSV), null when the piece belongs to no sheet. */
  sheet: string | null;
  /** 1-based sheet number from the page map, null when the sheet has no span there. */
  sheetNumber: number | null;
}

interface TablePlan {
  table: ExtractedTable;
  sheet: string | null;
  sheetNumber: number | null;
  /** "## Sheet: X\n\n" plus the title paragraph, when there is one. */
  lead: string;
  headers: string[];
  /** Rendered width of each column's widest data cell. */
  colWidths: number[];
  /** Chars of the full-width rendering of every row (one line each, newlines included). */
  rowChars: number;
}

export interface SpreadsheetPlan {
  /** Pieces in document order: text pieces as they are, tables still to be cut into row groups. */
  items: Array<{ kind: 'text'; piece: SheetPiece } | { kind: 'table'; plan: TablePlan }>;
  /** Length of the whole rendering (every row once): what sets the adaptive chunk size. */
  length: number;
}

/**
 * A plan when the document is a spreadsheet whose tables carry their rows (as the extractors
 * produce them) and whose page map has sheets; null otherwise (the content is chunked as text).
 */
export function planSpreadsheet(doc: ProcessedDocument): SpreadsheetPlan | null {
  if (!SPREADSHEET_KINDS.has(doc.kind)) return null;
  const sheets = (doc.pages ?? []).filter((p) => p.unit === 'sheet').sort((a, b) => a.start - b.start);
  if (sheets.length === 0) return null;
  const tables = doc.tables ?? [];
  if (!tables.every((t) => Array.isArray(t.headers) && Array.isArray(t.rows))) return null;

  const content = doc.content ?? '';
  const items: SpreadsheetPlan['items'] = [];
  let length = 0;
  const placed = new Set<ExtractedTable>();
  const addText = (text: string, sheet: string | null, sheetNumber: number | null) => {
    if (!text.trim()) return;
    items.push({ kind: 'text', piece: { kind: 'text', text, sheet, sheetNumber } });
    length += text.length + 2;
  };
  const addTable = (table: ExtractedTable, sheet: string | null, sheetNumber: number | null) => {
    placed.add(table);
    const plan = planTable(table, sheet, sheetNumber);
    if (plan.headers.length === 0) return;
    items.push({ kind: 'table', plan });
    length += plan.lead.length + headerLine(plan.headers).length + separatorLine(plan.headers.length).length + 2;
    length += plan.rowChars;
  };

  let cursor = 0;
  for (const span of sheets) {
    // Text outside every sheet span (none from our extractors, but a page map may leave gaps).
    if (span.start > cursor) addText(content.slice(cursor, span.start).trim(), null, null);
    cursor = Math.max(cursor, span.end);
    const name = span.label ?? `Sheet ${span.number}`;
    addText(sheetText(content.slice(span.start, span.end), name), name, span.number);
    for (const table of tables) {
      if (!placed.has(table) && sheetOf(table) === name) addTable(table, name, span.number);
    }
  }
  if (cursor < content.length) addText(content.slice(cursor).trim(), null, null);
  for (const table of tables) if (!placed.has(table)) addTable(table, sheetOf(table), null);
  return { items, length };
}

/**
 * The pieces of a plan for a chunk size: row groups of at most `size` chars (a single row may
 * take up to 2 x size, never more than `maxChars`), and the text pieces unchanged.
 */
export function renderSpreadsheet(plan: SpreadsheetPlan, limits: { size: number; maxChars: number }): SheetPiece[] {
  const out: SheetPiece[] = [];
  for (const item of plan.items) {
    if (item.kind === 'text') out.push(item.piece);
    else renderTable(item.plan, limits, out);
  }
  return out;
}

function sheetOf(table: ExtractedTable): string | null {
  if (table.sheet) return table.sheet;
  const meta = table.metadata?.sheet;
  return typeof meta === 'string' ? meta : null;
}

/** A name or title on one line, clipped. */
function label(s: string): string {
  return clip(s.replace(/\s+/g, ' ').trim(), MAX_LABEL_CHARS);
}

function clip(s: string, max: number): string {
  if (s.length <= max) return s;
  let cut = max - 1;
  // Never leave half a surrogate pair.
  if (cut > 0 && s.charCodeAt(cut - 1) >= 0xd800 && s.charCodeAt(cut - 1) <= 0xdbff) cut--;
  return `${s.slice(0, cut)}…`;
}

// Pipes and backslashes need escaping; whitespace other than single plain spaces needs collapsing.
const NEEDS_ESCAPE = /[\\|]|[^\S ]| {2}/;

/** One cell as the content renders it (cellText + pipe escaping), clipped. */
function renderCell(value: Cell | undefined): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number' || typeof value === 'boolean') return cellText(value);
  // Fast path: most cells need neither whitespace collapsing nor escaping.
  const s = NEEDS_ESCAPE.test(value) ? escapeCell(cellText(value)) : value.trim();
  return s.length > MAX_CELL_CHARS ? clip(s, MAX_CELL_CHARS) : s;
}

function headerLine(cells: string[]): string {
  return `| ${cells.join(' | ')} |`;
}

function separatorLine(width: number): string {
  return `|${' --- |'.repeat(width)}`;
}

function planTable(table: ExtractedTable, sheet: string | null, sheetNumber: number | null): TablePlan {
  const rawHeaders = table.headers ?? [];
  const rows = table.rows ?? [];
  let width = rawHeaders.length;
  for (const r of rows) if (r.length > width) width = r.length;
  // The unique header names ("Column 2" for a blank, "Name (2)" for a repeat): in a chunk far
  // from the table's top they are the only name a column has.
  const headers: string[] = [];
  for (let c = 0; c < width; c++) headers.push(clip(escapeCell(rawHeaders[c] ?? `Column ${c + 1}`), MAX_LABEL_CHARS));

  const title = typeof table.metadata?.title === 'string' ? label(table.metadata.title) : '';
  const lead = `${sheet !== null ? `## Sheet: ${label(sheet)}\n\n` : ''}${title ? `${title}\n\n` : ''}`;

  // Widths and total length only: rows are rendered again when cut into chunks, so the whole
  // rendering is never held twice.
  const colWidths = new Array<number>(width).fill(0);
  let rowChars = 0;
  for (const row of rows) {
    let chars = 0;
    for (let c = 0; c < width; c++) {
      const n = renderCell(row[c]).length;
      if (n > colWidths[c]) colWidths[c] = n;
      chars += n;
    }
    if (chars > 0) rowChars += chars + 3 * width + 2;
  }
  return { table, sheet, sheetNumber, lead, headers, colWidths, rowChars };
}

/** Chars of the widest possible single-row chunk over these columns. */
function singleRowCost(plan: TablePlan, cols: number[]): number {
  let headerChars = 0;
  let cellChars = 0;
  for (const c of cols) {
    headerChars += plan.headers[c].length;
    cellChars += plan.colWidths[c];
  }
  const n = cols.length;
  // header line + "\n" + separator + "\n" + row line
  return plan.lead.length + (headerChars + 3 * n + 1) + 1 + (6 * n + 1) + 1 + (cellChars + 3 * n + 1);
}

/** Column groups whose widest row fits `limit`; later groups lead with the key column if it is narrow. */
function columnGroups(plan: TablePlan, limit: number): Array<{ cols: number[]; own: number[] }> {
  const width = plan.headers.length;
  const all = Array.from({ length: width }, (_, c) => c);
  if (width <= 1 || singleRowCost(plan, all) <= limit) return [{ cols: all, own: all }];
  const keyFits = singleRowCost(plan, [0]) <= limit / 4;
  const groups: Array<{ cols: number[]; own: number[] }> = [];
  let c = 0;
  while (c < width) {
    const group = groups.length > 0 && keyFits ? [0] : [];
    const base = group.length;
    while (c < width) {
      group.push(c);
      if (group.length > base + 1 && singleRowCost(plan, group) > limit) {
        group.pop();
        break;
      }
      c++;
    }
    // A single column wider than the limit still gets its own group (its cells are clipped).
    if (group.length === base) {
      group.push(c);
      c++;
    }
    groups.push({ cols: group, own: group.slice(base) });
  }
  return groups;
}

function renderTable(plan: TablePlan, limits: { size: number; maxChars: number }, out: SheetPiece[]): void {
  const { size, maxChars } = limits;
  const groups = columnGroups(plan, Math.min(maxChars, size * 2));
  const rows = plan.table.rows ?? [];
  for (const { cols, own } of groups) {
    const ownSet = new Set(own);
    const head = `${plan.lead}${headerLine(cols.map((c) => plan.headers[c]))}\n${separatorLine(cols.length)}`;
    let text = head;
    let count = 0;
    const flush = (force = false) => {
      if (count === 0 && !force) return;
      out.push({ kind: 'table', text: text.length > maxChars ? clip(text, maxChars) : text, sheet: plan.sheet, sheetNumber: plan.sheetNumber });
      text = head;
      count = 0;
    };
    const cells = new Array<string>(cols.length);
    for (const row of rows) {
      let filled = false;
      for (let i = 0; i < cols.length; i++) {
        cells[i] = renderCell(row[cols[i]]);
        if (cells[i] && ownSet.has(cols[i])) filled = true;
      }
      if (!filled) continue; // a row blank in these columns adds nothing
      const line = headerLine(cells);
      if (count > 0 && text.length + 1 + line.length > size) flush();
      text += `\n${line}`;
      count++;
    }
    // A table without data rows still says what its columns are.
    flush(rows.length === 0);
  }
}

const ROWS_NOTE = /^_(\d+) (rows?) × (\d+) (columns?)(?:; showing the first \d+)?\._$/;
const SHEET_HEADING = /^## Sheet: /;

/**
 * The sheet's text without its tables: title rows, footnotes, "_Empty sheet._". Row-count notes
 * are kept (without "showing the first 20", since every row is indexed) only beside such text; a
 * sheet that is nothing but tables gives no text piece.
 */
export function sheetText(section: string, name: string): string {
  const kept: string[] = [];
  let other = false;
  for (const block of section.split(/\n{2,}/)) {
    const b = block.trim();
    if (!b) continue;
    if (SHEET_HEADING.test(b) && !b.includes('\n')) continue;
    if (isPipeTable(b)) continue;
    const note = ROWS_NOTE.exec(b);
    if (note) {
      kept.push(`_${note[1]} ${note[2]} × ${note[3]} ${note[4]}._`);
      continue;
    }
    kept.push(b);
    other = true;
  }
  return other ? `## Sheet: ${label(name)}\n\n${kept.join('\n\n')}` : '';
}

function isPipeTable(block: string): boolean {
  for (const line of block.split('\n')) {
    const l = line.trim();
    if (!(l.length >= 2 && l.startsWith('|') && l.endsWith('|'))) return false;
  }
  return true;
}

