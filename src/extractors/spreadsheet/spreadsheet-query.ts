/**
 * query_spreadsheet's search: a case-insensitive substring match over every cell of every table that
 * carries full rows (XLSX, XLS, CSV), returning rows as objects keyed by the detected headers.
 */
import { toolError } from '../../errors.ts';
import { cellText } from '../shared/table-pipeline.ts';
import type { ExtractedTable, ProcessedDocument } from '../shared/types.ts';

export const DEFAULT_QUERY_LIMIT = 100;
export const MAX_QUERY_LIMIT = 10_000;

export interface SpreadsheetMatch {
  sheet: string;
  /** The row's number in the source: the Excel row, or the CSV line the record starts on. */
  row_number: number;
  row: Record<string, unknown>;
}

export interface SpreadsheetQueryResult {
  matches: SpreadsheetMatch[];
  /** Every match, also those past `limit`. */
  match_count: number;
  sheets_searched: string[];
}

type RowTable = ExtractedTable & { headers: string[]; rows: NonNullable<ExtractedTable['rows']>; row_numbers?: number[] };

export function querySpreadsheet(
  doc: ProcessedDocument,
  value: string,
  opts: { column?: string; limit?: number } = {},
): SpreadsheetQueryResult {
  const needle = value.trim().toLowerCase();
  if (needle === '') throw toolError('VALIDATION_ERROR', 'search_value must not be empty');
  const limit = opts.limit ?? DEFAULT_QUERY_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_QUERY_LIMIT) {
    throw toolError('VALIDATION_ERROR', `limit must be an integer from 1 to ${MAX_QUERY_LIMIT}`);
  }

  const tables = doc.tables.filter((t): t is RowTable => Array.isArray(t.rows) && Array.isArray(t.headers));
  const wanted = opts.column?.trim().toLowerCase();
  let searched = tables;
  if (wanted) {
    searched = tables.filter((t) => t.headers.some((h) => h.toLowerCase() === wanted));
    if (searched.length === 0) {
      const available = [...new Set(tables.flatMap((t) => t.headers))];
      const list = available.length > 50 ? `${available.slice(0, 50).join(', ')}, … (${available.length} in all)` : available.join(', ');
      throw toolError(
        'VALIDATION_ERROR',
        available.length
          ? `Unknown column "${opts.column}". Available columns: ${list}`
          : `Unknown column "${opts.column}": the document has no table columns`,
      );
    }
  }

  const matches: SpreadsheetMatch[] = [];
  let count = 0;
  const sheets: string[] = [];
  for (const t of searched) {
    const sheet = sheetName(t);
    if (!sheets.includes(sheet)) sheets.push(sheet);
    const cols = wanted ? t.headers.flatMap((h, i) => (h.toLowerCase() === wanted ? [i] : [])) : t.headers.map((_, i) => i);
    const headerRow = typeof t.metadata.header_row === 'number' ? t.metadata.header_row : 1;
    t.rows.forEach((row, i) => {
      if (!cols.some((c) => cellText(row[c] ?? null).toLowerCase().includes(needle))) return;
      count++;
      if (matches.length >= limit) return;
      const obj: Record<string, unknown> = {};
      t.headers.forEach((h, c) => {
        obj[h] = row[c] ?? null;
      });
      matches.push({ sheet, row_number: t.row_numbers?.[i] ?? headerRow + 1 + i, row: obj });
    });
  }
  return { matches, match_count: count, sheets_searched: sheets };
}

function sheetName(t: ExtractedTable): string {
  if (t.sheet) return t.sheet;
  if (typeof t.metadata.sheet === 'string') return t.metadata.sheet;
  return t.location.replace(/^sheet:/, '');
}
