/** extract_xlsx_tables: every sheet of an Excel workbook (XLSX or legacy XLS) as a table. */
import Type from 'typebox';
import { defineTool } from './define-tool.ts';
import { SAMPLE_URLS } from './examples.ts';
import { DocumentUrl, Metadata, TableItem } from './schemas/documents.ts';
import { MAX_LISTED_TABLES, sourceFrom, wireTable } from './tool-output.ts';

const Input = Type.Object({ document_url: DocumentUrl }, { additionalProperties: false });

export const TablesOutput = Type.Object(
  {
    tables: Type.Array(TableItem, { description: 'One entry per table (at most 100 listed); content shows at most 20 rows' }),
    table_count: Type.Integer({ minimum: 0 }),
    source: Type.String({ description: 'The URL, or "upload:" and the file name' }),
    metadata: Metadata,
  },
  { additionalProperties: false },
);

export const extractXlsxTablesTool = defineTool({
  name: 'extract_xlsx_tables',
  title: 'Extract tables from an Excel workbook',
  description:
    'Return every sheet of an XLSX or legacy XLS workbook as a Markdown table (first 20 rows) with the detected header row, ' +
    'column types and density, row and column counts, and columns shared across sheets. Merged cells are spread, formulas ' +
    'show their cached values, dates are ISO 8601. Use query_spreadsheet to search all rows. Other file kinds are refused.',
  group: 'extraction',
  input: Input,
  output: TablesOutput,
  timeoutClass: 'extraction',
  rest: { method: 'POST', path: '/v1/extract/xlsx' },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  examples: [{ name: 'xlsx', summary: 'The two sheets of a workbook as Markdown tables', value: { document_url: SAMPLE_URLS.xlsx } }],
  upload: { urlField: 'document_url' },
  formats: ['xlsx', 'xls'],
  async handler(input, ctx) {
    const { doc, source } = await ctx.services.documents.load(sourceFrom(input.document_url, ctx), ctx, { expect: ['xlsx', 'xls'] });
    return {
      tables: doc.tables.slice(0, MAX_LISTED_TABLES).map(wireTable),
      table_count: doc.tables.length,
      source,
      metadata: doc.metadata,
    };
  },
});
