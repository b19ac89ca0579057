/** process_document: any supported document -> content, tables, images, URLs and language. */
import Type from 'typebox';
import { DOCUMENT_KINDS } from '../documents/formats.ts';
import { defineTool } from './define-tool.ts';
import { assertHasText } from './no-text.ts';
import { SAMPLE_URLS, withOfflineTwins } from './examples.ts';
import {
  DocumentUrl,
  LanguageFields,
  MaxChars,
  Metadata,
  OcrFields,
  ocrRequestOf,
  RowOffset,
  TableItem,
  TableOffset,
  TablePageFields,
  TextOffset,
  TextPageFields,
  UrlItem,
} from './schemas/documents.ts';
import { contentBudget, MAX_LISTED_IMAGES, pageText, sourceFrom, wireTables, wireUrl } from './tool-output.ts';

const Input = Type.Object(
  {
    document_url: DocumentUrl,
    max_chars: Type.Optional(MaxChars),
    offset: Type.Optional(TextOffset),
    table_offset: Type.Optional(TableOffset),
    row_offset: Type.Optional(RowOffset),
    ...OcrFields,
  },
  { additionalProperties: false },
);

const Output = Type.Object(
  {
    content: Type.String({ description: 'Extracted content (Markdown-flavoured) from offset, at most max_chars (default 50,000) characters' }),
    content_length: Type.Integer({ minimum: 0, description: 'Length of the full content' }),
    truncated: Type.Boolean({ description: 'True when content does not reach the end (next_offset says where to go on)' }),
    ...TextPageFields,
    document_type: Type.String({ description: 'pdf, docx, pptx, xlsx, xls, csv, image, html or text' }),
    source: Type.String({ description: 'The URL, or "upload:" and the file name' }),
    metadata: Metadata,
    tables: Type.Array(TableItem, { description: 'Tables from table_offset (at most 100 listed), with their rows' }),
    table_count: Type.Integer({ minimum: 0, description: 'Number of tables in the whole document' }),
    ...TablePageFields,
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
    'content as text with page/slide/sheet markers, its tables (Markdown preview and every row), embedded images, every URL ' +
    'with context, metadata and the detected language. Scanned PDFs and images are read with OCR. Results are cached by URL ' +
    'and content. Long text is paged: call again with offset = next_offset; table rows with table_offset / row_offset.',
  group: 'documents',
  input: Input,
  output: Output,
  timeoutClass: 'document',
  rest: { method: 'POST', path: '/v1/documents/process' },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  access: { action: 'search', what: 'read documents' },
  examples: withOfflineTwins([
    {
      name: 'pdf',
      summary: 'A one-page PDF: the first page of the AutoGen paper',
      value: { document_url: SAMPLE_URLS.pdf, max_chars: 20_000 },
    },
    {
      name: 'pptx',
      summary: 'A six-slide PowerPoint deck with a chart, a table and pictures',
      value: { document_url: SAMPLE_URLS.pptx, max_chars: 20_000 },
    },
  ]),
  upload: { urlField: 'document_url' },
  formats: DOCUMENT_KINDS,
  async handler(input, ctx) {
    const ocr = ocrRequestOf(input);
    const { doc, source } = await ctx.services.documents.load(sourceFrom(input.document_url, ctx), ctx, ocr ? { ocr } : {});
    assertHasText(doc.kind, doc.content, doc.tables.length);
    const content = pageText(doc.content, input.offset, contentBudget(input.max_chars));
    const tables = wireTables(doc.tables, input.table_offset, input.row_offset);
    return {
      content: content.text,
      content_length: content.length,
      truncated: content.truncated,
      offset: content.offset,
      next_offset: content.next_offset,
      document_type: doc.kind,
      source,
      metadata: doc.metadata,
      tables: tables.tables,
      table_count: doc.tables.length,
      next_table_offset: tables.next_table_offset,
      next_row_offset: tables.next_row_offset,
      images: doc.images.slice(0, MAX_LISTED_IMAGES),
      image_count: doc.images.length,
      urls: doc.urls.map(wireUrl),
      detected_language: doc.detected_language ?? 'unknown',
      detected_language_name: doc.detected_language_name ?? 'Unknown',
    };
  },
});
