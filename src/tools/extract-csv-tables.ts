/** extract_csv_tables: a CSV/TSV file as a table, with delimiter and encoding detected. */
import { defineTool } from './define-tool.ts';
import { SAMPLE_URLS, withOfflineTwins } from './examples.ts';
import { TablesInput, TablesOutput } from './extract-xlsx-tables.ts';
import { sourceFrom, wireTables } from './tool-output.ts';

export const extractCsvTablesTool = defineTool({
  name: 'extract_csv_tables',
  title: 'Extract the table from a CSV file',
  description:
    'Return a CSV or TSV file as a table with all its rows (headers, rows; a Markdown preview of the first 20 rows), the ' +
    'detected delimiter (, ; tab |), encoding (UTF-8, UTF-16, Shift-JIS, Latin-1), header row, column types and row count. ' +
    'Big files are paged: call again with next_table_offset and next_row_offset.',
  group: 'extraction',
  input: TablesInput,
  output: TablesOutput,
  timeoutClass: 'extraction',
  rest: { method: 'POST', path: '/v1/extract/csv' },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  access: { action: 'search', what: 'read documents' },
  examples: withOfflineTwins([{ name: 'semicolons', summary: 'A semicolon-delimited CSV file as a Markdown table', value: { document_url: SAMPLE_URLS.csv } }]),
  upload: { urlField: 'document_url' },
  formats: ['csv'],
  async handler(input, ctx) {
    const { doc, source } = await ctx.services.documents.load(sourceFrom(input.document_url, ctx), ctx, { expect: ['csv'] });
    const tables = wireTables(doc.tables, input.table_offset, input.row_offset);
    return {
      tables: tables.tables,
      table_count: doc.tables.length,
      next_table_offset: tables.next_table_offset,
      next_row_offset: tables.next_row_offset,
      source,
      metadata: doc.metadata,
    };
  },
});
