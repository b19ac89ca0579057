/**
 * The wire shapes of chunk_document and retrieve_chunks as TypeBox schemas. The tools publish them;
 * the retrieval layer's Chunk and RetrieveResult types are derived from them (Static), so the
 * published schema and the code cannot drift apart.
 */
import Type from 'typebox';
import { AnswerMessageSchema, ConfidenceSchema, ConfidenceSignalsSchema, HitContextSchema, TimingsMsSchema } from './answer-schemas.ts';

/** No chunk is ever longer than this (the product's contract). */
export const MAX_CHUNK_CHARS = 5000;

export const ContentTypeSchema = Type.Union([Type.Literal('table'), Type.Literal('list'), Type.Literal('heading'), Type.Literal('text')]);

const ChunkPageNumber = Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], { description: 'Page, slide or sheet number; null when the format has none' });

/** One chunk as chunk_document returns it. */
export const ChunkSchema = Type.Object(
  {
    text: Type.String({ maxLength: MAX_CHUNK_CHARS, description: `Chunk text, at most ${MAX_CHUNK_CHARS} characters` }),
    chunk_index: Type.Integer({ minimum: 0 }),
    total_chunks: Type.Integer({ minimum: 0 }),
    importance_score: Type.Number({ minimum: 0, maximum: 1, description: 'Heuristic 0-1: headings, numbers, keywords raise it; very short chunks lower it' }),
    content_type: ContentTypeSchema,
    page_start: ChunkPageNumber,
    page_end: ChunkPageNumber,
    char_start: Type.Integer({ minimum: 0, description: 'Offset of the chunk in the document content (spreadsheets: in the chunk texts joined by blank lines, since their content is a 20-row preview)' }),
    char_end: Type.Integer({ minimum: 0, description: 'End offset (exclusive)' }),
    heading_path: Type.Array(Type.String(), { description: 'Headings (or slide / sheet name) leading to the chunk, outermost first' }),
  },
  { additionalProperties: false },
);

export const RetrievalModeSchema = Type.Union([Type.Literal('lexical'), Type.Literal('dense'), Type.Literal('hybrid')], {
  description: 'lexical (BM25), dense (embeddings) or hybrid (both, fused). Default: hybrid when an embedding model is available, else lexical',
});

const PageNumber = Type.Union([Type.Integer({ minimum: 1 }), Type.Null()]);
const Rank = Type.Union([Type.Integer({ minimum: 1 }), Type.Null()]);
const ChunkRef = { chunk_index: Type.Integer({ minimum: 0 }), source: Type.String() };

/**
 * The fields of a hit, written once for both search tools: retrieve_chunks answers exactly these
 * (RetrievedChunkSchema); search_collection's hits are these and where the chunk lives in the
 * knowledge base (CollectionHitSchema: chunk_id, document_id, title).
 */
export const HIT_FIELDS = {
  text: Type.String(),
  chunk_index: Type.Integer({ minimum: 0, description: 'Position of the chunk in its document, from 0' }),
  importance_score: Type.Number({ minimum: 0, maximum: 1 }),
  content_type: ContentTypeSchema,
  score: Type.Number({ description: 'Final-stage score: cross-encoder logit when reranked, else RRF (hybrid), BM25 (lexical) or cosine (dense)' }),
  page_start: PageNumber,
  page_end: PageNumber,
  heading_path: Type.Array(Type.String()),
  source: Type.String({ description: 'The document this chunk comes from (URL, path, or "upload:" and the file name)' }),
  context: Type.Optional(HitContextSchema),
};

/**
 * A document named in an answer's `errors`, the same fields in both search tools: retrieve_chunks
 * lists the documents of the call that could not be searched, search_collection the documents of
 * the collection whose last ingestion failed (and adds document_id and, its older shape, error).
 */
export const DOCUMENT_FAILURE_FIELDS = {
  source: Type.String({ description: 'The document as it was named (URL, path, or "upload:" and the file name)' }),
  code: Type.String({ description: 'The error code the document failed with (e.g. DOWNLOAD_ERROR, UNSUPPORTED_FORMAT)' }),
  message: Type.String(),
};

export const RetrievedChunkSchema = Type.Object(HIT_FIELDS, { additionalProperties: false, description: 'A hit (the same fields as a search_collection hit, which adds chunk_id, document_id and title)' });

const Ms = Type.Optional(Type.Number({ minimum: 0 }));
const Retrieval = Type.Object(
  {
    mode: RetrievalModeSchema,
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
      { additionalProperties: false, description: 'Milliseconds per stage; load_ms covers fetching and indexing. Kept for compatibility: timings_ms has the same stages and more' },
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
    confidence: Type.Optional(ConfidenceSignalsSchema),
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

/** retrieve_chunks' output. */
export const RetrieveResultSchema = Type.Object(
  {
    results: Type.Array(RetrievedChunkSchema),
    confidence: ConfidenceSchema,
    message: AnswerMessageSchema,
    total_chunks: Type.Integer({ minimum: 0, description: 'Chunks searched, over every document of the call' }),
    total_chunks_indexed: Type.Integer({ minimum: 0, description: 'The same as total_chunks (its older name, kept for compatibility)' }),
    retrieval: Retrieval,
    timings_ms: TimingsMsSchema,
    errors: Type.Optional(
      Type.Array(
        Type.Object(DOCUMENT_FAILURE_FIELDS, { additionalProperties: false }),
        { description: 'Documents of a multi-document call that could not be searched; the results come from the others. Absent when every document was searched' },
      ),
    ),
    trace: Type.Optional(Trace),
  },
  { additionalProperties: false },
);
