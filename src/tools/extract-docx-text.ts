/** extract_docx_text: the text of a Word document as Markdown (headings, lists, tables). */
import Type from 'typebox';
import { defineTool } from './define-tool.ts';
import { SAMPLE_URLS, withOfflineTwins } from './examples.ts';
import { DocumentUrl, MaxChars, TextOffset, TextResultFields } from './schemas/documents.ts';
import { extractTextResult } from './text-result.ts';

const Input = Type.Object(
  { document_url: DocumentUrl, max_chars: Type.Optional(MaxChars), offset: Type.Optional(TextOffset) },
  { additionalProperties: false },
);

const Output = Type.Object(
  {
    ...TextResultFields,
    table_count: Type.Integer({ minimum: 0 }),
  },
  { additionalProperties: false },
);

export const extractDocxTextTool = defineTool({
  name: 'extract_docx_text',
  title: 'Extract text from a Word document',
  description:
    'Return the text of a DOCX file as Markdown: headings as #, lists, tables as pipe tables, footnotes; ' +
    'with title, author and counts in metadata. Other file kinds are refused.',
  group: 'extraction',
  input: Input,
  output: Output,
  timeoutClass: 'extraction',
  rest: { method: 'POST', path: '/v1/extract/docx' },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  access: { action: 'search', what: 'read documents' },
  examples: withOfflineTwins([
    {
      name: 'docx',
      summary: 'The text of a Word document, headings and tables as Markdown',
      value: { document_url: SAMPLE_URLS.docx, max_chars: 20_000 },
    },
  ]),
  upload: { urlField: 'document_url' },
  formats: ['docx'],
  async handler(input, ctx) {
    const { result, doc } = await extractTextResult(input, ctx, ['docx']);
    return { ...result, table_count: doc.tables.length };
  },
});
