/** chunk_document: a document cut into adaptive, overlapping chunks with pages and heading paths. */
import Type from 'typebox';
import { DOCUMENT_KINDS } from '../documents/formats.ts';
import { defineTool } from './define-tool.ts';
import { assertHasChunks } from './no-text.ts';
import { SAMPLE_URLS } from './examples.ts';
import { DocumentUrl } from './schemas/documents.ts';
import { sourceFrom } from './tool-output.ts';
import { ChunkSchema } from '../retrieval/schemas.ts';

export const MAX_LISTED_CHUNKS = 10_000;

const Input = Type.Object(
  {
    document_url: DocumentUrl,
    max_chunks: Type.Optional(
      Type.Integer({ minimum: 1, maximum: MAX_LISTED_CHUNKS, description: `Return at most this many chunks (default and maximum ${MAX_LISTED_CHUNKS}); chunk_count is always the full count` }),
    ),
  },
  { additionalProperties: false },
);

const Output = Type.Object(
  {
    chunks: Type.Array(ChunkSchema),
    chunk_count: Type.Integer({ minimum: 0 }),
    truncated: Type.Boolean({ description: 'True when max_chunks cut the list' }),
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
    'offsets, heading path, content type (table, list, heading, text) and an importance score.',
  group: 'documents',
  input: Input,
  output: Output,
  timeoutClass: 'document',
  rest: { method: 'POST', path: '/v1/documents/chunk' },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  examples: [
    {
      name: 'docx',
      summary: 'Chunks of a Word document (an excerpt of the AutoGen paper)',
      value: { document_url: SAMPLE_URLS.docx, max_chunks: 20 },
    },
  ],
  upload: { urlField: 'document_url' },
  formats: DOCUMENT_KINDS,
  async handler(input, ctx) {
    const { chunks, documentType, source } = await ctx.services.retrieval.chunk(sourceFrom(input.document_url, ctx), ctx);
    assertHasChunks(chunks.length);
    const limit = input.max_chunks ?? MAX_LISTED_CHUNKS;
    return {
      chunks: chunks.slice(0, limit).map((c) => ({
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
      truncated: chunks.length > limit,
      document_type: documentType,
      source,
    };
  },
});
