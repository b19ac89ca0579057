/** extract_csv_tables: a CSV/TSV file as a table, with delimiter and encoding detected. */
import Type from 'typebox';
import { defineTool } from './define-tool.ts';
import { SAMPLE_URLS } from './examples.ts';
import { DocumentUrl } from './schemas/documents.ts';
import { TablesOutput } from './extract-xlsx-tables.ts';
import { MAX_LISTED_TABLES, sourceFrom, wireTable } from './tool-output.ts';

const Input = Type.Object({ document_url: DocumentUrl }, { additionalProperties: false });

export const extractCsvTablesTool = defineTool({
  name: 'extract_csv_tables',
  title: 'Extract the table from a CSV file',
  description:
    'Return a CSV or TSV file as a Markdown table (first 20 rows) with the detected delimiter (, ; tab |), encoding ' +
    '(UTF-8, UTF-16, Shift-JIS, Latin-1), header row, column types and row count. Use query_spreadsheet to search all rows.',
  group: 'extraction',
  input: Input,
  output: TablesOutput,
  timeoutClass: 'extraction',
  rest: { method: 'POST', path: '/v1/extract/csv' },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  examples: [{ name: 'semicolons', summary: 'A semicolon-delimited CSV file as a Markdown table', value: { document_url: SAMPLE_URLS.csv } }],
  upload: { urlField: 'document_url' },
  formats: ['csv'],
  async handler(input, ctx) {
    const { doc, source } = await ctx.services.documents.load(sourceFrom(input.document_url, ctx), ctx, { expect: ['csv'] });
    return {
      tables: doc.tables.slice(0, MAX_LISTED_TABLES).map(wireTable),
      table_count: doc.tables.length,
      source,
      metadata: doc.metadata,
    };
  },
});
