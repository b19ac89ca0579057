/** extract_xlsx_tables: every sheet of an Excel workbook (XLSX or legacy XLS) as a table. */
import Type from 'typebox';
import { defineTool } from './define-tool.ts';
import { SAMPLE_URLS, withOfflineTwins } from './examples.ts';
import { DocumentUrl, Metadata, RowOffset, TableItem, TableOffset, TablePageFields } from './schemas/documents.ts';
import { sourceFrom, wireTables } from './tool-output.ts';

export const TablesInput = Type.Object(
  { document_url: DocumentUrl, table_offset: Type.Optional(TableOffset), row_offset: Type.Optional(RowOffset) },
  { additionalProperties: false },
);

export const TablesOutput = Type.Object(
  {
    tables: Type.Array(TableItem, {
      description: 'One entry per table from table_offset (at most 100 listed), with every row (paged: see next_table_offset); content shows at most 20 rows',
    }),
    table_count: Type.Integer({ minimum: 0, description: 'Number of tables in the whole file' }),
    ...TablePageFields,
    source: Type.String({ description: 'The URL, or "upload:" and the file name' }),
    metadata: Metadata,
  },
  { additionalProperties: false },
);

export const extractXlsxTablesTool = defineTool({
  name: 'extract_xlsx_tables',
  title: 'Extract tables from an Excel workbook',
  description:
    'Return every table of an XLSX or legacy XLS workbook with all its rows (headers, rows; a Markdown preview of the first ' +
    '20 rows) and the detected header row, column types and density, row and column counts, and columns shared across sheets. ' +
    'Merged cells are spread, formulas show their cached values, dates are ISO 8601; charts are described in metadata.charts. ' +
    'Big workbooks are paged: call again with next_table_offset and next_row_offset. Other file kinds are refused.',
  group: 'extraction',
  input: TablesInput,
  output: TablesOutput,
  timeoutClass: 'extraction',
  rest: { method: 'POST', path: '/v1/extract/xlsx' },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  access: { action: 'search', what: 'read documents' },
  examples: withOfflineTwins([{ name: 'xlsx', summary: 'The two sheets of a workbook as Markdown tables', value: { document_url: SAMPLE_URLS.xlsx } }]),
  upload: { urlField: 'document_url' },
  formats: ['xlsx', 'xls'],
  async handler(input, ctx) {
    const { doc, source } = await ctx.services.documents.load(sourceFrom(input.document_url, ctx), ctx, { expect: ['xlsx', 'xls'] });
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
