/**
 * What the document tools send over the wire: a page of content (offset and the caller's budget,
 * default 50,000 characters, with next_offset), table renderings clipped to 5,000, and every row of
 * every table, paged by a per-answer budget of row data. Every cut says so (`truncated`, the
 * next offsets) together with the full length or count.
 */
import type { Static } from 'typebox';
import { toolError } from '../errors.ts';
import type { ExtractedTable, ExtractedUrl } from '../extractors/shared/types.ts';
import type { DocumentSource } from '../call-context.ts';
import type { ToolContext } from './define-tool.ts';
import { MAX_CONTENT_CHARS, MAX_LISTED_TABLES, MAX_TABLE_CHARS, MAX_TABLE_ROW_CHARS, type TableItem } from './schemas/documents.ts';

/** Images listed per response; image_count reports the full number. */
export const MAX_LISTED_IMAGES = 100;
export { MAX_LISTED_TABLES };

export interface Clipped {
  text: string;
  truncated: boolean;
  /** Length of the full text, in UTF-16 code units (JavaScript string length). */
  length: number;
}

/** Cuts at `max` characters without splitting a surrogate pair. */
export function clipText(text: string, max: number): Clipped {
  if (text.length <= max) return { text, truncated: false, length: text.length };
  let end = Math.max(0, max);
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end--;
  return { text: text.slice(0, end), truncated: true, length: text.length };
}

export interface TextPage {
  text: string;
  /** Offset of text[0] in the full text. */
  offset: number;
  /** Where the next page starts; null when this one reaches the end. */
  next_offset: number | null;
  truncated: boolean;
  /** Length of the full text. */
  length: number;
}

const isHigh = (code: number): boolean => code >= 0xd800 && code <= 0xdbff;
const isLow = (code: number): boolean => code >= 0xdc00 && code <= 0xdfff;

/**
 * One page of `text`: at most `max` characters from `offset`. The cut is exact (max_chars means
 * what it says; pages concatenated give back the text) except that a surrogate pair is never
 * split: an end inside one moves before it, an offset inside one moves back to its start.
 */
export function pageText(text: string, offset: number | undefined, max: number): TextPage {
  let start = Math.min(Math.max(0, offset ?? 0), text.length);
  if (start > 0 && start < text.length && isLow(text.charCodeAt(start)) && isHigh(text.charCodeAt(start - 1))) start--;
  let end = Math.min(text.length, start + Math.max(1, max));
  // A page of one character that would end inside a pair takes the whole pair (else no progress).
  if (end < text.length && isHigh(text.charCodeAt(end - 1))) end += end > start + 1 ? -1 : 1;
  const more = end < text.length;
  return { text: text.slice(start, end), offset: start, next_offset: more ? end : null, truncated: more, length: text.length };
}

export function contentBudget(maxChars: number | undefined): number {
  return Math.min(MAX_CONTENT_CHARS, maxChars ?? MAX_CONTENT_CHARS);
}

export type WireTable = Static<typeof TableItem>;

export function wireTable(table: ExtractedTable): WireTable {
  const c = clipText(table.content ?? '', MAX_TABLE_CHARS);
  return {
    content: c.text,
    table_type: table.table_type,
    location: table.location,
    metadata: table.metadata ?? {},
    ...(c.truncated ? { truncated: true, content_length: c.length } : {}),
  };
}

export interface WireTables {
  tables: WireTable[];
  next_table_offset: number | null;
  next_row_offset: number | null;
}

/**
 * Tables from `tableOffset` (at most MAX_LISTED_TABLES), each with its rows, the first one from
 * `rowOffset`, until the answer holds MAX_TABLE_ROW_CHARS of row data; later tables are still
 * listed (content, metadata, row_count) with no rows. The next offsets point at the first row not
 * sent, so a caller that follows them reads every row exactly once.
 */
export function wireTables(all: readonly ExtractedTable[], tableOffset = 0, rowOffset = 0, budget = MAX_TABLE_ROW_CHARS): WireTables {
  const from = Math.min(Math.max(0, tableOffset), all.length);
  const listed = all.slice(from, from + MAX_LISTED_TABLES);
  let left = budget;
  let sentAny = false;
  let next: { table: number; row: number } | null = null;
  const tables = listed.map((table, i) => {
    const w = wireTable(table);
    if (!table.rows) return w;
    const rows = table.rows;
    const start = i === 0 ? Math.min(Math.max(0, rowOffset), rows.length) : 0;
    let end = start;
    if (next === null) {
      for (; end < rows.length; end++) {
        const cost = JSON.stringify(rows[end]).length + 1;
        // One row always goes out (even one over the budget), so paging always moves on.
        if (cost > left && sentAny) break;
        left -= cost;
        sentAny = true;
      }
      if (end < rows.length) next = { table: from + i, row: end };
    }
    return {
      ...w,
      headers: table.headers ?? [],
      rows: rows.slice(start, end),
      row_count: rows.length,
      row_offset: start,
      ...(end < rows.length ? { truncated: true } : {}),
    };
  });
  if (next === null && from + listed.length < all.length) next = { table: from + listed.length, row: 0 };
  return { tables, next_table_offset: next?.table ?? null, next_row_offset: next?.row ?? null };
}

export function wireUrl(u: ExtractedUrl): ExtractedUrl {
  return { url: u.url, type: u.type, context: u.context, ...(u.location ? { location: u.location } : {}) };
}

/** The document a tool call names: the upload when there is one, else the URL field. */
export function sourceFrom(url: string | undefined, ctx: Pick<ToolContext, 'upload'>): DocumentSource {
  if (ctx.upload) return { upload: ctx.upload };
  if (typeof url === 'string' && url.trim() !== '') return { url };
  throw toolError('VALIDATION_ERROR', 'Give a document URL or upload the file');
}
