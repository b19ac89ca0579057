/** query_spreadsheet: rows of an XLSX, XLS or CSV file containing a value (case-insensitive). */
import Type from 'typebox';
import { defineTool } from './define-tool.ts';
import { SAMPLE_URLS, SAMPLE_XLSX_UUID, withOfflineTwins } from './examples.ts';
import { DocumentUrl } from './schemas/documents.ts';
import { sourceFrom } from './tool-output.ts';
import { DEFAULT_QUERY_LIMIT, MAX_QUERY_LIMIT, querySpreadsheet } from '../extractors/spreadsheet/spreadsheet-query.ts';

const Input = Type.Object(
  {
    document_url: DocumentUrl,
    search_value: Type.String({ minLength: 1, maxLength: 1000, description: 'Text to find in cells (case-insensitive substring)' }),
    column: Type.Optional(Type.String({ minLength: 1, maxLength: 500, description: 'Only search this column (header name, case-insensitive)' })),
    limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: MAX_QUERY_LIMIT, default: DEFAULT_QUERY_LIMIT, description: `Most rows to return (default ${DEFAULT_QUERY_LIMIT})` }),
    ),
  },
  { additionalProperties: false },
);

const Output = Type.Object(
  {
    matches: Type.Array(
      Type.Object(
        {
          sheet: Type.String(),
          row_number: Type.Integer({ minimum: 1, description: 'Row in the sheet (Excel row, or CSV line)' }),
          row: Type.Object({}, { additionalProperties: true, description: 'The row keyed by the detected header' }),
        },
        { additionalProperties: false },
      ),
    ),
    match_count: Type.Integer({ minimum: 0, description: 'All matching rows, also those past limit' }),
    truncated: Type.Boolean({ description: 'True when match_count exceeds the rows returned' }),
    sheets_searched: Type.Array(Type.String()),
    document_type: Type.String(),
    source: Type.String({ description: 'The URL, or "upload:" and the file name' }),
  },
  { additionalProperties: false },
);

export const querySpreadsheetTool = defineTool({
  name: 'query_spreadsheet',
  title: 'Search the rows of a spreadsheet',
  description:
    'Find the rows of an XLSX, XLS or CSV file where any cell (or the given column) contains search_value, case-insensitive. ' +
    'Searches every row of every sheet, not only the preview; returns rows as objects keyed by the detected header, ' +
    'with sheet and row number, the total match count and the sheets searched.',
  group: 'documents',
  input: Input,
  output: Output,
  timeoutClass: 'document',
  rest: { method: 'POST', path: '/v1/spreadsheets/query' },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  access: { action: 'search', what: 'search documents' },
  examples: withOfflineTwins([
    {
      name: 'xlsx_column',
      summary: 'Find the row whose Beta column contains a UUID prefix',
      value: { document_url: SAMPLE_URLS.xlsx, search_value: SAMPLE_XLSX_UUID.slice(0, 8), column: 'Beta', limit: 10 },
    },
  ]),
  upload: { urlField: 'document_url' },
  formats: ['xlsx', 'xls', 'csv'],
  async handler(input, ctx) {
    const { doc, source } = await ctx.services.documents.load(sourceFrom(input.document_url, ctx), ctx, { expect: ['xlsx', 'xls', 'csv'] });
    const result = querySpreadsheet(doc, input.search_value, {
      ...(input.column !== undefined ? { column: input.column } : {}),
      limit: input.limit ?? DEFAULT_QUERY_LIMIT,
    });
    return {
      matches: result.matches,
      match_count: result.match_count,
      truncated: result.match_count > result.matches.length,
      sheets_searched: result.sheets_searched,
      document_type: doc.kind,
      source,
    };
  },
});
