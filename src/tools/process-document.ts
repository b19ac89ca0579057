/** process_document: any supported document -> content, tables, images, URLs and language. */
import Type from 'typebox';
import { defineTool } from './define-tool.ts';
import { DocumentUrl, LanguageFields, MaxChars, Metadata, TableItem, UrlItem } from './schemas/documents.ts';
import {
  clipText,
  contentBudget,
  MAX_LISTED_IMAGES,
  MAX_LISTED_TABLES,
  sourceFrom,
  wireTable,
  wireUrl,
} from '../documents/tool-output.ts';

const Input = Type.Object(
  {
    document_url: DocumentUrl,
    max_chars: Type.Optional(MaxChars),
  },
  { additionalProperties: false },
);

const Output = Type.Object(
  {
    content: Type.String({ description: 'Extracted content (Markdown-flavoured), at most max_chars (default 50,000) characters' }),
    content_length: Type.Integer({ minimum: 0, description: 'Length of the full content' }),
    truncated: Type.Boolean({ description: 'True when content was cut to max_chars' }),
    document_type: Type.String({ description: 'pdf, docx, pptx, xlsx, xls, csv, image, html or text' }),
    source: Type.String({ description: 'The URL, or "upload:" and the file name' }),
    metadata: Metadata,
    tables: Type.Array(TableItem, { description: 'Tables found (at most 100 listed)' }),
    table_count: Type.Integer({ minimum: 0 }),
    images: Type.Array(Metadata, { description: 'Embedded images found (at most 100 listed)' }),
    image_count: Type.Integer({ minimum: 0 }),
    urls: Type.Array(UrlItem, { description: 'URLs in the document, de-duplicated (at most 500)' }),
    ...LanguageFields,
  },
  { additionalProperties: false },
);

export const processDocumentTool = defineTool({
  name: 'process_document',
  title: 'Process a document',
  description:
    'Download (or accept an upload of) a PDF, Word, PowerPoint, Excel (XLSX/XLS), CSV, HTML, text or image file and return its ' +
    'content as text with page/slide/sheet markers, its tables as Markdown, embedded images, every URL with context, ' +
    'metadata and the detected language. Scanned PDFs and images are read with OCR. Results are cached by URL and content.',
  group: 'documents',
  input: Input,
  output: Output,
  timeoutClass: 'document',
  rest: { method: 'POST', path: '/v1/documents/process' },
  upload: { urlField: 'document_url' },
  formats: ['pdf', 'docx', 'pptx', 'xlsx', 'xls', 'csv', 'image', 'html', 'text'],
  async handler(input, ctx) {
    const { doc, source } = await ctx.services.documents.load(sourceFrom(input.document_url, ctx), ctx);
    const content = clipText(doc.content, contentBudget(input.max_chars));
    return {
      content: content.text,
      content_length: content.length,
      truncated: content.truncated,
      document_type: doc.kind,
      source,
      metadata: doc.metadata,
      tables: doc.tables.slice(0, MAX_LISTED_TABLES).map(wireTable),
      table_count: doc.tables.length,
      images: doc.images.slice(0, MAX_LISTED_IMAGES),
      image_count: doc.images.length,
      urls: doc.urls.map(wireUrl),
      detected_language: doc.detected_language ?? 'unknown',
      detected_language_name: doc.detected_language_name ?? 'Unknown',
    };
  },
});
