/**
 * What the document tools send over the wire: content clipped to the caller's budget (default
 * 50,000 characters), table renderings clipped to 5,000, and nothing of the internal row data.
 * Every clip says so (`truncated`) together with the full length.
 */
import type { Static } from 'typebox';
import { toolError } from '../errors.ts';
import type { ExtractedTable, ExtractedUrl } from '../extractors/types.ts';
import type { DocumentSource } from '../call-context.ts';
import type { ToolContext } from './define-tool.ts';
import { MAX_CONTENT_CHARS, MAX_TABLE_CHARS, type TableItem } from './schemas/documents.ts';

/** Tables and images listed per response; counts report the full number. */
export const MAX_LISTED_TABLES = 100;
export const MAX_LISTED_IMAGES = 100;

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

export function wireUrl(u: ExtractedUrl): ExtractedUrl {
  return { url: u.url, type: u.type, context: u.context, ...(u.location ? { location: u.location } : {}) };
}

/** The document a tool call names: the upload when there is one, else the URL field. */
export function sourceFrom(url: string | undefined, ctx: Pick<ToolContext, 'upload'>): DocumentSource {
  if (ctx.upload) return { upload: ctx.upload };
  if (typeof url === 'string' && url.trim() !== '') return { url };
  throw toolError('VALIDATION_ERROR', 'Give a document URL or upload the file');
}
