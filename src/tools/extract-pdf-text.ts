/** extract_pdf_text: the text of a PDF, page by page, with OCR for scanned pages. */
import Type from 'typebox';
import { defineTool } from './define-tool.ts';
import { SAMPLE_URLS, withOfflineTwins } from './examples.ts';
import { DocumentUrl, MaxChars, OcrFields, TextOffset, TextResultFields } from './schemas/documents.ts';
import { extractTextResult } from './text-result.ts';

const Input = Type.Object(
  { document_url: DocumentUrl, max_chars: Type.Optional(MaxChars), offset: Type.Optional(TextOffset), ...OcrFields },
  { additionalProperties: false },
);

const Output = Type.Object(
  {
    ...TextResultFields,
    page_count: Type.Integer({ minimum: 0 }),
    ocr_pages: Type.Array(Type.Integer({ minimum: 1 }), { description: 'Pages read with OCR (no usable text layer)' }),
  },
  { additionalProperties: false },
);

export const extractPdfTextTool = defineTool({
  name: 'extract_pdf_text',
  title: 'Extract text from a PDF',
  description:
    'Return the text of a PDF in reading order with "--- Page N ---" markers, plus title, author and page count. ' +
    'Pages without a text layer (scans) are read with OCR and listed in ocr_pages. Other file kinds are refused.',
  group: 'extraction',
  input: Input,
  output: Output,
  timeoutClass: 'extraction',
  rest: { method: 'POST', path: '/v1/extract/pdf' },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  access: { action: 'search', what: 'read documents' },
  examples: withOfflineTwins([
    {
      name: 'invoice',
      summary: 'The text of a three-page invoice, with page markers',
      value: { document_url: SAMPLE_URLS.invoicePdf, max_chars: 20_000 },
    },
  ]),
  upload: { urlField: 'document_url' },
  formats: ['pdf'],
  async handler(input, ctx) {
    const { result, doc } = await extractTextResult(input, ctx, ['pdf']);
    const pageCount = Number(doc.metadata.page_count);
    const ocrPages = doc.metadata.ocr_pages;
    return {
      ...result,
      page_count: Number.isInteger(pageCount) && pageCount >= 0 ? pageCount : doc.pages.filter((p) => p.unit === 'page').length,
      ocr_pages: Array.isArray(ocrPages) ? ocrPages.filter((n): n is number => Number.isInteger(n) && n >= 1) : [],
    };
  },
});
