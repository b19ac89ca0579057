/** extract_image_text: OCR of one image, with per-word confidence. */
import Type from 'typebox';
import { defineTool } from './define-tool.ts';
import { SAMPLE_URLS, withOfflineTwins } from './examples.ts';
import { ImageUrl, LanguageFields, MaxChars, Metadata, OcrFields, ocrRequestOf, TextOffset, TextPageFields } from './schemas/documents.ts';
import { contentBudget, pageText, sourceFrom } from './tool-output.ts';

/** Words listed per result; word_count in metadata reports them all. */
export const MAX_LISTED_WORDS = 5_000;

const Input = Type.Object(
  { image_url: ImageUrl, max_chars: Type.Optional(MaxChars), offset: Type.Optional(TextOffset), ...OcrFields },
  { additionalProperties: false },
);

const Word = Type.Object({ text: Type.String(), confidence: Type.Number({ minimum: 0, maximum: 100 }) }, { additionalProperties: false });

const Output = Type.Object(
  {
    ocr_results: Type.Array(
      Type.Object(
        {
          text: Type.String({ description: 'Recognised text from offset, at most max_chars (default 50,000) characters' }),
          confidence: Type.Number({ minimum: 0, maximum: 100, description: 'Mean word confidence, 0-100' }),
          metadata: Metadata,
          words: Type.Array(Word, { description: 'Recognised words with confidence > 0 (at most 5,000 listed)' }),
        },
        { additionalProperties: false },
      ),
    ),
    char_count: Type.Integer({ minimum: 0, description: 'Length of the full recognised text' }),
    truncated: Type.Boolean({ description: 'True when text does not reach the end (next_offset says where to go on)' }),
    ...TextPageFields,
    source: Type.String({ description: 'The URL, or "upload:" and the file name' }),
    ...LanguageFields,
  },
  { additionalProperties: false },
);

export const extractImageTextTool = defineTool({
  name: 'extract_image_text',
  title: 'Read the text in an image (OCR)',
  description:
    'Run OCR (Tesseract, English) on a PNG, JPEG, GIF, TIFF, WebP or BMP image and return the text with its mean ' +
    'confidence and every word with its own confidence. Other file kinds are refused.',
  group: 'extraction',
  input: Input,
  output: Output,
  timeoutClass: 'extraction',
  rest: { method: 'POST', path: '/v1/extract/image' },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  access: { action: 'search', what: 'read documents' },
  examples: withOfflineTwins([
    {
      name: 'photo',
      summary: 'OCR of a photographed paper page (JPEG)',
      value: { image_url: SAMPLE_URLS.image, max_chars: 20_000 },
    },
  ]),
  upload: { urlField: 'image_url' },
  formats: ['image'],
  async handler(input, ctx) {
    const ocr = ocrRequestOf(input);
    const { doc, source } = await ctx.services.documents.load(sourceFrom(input.image_url, ctx), ctx, { expect: ['image'], ...(ocr ? { ocr } : {}) });
    const text = pageText(doc.ocr?.text ?? doc.content, input.offset, contentBudget(input.max_chars));
    const words = (doc.ocr?.words ?? []).filter((w) => w.confidence > 0);
    return {
      ocr_results: [
        {
          text: text.text,
          confidence: doc.ocr?.confidence ?? 0,
          metadata: { ...doc.metadata, word_count: words.length },
          words: words.slice(0, MAX_LISTED_WORDS).map((w) => ({ text: w.text, confidence: w.confidence })),
        },
      ],
      char_count: text.length,
      truncated: text.truncated,
      offset: text.offset,
      next_offset: text.next_offset,
      source,
      detected_language: doc.detected_language ?? 'unknown',
      detected_language_name: doc.detected_language_name ?? 'Unknown',
    };
  },
});
