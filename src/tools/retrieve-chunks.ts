/**
 * retrieve_chunks: the chunks of one or more documents most relevant to a query — BM25 and (when an
 * embedding model is available) dense search fused by RRF, reranked by a cross-encoder when one is
 * loaded, near-duplicates dropped — with what served the call and, on request, a per-stage trace.
 */
import Type from 'typebox';
import { defineTool } from './define-tool.ts';
import { DocumentUrl } from './schemas/documents.ts';
import { toolError } from '../errors.ts';
import { ContentTypeSchema } from './chunk-document.ts';
import { DEFAULT_TOP_K, MAX_DOCUMENTS, MAX_TOP_K } from '../retrieval/retrieval-service.ts';
import type { DocumentSource } from '../documents/document-service.ts';

const Mode = Type.Union([Type.Literal('lexical'), Type.Literal('dense'), Type.Literal('hybrid')], {
  description: 'lexical (BM25), dense (embeddings) or hybrid (both, fused). Default: hybrid when an embedding model is available, else lexical',
});

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
  },
  { additionalProperties: false },
);

const PageNumber = Type.Union([Type.Integer({ minimum: 1 }), Type.Null()]);
const Rank = Type.Union([Type.Integer({ minimum: 1 }), Type.Null()]);
const ChunkRef = { chunk_index: Type.Integer({ minimum: 0 }), source: Type.String() };

const Result = Type.Object(
  {
    text: Type.String(),
    chunk_index: Type.Integer({ minimum: 0 }),
    importance_score: Type.Number({ minimum: 0, maximum: 1 }),
    content_type: ContentTypeSchema,
    score: Type.Number({ description: 'Final-stage score: cross-encoder logit when reranked, else RRF (hybrid), BM25 (lexical) or cosine (dense)' }),
    page_start: PageNumber,
    page_end: PageNumber,
    heading_path: Type.Array(Type.String()),
    source: Type.String({ description: 'The document this chunk comes from (URL, or "upload:" and the file name)' }),
  },
  { additionalProperties: false },
);

const Ms = Type.Optional(Type.Number({ minimum: 0 }));
const Retrieval = Type.Object(
  {
    mode: Mode,
    embedder: Type.Union([Type.String(), Type.Null()], { description: 'Embedding model that served dense search; null in lexical mode' }),
    reranker: Type.Union([Type.Literal('used'), Type.Literal('unavailable'), Type.Literal('skipped'), Type.Literal('failed')]),
    reranker_model: Type.Union([Type.String(), Type.Null()]),
    reason: Type.Optional(Type.String({ description: 'Why retrieval is lexical when no mode was asked for' })),
    reranker_reason: Type.Optional(Type.String({ description: 'Why the reranker was not used' })),
    top_k: Type.Integer({ minimum: 1 }),
    candidates: Type.Integer({ minimum: 1, description: 'Candidates taken from each first stage: max(20, 3 x top_k)' }),
    documents: Type.Array(
      Type.Object(
        {
          source: Type.String(),
          document_type: Type.String(),
          chunks: Type.Integer({ minimum: 0 }),
          index: Type.Union([Type.Literal('memory'), Type.Literal('disk'), Type.Literal('built')], { description: 'Where the index came from' }),
          embedder: Type.Union([Type.String(), Type.Null()]),
        },
        { additionalProperties: false },
      ),
    ),
    timings: Type.Object(
      { load_ms: Type.Number({ minimum: 0 }), lexical_ms: Ms, dense_ms: Ms, fusion_ms: Ms, rerank_ms: Ms, diversity_ms: Ms, total_ms: Type.Number({ minimum: 0 }) },
      { additionalProperties: false, description: 'Milliseconds per stage; load_ms covers fetching and indexing' },
    ),
  },
  { additionalProperties: false },
);

const TraceCandidate = Type.Object(
  {
    ...ChunkRef,
    lexical_rank: Rank,
    lexical_score: Type.Union([Type.Number(), Type.Null()]),
    dense_rank: Rank,
    dense_score: Type.Union([Type.Number(), Type.Null()]),
    fused_rank: Type.Integer({ minimum: 1 }),
    fused_score: Type.Number(),
    rerank_rank: Rank,
    rerank_score: Type.Union([Type.Number(), Type.Null()]),
    rerank_delta: Type.Union([Type.Integer(), Type.Null()], { description: 'fused_rank - rerank_rank: positive when reranking moved it up' }),
    final_rank: Rank,
    dropped_reason: Type.Optional(Type.Union([Type.Literal('duplicate'), Type.Literal('reranked_out')])),
    duplicate_of: Type.Optional(Type.Object(ChunkRef, { additionalProperties: false })),
  },
  { additionalProperties: false },
);

const Trace = Type.Object(
  {
    stages: Type.Array(Type.String()),
    rrf_k: Type.Union([Type.Integer(), Type.Null()]),
    candidates_per_stage: Type.Integer({ minimum: 1 }),
    diversity_threshold: Type.Union([Type.Number(), Type.Null()]),
    candidates: Type.Array(TraceCandidate),
    summary: Type.Object(
      {
        moved_up: Type.Integer({ minimum: 0 }),
        moved_down: Type.Integer({ minimum: 0 }),
        unchanged: Type.Integer({ minimum: 0 }),
        new: Type.Integer({ minimum: 0 }),
        dropped: Type.Integer({ minimum: 0 }),
      },
      { additionalProperties: false, description: 'The answer compared with the fused top_k before reranking and de-duplication' },
    ),
  },
  { additionalProperties: false },
);

const Output = Type.Object(
  {
    results: Type.Array(Result),
    total_chunks_indexed: Type.Integer({ minimum: 0 }),
    retrieval: Retrieval,
    trace: Type.Optional(Trace),
  },
  { additionalProperties: false },
);

export const retrieveChunksTool = defineTool({
  name: 'retrieve_chunks',
  title: 'Find the relevant chunks of documents',
  description:
    'Search one document (document_url or an upload) or up to 10 (document_urls) for the chunks most relevant to a query. ' +
    'BM25 with stemming is always available; with an embedding model, dense search is fused with it (RRF), and a cross-encoder ' +
    'reranks when loaded. Near-duplicate chunks are dropped. Results carry score, page range, heading path and source; ' +
    '`retrieval` says which mode, embedder and reranker served the call and why; explain: true adds a per-stage trace. ' +
    'Indexes are cached in memory and on disk, so repeated calls are fast.',
  group: 'documents',
  input: Input,
  output: Output,
  timeoutClass: 'document',
  rest: { method: 'POST', path: '/v1/documents/retrieve' },
  upload: { urlField: 'document_url' },
  formats: ['pdf', 'docx', 'pptx', 'xlsx', 'xls', 'csv', 'image', 'html', 'text'],
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
    return ctx.services.retrieval.retrieve(
      {
        sources,
        query: input.query,
        ...(input.top_k !== undefined ? { topK: input.top_k } : {}),
        ...(input.mode !== undefined ? { mode: input.mode } : {}),
        ...(input.rerank !== undefined ? { rerank: input.rerank } : {}),
        ...(input.explain !== undefined ? { explain: input.explain } : {}),
      },
      ctx,
    );
  },
});
