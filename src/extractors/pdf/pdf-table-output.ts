/**
 * PDF tables (pdf-tables.ts) as ExtractedTable entries: the pipe table as content (both header
 * rows of a two-level header, as in the page text), one header label per column, the data rows.
 */
import { toPipeTable } from '../shared/markdown-table.ts';
import type { PdfTable } from './pdf-tables.ts';
import type { ExtractedTable } from '../shared/types.ts';

/** Tables listed per document at most; the rest still stand as pipe tables in the content. */
export const MAX_PDF_TABLES = 500;
/** Characters of one table's content at most (the tool contract's table content limit). */
export const MAX_TABLE_CONTENT_CHARS = 5000;

/** tablesByPage[i] are the tables of page i + 1. */
export function extractedPdfTables(tablesByPage: PdfTable[][]): ExtractedTable[] {
  const out: ExtractedTable[] = [];
  tablesByPage.forEach((tables, i) => {
    tables.forEach((t, k) => {
      if (out.length >= MAX_PDF_TABLES) return;
      const data = t.rows.slice(t.headerRows);
      out.push({
        content: toPipeTable(t.rows, { maxChars: MAX_TABLE_CONTENT_CHARS }),
        table_type: 'pdf',
        location: `page:${i + 1}`,
        metadata: {
          page: i + 1,
          index_on_page: k + 1,
          rows: data.length,
          columns: t.headers.length,
          header_rows: t.headerRows,
          detection: t.detection,
          has_header: true,
        },
        headers: t.headers,
        rows: data,
      });
    });
  });
  return out;
}
