/**
 * The answer shape both search tools share, documented once. retrieve_chunks (documents by URL or
 * upload) and search_collection (a knowledge-base collection) rank with the same code
 * (src/kb/search-answer.ts) and answer with these fields:
 *   results[]     hits, each with text, chunk_index, importance_score, content_type, score,
 *                 page_start, page_end, heading_path, source and, when asked, `context`
 *                 (retrieval-schemas.ts HIT_FIELDS; search_collection adds chunk_id, document_id
 *                 and title);
 *   confidence    none | low | medium | high, and `message` saying it in words;
 *   total_chunks  chunks searched (before filters);
 *   retrieval     mode, embedder, reranker, reranker_model, reason, reranker_reason, top_k, candidates;
 *   timings_ms    milliseconds per stage (the keys below), total_ms always;
 *   trace         with explain: every candidate per stage, and the confidence signals;
 *   errors        documents that failed: source, code, message (DOCUMENT_FAILURE_FIELDS).
 * Older names stay for compatibility: retrieve_chunks' total_chunks_indexed (= total_chunks) and
 * retrieval.timings (the same stages as timings_ms, with load_ms).
 * No Node imports: the console imports this.
 */
import Type from 'typebox';

export const ConfidenceSchema = Type.Union([Type.Literal('high'), Type.Literal('medium'), Type.Literal('low'), Type.Literal('none')], {
  description:
    "From the top hit: its share of the query's weight (terms weighted by rarity) and how much rare vocabulary it matches, or the dense similarity or reranker logit. high: the top hit is relevant about 9 times in 10; medium: more often than not; low: a partial match; none: nothing relevant was found (search_collection then returns no results unless min_confidence is none; retrieve_chunks always returns its best matches)",
});

export const AnswerMessageSchema = Type.String({ description: 'In plain words: what was found, or that nothing relevant was' });

const NullableNumber = Type.Union([Type.Number(), Type.Null()]);

/** What the confidence level was read from (in the explain trace). */
export const ConfidenceSignalsSchema = Type.Object(
  {
    coverage: NullableNumber,
    mass: NullableNumber,
    gap: NullableNumber,
    dense_top: NullableNumber,
    rerank_top: NullableNumber,
    missing_terms: Type.Array(Type.String()),
  },
  { additionalProperties: false, description: 'The signals the confidence level was read from (src/kb/confidence.ts)' },
);

export const ContextKindSchema = Type.Union([Type.Literal('section'), Type.Literal('neighbors')]);

/** context on a request: 'none' (default), 'section' or 'neighbors'. */
export const ContextRequestSchema = Type.Union([Type.Literal('none'), Type.Literal('section'), Type.Literal('neighbors')], {
  description: 'Parent text per hit: none (default), section (its heading section) or neighbors (adjacent chunks)',
});

export const ContextCharsSchema = Type.Integer({ minimum: 100, maximum: 8000, examples: [2000], description: 'Characters of context per hit (default 2000)' });

export const CONTEXT_DESCRIPTION = 'The parent the hit sits in, for reading: its heading section or its neighbouring chunks';

/**
 * A hit's reading context, one shape in both tools (src/kb/hit-context.ts builds it): the chunks
 * it is made of by chunk_index (the hits' own chunk_index, in the same document); search_collection
 * also names them by chunk_id, as it did before chunk_indexes.
 */
export const HitContextSchema = Type.Object(
  {
    kind: ContextKindSchema,
    text: Type.String(),
    chunk_indexes: Type.Array(Type.Integer({ minimum: 0 }), { description: 'The chunks the context is made of, in order (chunk_index in the same document)' }),
    chunk_ids: Type.Optional(Type.Array(Type.Integer(), { description: 'search_collection: the same chunks by chunk_id' })),
    truncated: Type.Boolean({ description: 'Something of the section or the neighbours was left out to keep within context_chars' }),
  },
  { description: CONTEXT_DESCRIPTION },
);

/** Stage keys of timings_ms; a stage that did not run is absent. */
export const TIMING_STAGES = [
  'load_ms',
  'filter_ms',
  'lexical_ms',
  'embed_ms',
  'dense_ms',
  'fetch_ms',
  'fusion_ms',
  'rerank_ms',
  'diversity_ms',
  'confidence_ms',
  'context_ms',
  'errors_ms',
  'total_ms',
] as const;

export const TimingsMsSchema = Type.Unsafe<Record<string, number>>(
  Type.Object({}, { additionalProperties: Type.Number(), description: `Milliseconds per stage (${TIMING_STAGES.join(', ')}); a stage that did not run is absent` }),
);
