/**
 * retrieve_chunks: the chunks of one or more documents most relevant to a query — BM25 and (when an
 * embedding model is available) dense search fused by RRF, reranked by a cross-encoder when one is
 * loaded, near-duplicates dropped — with what served the call and, on request, a per-stage trace.
 */
import Type from 'typebox';
import { DOCUMENT_KINDS } from '../documents/formats.ts';
import { defineTool } from './define-tool.ts';
import { assertHasChunks } from './no-text.ts';
import { SAMPLE_URLS, withOfflineTwins } from './examples.ts';
import { DocumentUrl, OcrFields, ocrRequestOf } from './schemas/documents.ts';
import { toolError } from '../errors.ts';
import { RetrievalModeSchema, RetrieveResultSchema } from '../retrieval/schemas.ts';
import { ContextCharsSchema, ContextRequestSchema } from '../contract/answer-schemas.ts';
import { DEFAULT_TOP_K, MAX_DOCUMENTS, MAX_TOP_K } from '../retrieval/contracts.ts';
import type { DocumentSource } from '../call-context.ts';

const Mode = RetrievalModeSchema;

const Input = Type.Object(
  {
    document_url: Type.Optional(DocumentUrl),
    document_urls: Type.Optional(
      Type.Array(DocumentUrl, { minItems: 1, maxItems: MAX_DOCUMENTS, description: `Search up to ${MAX_DOCUMENTS} documents at once (instead of document_url)` }),
    ),
    query: Type.String({ minLength: 1, maxLength: 2000, description: 'What to look for, in natural language or keywords' }),
    top_k: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_TOP_K, default: DEFAULT_TOP_K, description: `Results to return (1-${MAX_TOP_K}, default ${DEFAULT_TOP_K})` })),
    mode: Type.Optional(Mode),
    rerank: Type.Optional(Type.Boolean({ description: 'Rerank candidates with the cross-encoder when it is available (default true)' })),
    explain: Type.Optional(Type.Boolean({ description: 'Add a per-stage trace of every candidate (default false)' })),
    context: Type.Optional(ContextRequestSchema),
    context_chars: Type.Optional(ContextCharsSchema),
    ...OcrFields,
  },
  { additionalProperties: false },
);

/** The output schema lives with the retrieval layer, whose RetrieveResult type is derived from it. */
const Output = RetrieveResultSchema;

export const retrieveChunksTool = defineTool({
  name: 'retrieve_chunks',
  title: 'Find the relevant chunks of documents',
  description:
    'Search one document (document_url or an upload) or up to 10 (document_urls) for the chunks most relevant to a query. ' +
    'BM25 with stemming is always available; with an embedding model, dense search is fused with it (RRF), and a cross-encoder ' +
    'reranks when loaded. Near-duplicate chunks are dropped. Results carry score, page range, heading path and source; ' +
    '`retrieval` says which mode, embedder and reranker served the call and why; `confidence` and `message` say how sure the answer is ' +
    '(the same ranking and answer fields as search_collection); context adds each hit\'s heading section or neighbours; explain: true adds a per-stage trace. ' +
    'Indexes are cached in memory and on disk, so repeated calls are fast.',
  group: 'documents',
  input: Input,
  output: Output,
  timeoutClass: 'document',
  rest: { method: 'POST', path: '/v1/documents/retrieve' },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  access: { action: 'search', what: 'search documents' },
  examples: withOfflineTwins([
    {
      name: 'one_document',
      summary: 'The three chunks of a PDF most relevant to a question',
      value: { document_url: SAMPLE_URLS.pdf, query: 'How do agents converse to solve tasks?', top_k: 3, rerank: true, explain: false },
    },
    {
      name: 'several_documents',
      summary: 'Search two documents at once (document_urls instead of document_url)',
      value: { document_urls: [SAMPLE_URLS.pdf, SAMPLE_URLS.pptx], query: 'multi-agent conversation framework', top_k: 5 },
    },
  ]),
  upload: { urlField: 'document_url', alsoUrlFields: ['document_urls'] },
  formats: DOCUMENT_KINDS,
  async handler(input, ctx) {
    const sources: DocumentSource[] = [];
    if (ctx.upload) {
      if (input.document_urls) throw toolError('VALIDATION_ERROR', 'send either a file or document_urls, not both');
      sources.push({ upload: ctx.upload });
    } else if (input.document_url !== undefined && input.document_urls !== undefined) {
      throw toolError('VALIDATION_ERROR', 'give document_url or document_urls, not both');
    } else if (input.document_urls) {
      sources.push(...input.document_urls.map((url) => ({ url })));
    } else if (input.document_url !== undefined) {
      sources.push({ url: input.document_url });
    } else {
      throw toolError('VALIDATION_ERROR', 'give document_url, document_urls, or upload the file');
    }
    const ocr = ocrRequestOf(input);
    const result = await ctx.services.retrieval.retrieve(
      {
        sources,
        query: input.query,
        ...(input.top_k !== undefined ? { topK: input.top_k } : {}),
        ...(input.mode !== undefined ? { mode: input.mode } : {}),
        ...(input.rerank !== undefined ? { rerank: input.rerank } : {}),
        ...(input.explain !== undefined ? { explain: input.explain } : {}),
        ...(input.context !== undefined ? { context: input.context } : {}),
        ...(input.context_chars !== undefined ? { contextChars: input.context_chars } : {}),
        ...(ocr ? { ocr } : {}),
      },
      ctx,
    );
    // Among several documents an empty one just adds no chunks; when none has text, say so.
    assertHasChunks(result.total_chunks_indexed);
    return result;
  },
});
