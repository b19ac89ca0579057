/**
 * CSV / TSV -> ProcessedDocument with one table (table_type 'csv').
 *
 * Bytes are decoded by decodeText (BOMs, UTF-16, Shift-JIS, cp1252...), the delimiter is sniffed
 * among , ; tab | by parsing a sample with each (so quoted fields containing other candidates do not
 * mislead it), and the records go through the same table pipeline as spreadsheets: header
 * detection past title lines, column types and density, 20 rows in content, all rows in tables[].
 */
import { toolError } from '../../errors.ts';
import { decodeText } from '../shared/decode-text.ts';
import {
  analyzeTable,
  CONTENT_MAX_ROWS,
  renderBoundedTable,
  renderTable,
  type Cell,
} from '../shared/table-pipeline.ts';
import type { ExtractInput, ProcessedDocument } from '../shared/types.ts';
import type { SheetTable } from '../spreadsheet/spreadsheet.ts';
import { CSV_MAX_FIELD_CHARS, resolveLimits } from '../shared/limits.ts';

/** Cells kept from one file (a bound on memory; the rest is reported as truncated). */
export const MAX_CSV_CELLS = 2_000_000;
/** Characters of text the delimiter sniffer looks at. */
const SNIFF_CHARS = 64 * 1024;
/** Records the sniffer compares. */
const SNIFF_RECORDS = 50;

export const DELIMITERS = [',', ';', '\t', '|'] as const;
export type Delimiter = (typeof DELIMITERS)[number];

export interface ParsedCsv {
  /** Non-empty records (blank lines dropped). */
  records: string[][];
  /** 1-based line on which each record starts. */
  lineNumbers: number[];
  truncated: boolean;
  /** Fields in the widest row as written, when rows were cut to maxColumns (else 0). */
  widestRow: number;
  /** Fields cut to maxFieldChars. */
  truncatedFields: number;
}

/**
 * RFC 4180 parser, lenient the way real files need: quoted fields may hold delimiters, quotes ("")
 * and line breaks; a quote inside an unquoted field is literal; text after a closing quote is kept;
 * CRLF, LF and CR all end a record; rows may have different lengths.
 */
export function parseDelimited(
  text: string,
  delimiter: string,
  opts: { maxCells?: number; maxRecords?: number; maxColumns?: number; maxFieldChars?: number } = {},
): ParsedCsv {
  const maxCells = opts.maxCells ?? MAX_CSV_CELLS;
  const maxRecords = opts.maxRecords ?? Infinity;
  const maxColumns = opts.maxColumns ?? Infinity;
  const maxField = opts.maxFieldChars ?? CSV_MAX_FIELD_CHARS;
  const records: string[][] = [];
  const lineNumbers: number[] = [];
  let cells = 0;
  let line = 1;
  let recordLine = 1;
  let row: string[] = [];
  let field = '';
  let inQuotes = false;
  let fieldStart = true;
  let truncated = false;
  // Fields of the current row past maxColumns are parsed but not kept.
  let rowFields = 0;
  let widestRow = 0;
  let truncatedFields = 0;
  let fieldCut = false;

  const append = (from: number, to: number): void => {
    const room = maxField - field.length;
    if (to - from <= room) field += text.slice(from, to);
    else {
      if (room > 0) field += text.slice(from, from + room);
      fieldCut = true;
    }
  };
  const endField = (): void => {
    rowFields++;
    if (row.length < maxColumns) {
      row.push(field);
      if (fieldCut) truncatedFields++;
    }
    field = '';
    fieldCut = false;
    fieldStart = true;
  };

  const endRecord = (): boolean => {
    endField();
    if (rowFields > maxColumns && rowFields > widestRow) widestRow = rowFields;
    rowFields = 0;
    if (row.some((f) => f.trim() !== '')) {
      records.push(row);
      lineNumbers.push(recordLine);
      cells += row.length;
    }
    row = [];
    if (cells >= maxCells || records.length >= maxRecords) return false;
    return true;
  };

  const n = text.length;
  for (let i = 0; i < n; i++) {
    const ch = text[i];
    if (inQuotes) {
      if (ch === '"') {
        if (text[i + 1] === '"') {
          append(i, i + 1);
          i++;
        } else inQuotes = false;
        continue;
      }
      // The run up to the next quote in one slice: an unterminated quote runs to the end of the
      // file, and per-character appends would build a rope of millions of pieces.
      let j = text.indexOf('"', i);
      if (j < 0) j = n;
      for (let k = i; k < j; k++) {
        const c = text.charCodeAt(k);
        if (c === 10 || (c === 13 && text.charCodeAt(k + 1) !== 10)) line++;
      }
      append(i, j);
      i = j - 1;
      continue;
    }
    if (ch === '"' && fieldStart) {
      inQuotes = true;
      fieldStart = false;
    } else if (ch === delimiter) {
      endField();
    } else if (ch === '\n' || ch === '\r') {
      if (ch === '\r' && text[i + 1] === '\n') i++;
      line++;
      if (!endRecord()) {
        truncated = /\S/.test(text.slice(i + 1, i + 1 + 4096)) || (i + 4097 < n && text.slice(i + 4097).trim() !== '');
        return { records, lineNumbers, truncated, widestRow, truncatedFields };
      }
      recordLine = line;
    } else {
      // Copy the run of ordinary characters in one slice (per-character appends are slow on
      // multi-megabyte files).
      let j = i + 1;
      while (j < n) {
        const c = text[j];
        if (c === delimiter || c === '\n' || c === '\r') break;
        j++;
      }
      append(i, j);
      fieldStart = false;
      i = j - 1;
    }
  }
  if (field !== '' || rowFields > 0) endRecord();
  return { records, lineNumbers, truncated, widestRow, truncatedFields };
}

/**
 * The delimiter whose sample parse gives the most consistent field count (at least 2 fields);
 * ties go to more fields, then to the order , ; tab |. A .tsv name or a tab-separated content type
 * puts tab first. No candidate with 2+ fields -> ',' (one column).
 */
export function sniffDelimiter(text: string, hint?: { filename?: string; contentType?: string }): Delimiter {
  const sample = text.slice(0, SNIFF_CHARS);
  const tabFirst = /\.tsv$|\.tab$/i.test(hint?.filename ?? '') || /tab-separated/i.test(hint?.contentType ?? '');
  const order: Delimiter[] = tabFirst ? ['\t', ',', ';', '|'] : [...DELIMITERS];
  let best: { d: Delimiter; consistency: number; fields: number } | null = null;
  for (const d of order) {
    const { records } = parseDelimited(sample, d, { maxRecords: SNIFF_RECORDS });
    // The last sampled record may be cut by the sample window.
    const counted = records.length > 1 && sample.length < text.length ? records.slice(0, -1) : records;
    if (counted.length === 0) continue;
    const freq = new Map<number, number>();
    for (const r of counted) freq.set(r.length, (freq.get(r.length) ?? 0) + 1);
    let modal = 0;
    let modalCount = 0;
    for (const [len, count] of freq) {
      if (count > modalCount || (count === modalCount && len > modal)) {
        modal = len;
        modalCount = count;
      }
    }
    // Ragged files often have a short header or title line; rows at least as wide as the mode count.
    const wide = Math.max(...counted.map((r) => r.length));
    if (wide < 2) continue;
    const fields = modal >= 2 ? modal : wide;
    const consistency = Math.round((counted.filter((r) => r.length === fields).length / counted.length) * 100) / 100;
    if (!best || consistency > best.consistency || (consistency === best.consistency && fields > best.fields)) {
      best = { d, consistency, fields };
    }
  }
  return best?.d ?? ',';
}

function delimiterName(d: Delimiter): string {
  return d === '\t' ? 'tab' : d === ',' ? 'comma' : d === ';' ? 'semicolon' : 'pipe';
}

export async function extractCsv(input: ExtractInput): Promise<ProcessedDocument> {
  input.signal.throwIfAborted();
  const { text, encoding } = decodeText(input.bytes, { contentType: input.contentType });
  const delimiter = sniffDelimiter(text, { filename: input.filename, contentType: input.contentType });
  const { csvMaxColumns } = resolveLimits(input.limits);
  const parsed = parseDelimited(text, delimiter, { maxColumns: csvMaxColumns });
  if (parsed.records.length === 0) {
    throw toolError('PROCESSING_ERROR', 'The CSV file has no rows (it is empty or blank)');
  }
  input.signal.throwIfAborted();

  // What the decode-size limits cut, said in metadata (flags) and in words (notes).
  const cut: string[] = [];
  const cutFlags: Record<string, unknown> = {};
  if (parsed.widestRow > 0) {
    cut.push(`Rows were cut to the first ${csvMaxColumns} columns (CSV_MAX_COLUMNS); the widest row has ${parsed.widestRow}.`);
    Object.assign(cutFlags, { columns_truncated: true, column_limit: csvMaxColumns, widest_row_columns: parsed.widestRow });
  }
  if (parsed.truncatedFields > 0) {
    cut.push(`${parsed.truncatedFields} ${parsed.truncatedFields === 1 ? 'field was' : 'fields were'} cut to ${CSV_MAX_FIELD_CHARS} characters.`);
    Object.assign(cutFlags, { fields_truncated: parsed.truncatedFields, field_char_limit: CSV_MAX_FIELD_CHARS });
  }

  const name = input.filename ? input.filename.replace(/^.*[\\/]/, '') : 'csv';
  const table = analyzeTable(parsed.records as Cell[][], parsed.lineNumbers);
  const n = table.rows.length;
  const width = table.headers.length;
  const note =
    n > CONTENT_MAX_ROWS
      ? `_${n} rows × ${width} ${width === 1 ? 'column' : 'columns'}; showing the first ${CONTENT_MAX_ROWS}._`
      : `_${n} ${n === 1 ? 'row' : 'rows'} × ${width} ${width === 1 ? 'column' : 'columns'}._`;
  const parts = [
    ...(table.preamble.length ? [table.preamble.join('\n')] : []),
    renderTable(table.displayHeaders, table.rows, CONTENT_MAX_ROWS),
    note,
    ...(table.footnotes.length ? [table.footnotes.join('\n')] : []),
  ];
  const content = parts.join('\n\n');

  const csvTable: SheetTable = {
    content: renderBoundedTable(table.headers, table.rows),
    table_type: 'csv',
    location: `sheet:${name}`,
    metadata: {
      sheet: name,
      format: 'csv',
      rows: n,
      columns: width,
      headers: table.headers,
      header_row: table.headerRow,
      column_types: table.columnTypes,
      column_density: table.columnDensity,
      density: table.density,
      delimiter: delimiterName(delimiter),
      encoding,
      ...(table.preamble.length ? { title: table.preamble.join(' ').slice(0, 300) } : {}),
      ...(parsed.truncated || cut.length ? { truncated: true } : {}),
      ...cutFlags,
    },
    headers: table.headers,
    rows: table.rows,
    row_numbers: table.rowNumbers,
    sheet: name,
  };

  return {
    kind: 'csv',
    content,
    metadata: {
      format: 'csv',
      encoding,
      delimiter: delimiterName(delimiter),
      rows: n,
      columns: width,
      sheet_names: [name],
      table_count: 1,
      total_rows: n,
      ...(parsed.truncated || cut.length
        ? {
            truncated: true,
            notes: [...(parsed.truncated ? [`Only the first ${parsed.records.length} records were read (size limit).`] : []), ...cut],
          }
        : {}),
      ...cutFlags,
    },
    tables: [csvTable],
    images: [],
    urls: [],
    pages: [{ number: 1, unit: 'sheet', label: name, start: 0, end: content.length }],
  };
}
