/** extract_pptx_text: the text of a presentation, slide by slide, with speaker notes. */
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
    slide_count: Type.Integer({ minimum: 0 }),
  },
  { additionalProperties: false },
);

export const extractPptxTextTool = defineTool({
  name: 'extract_pptx_text',
  title: 'Extract text from a PowerPoint presentation',
  description:
    'Return the text of a PPTX file in presentation order with "--- Slide N ---" markers: titles, bullets with ' +
    'indentation, tables as pipe tables and speaker notes. Other file kinds are refused.',
  group: 'extraction',
  input: Input,
  output: Output,
  timeoutClass: 'extraction',
  rest: { method: 'POST', path: '/v1/extract/pptx' },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  access: { action: 'search', what: 'read documents' },
  examples: withOfflineTwins([
    {
      name: 'pptx',
      summary: 'The text of a six-slide deck, slide by slide',
      value: { document_url: SAMPLE_URLS.pptx, max_chars: 20_000 },
    },
  ]),
  upload: { urlField: 'document_url' },
  formats: ['pptx'],
  async handler(input, ctx) {
    const { result, doc } = await extractTextResult(input, ctx, ['pptx']);
    const slides = Number(doc.metadata.slide_count);
    return {
      ...result,
      slide_count: Number.isInteger(slides) && slides >= 0 ? slides : doc.pages.filter((p) => p.unit === 'slide').length,
    };
  },
});
