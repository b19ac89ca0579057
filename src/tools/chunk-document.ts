/** chunk_document: a document cut into adaptive, overlapping chunks with pages and heading paths. */
import Type from 'typebox';
import { DOCUMENT_KINDS } from '../documents/formats.ts';
import { defineTool } from './define-tool.ts';
import { assertHasChunks } from './no-text.ts';
import { SAMPLE_URLS, withOfflineTwins } from './examples.ts';
import { DocumentUrl, OcrFields, ocrRequestOf } from './schemas/documents.ts';
import { sourceFrom } from './tool-output.ts';
import { ChunkSchema } from '../retrieval/schemas.ts';

/**
 * Chunks per answer: by default 500 and at most 1,000. A chunk is at most 5,000 characters, so one
 * answer stays within a few MB however large the document (a huge file gives 100k chunks); the rest
 * is read with offset / next_offset.
 */
export const DEFAULT_LISTED_CHUNKS = 500;
export const MAX_LISTED_CHUNKS = 1_000;

const Input = Type.Object(
  {
    document_url: DocumentUrl,
    max_chunks: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_LISTED_CHUNKS,
        description: `Return at most this many chunks (default ${DEFAULT_LISTED_CHUNKS}, maximum ${MAX_LISTED_CHUNKS}); chunk_count is always the full count`,
      }),
    ),
    offset: Type.Optional(
      Type.Integer({ minimum: 0, default: 0, description: 'chunk_index of the first chunk to return (default 0): pass next_offset to read on' }),
    ),
    ...OcrFields,
  },
  { additionalProperties: false },
);

const Output = Type.Object(
  {
    chunks: Type.Array(ChunkSchema),
    chunk_count: Type.Integer({ minimum: 0 }),
    truncated: Type.Boolean({ description: 'True when chunks stop before the last one (next_offset says where to go on)' }),
    offset: Type.Integer({ minimum: 0, description: 'chunk_index of the first chunk returned' }),
    next_offset: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], { description: 'offset for the next call; null when the last chunk is in this answer' }),
    document_type: Type.String({ description: 'pdf, docx, pptx, xlsx, xls, csv, image, html or text' }),
    source: Type.String({ description: 'The URL, or "upload:" and the file name' }),
  },
  { additionalProperties: false },
);

export const chunkDocumentTool = defineTool({
  name: 'chunk_document',
  title: 'Chunk a document',
  description:
    'Split a document (PDF, Word, PowerPoint, Excel, CSV, HTML, text or image via OCR) into overlapping chunks sized for its type ' +
    '(pdf 1500/300, pptx 800/150 by slide, spreadsheets 1200/200, docx/html 1500/300, other 1200/250 chars; scaled for very long ' +
    'or short documents), cut at headings, paragraphs and sentences. Each chunk has its page (slide, sheet) range, character ' +
    'offsets, heading path, content type (table, list, heading, text) and an importance score. Answers hold at most ' +
    `${DEFAULT_LISTED_CHUNKS} chunks by default (max_chunks, up to ${MAX_LISTED_CHUNKS}); read on with offset = next_offset.`,
  group: 'documents',
  input: Input,
  output: Output,
  timeoutClass: 'document',
  rest: { method: 'POST', path: '/v1/documents/chunk' },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  access: { action: 'search', what: 'read documents' },
  examples: withOfflineTwins([
    {
      name: 'docx',
      summary: 'Chunks of a Word document (an excerpt of the AutoGen paper)',
      value: { document_url: SAMPLE_URLS.docx, max_chunks: 20 },
    },
  ]),
  upload: { urlField: 'document_url' },
  formats: DOCUMENT_KINDS,
  async handler(input, ctx) {
    const { chunks, documentType, source } = await ctx.services.retrieval.chunk(sourceFrom(input.document_url, ctx), ctx, ocrRequestOf(input));
    assertHasChunks(chunks.length);
    const limit = input.max_chunks ?? DEFAULT_LISTED_CHUNKS;
    const start = Math.min(input.offset ?? 0, chunks.length);
    const end = Math.min(chunks.length, start + limit);
    return {
      chunks: chunks.slice(start, end).map((c) => ({
        text: c.text,
        chunk_index: c.chunk_index,
        total_chunks: c.total_chunks,
        importance_score: c.importance_score,
        content_type: c.content_type,
        page_start: c.page_start,
        page_end: c.page_end,
        char_start: c.char_start,
        char_end: c.char_end,
        heading_path: c.heading_path,
      })),
      chunk_count: chunks.length,
      truncated: end < chunks.length,
      offset: start,
      next_offset: end < chunks.length ? end : null,
      document_type: documentType,
      source,
    };
  },
});
