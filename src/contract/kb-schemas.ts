/**
 * Wire schemas of the knowledge base (REST, MCP tools and the console read the same ones):
 * collections, documents, chunks, jobs, job events and search answers; src/kb/types.ts derives its
 * record types from them. No Node imports: the console's bundle imports this file. Output objects do not forbid extra properties (MCP clients check
 * structuredContent against outputSchema, and a field added to the records must not break them);
 * inputs do, like every tool input.
 */
import Type from 'typebox';
import { ContentTypeSchema, DOCUMENT_FAILURE_FIELDS, HIT_FIELDS, RetrievalModeSchema } from './retrieval-schemas.ts';
import { AnswerMessageSchema, ConfidenceSchema, TimingsMsSchema } from './answer-schemas.ts';
import { COLLECTION_MAX_TOP_K, SEARCH_DEFAULT_TOP_K } from './search-limits.ts';

export const COLLECTION_NAME_PATTERN = '^[a-z0-9][a-z0-9_-]{0,63}$';

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T, description?: string) =>
  Type.Union([schema, Type.Null()], description ? { description } : {});

export const CollectionName = Type.String({
  pattern: COLLECTION_NAME_PATTERN,
  minLength: 1,
  maxLength: 64,
  description: 'Collection name: lowercase letters, digits, "-" and "_", starting with a letter or digit (1-64 characters)',
  examples: ['papers'],
});

export const DocumentId = Type.String({ minLength: 1, maxLength: 100, description: 'Document id (from list_documents or the job items)' });
export const JobId = Type.String({ minLength: 1, maxLength: 100, description: 'Job id (returned by ingest_documents and reingest_document)' });

export const Offset = Type.Integer({ minimum: 0, default: 0, description: 'Items to skip (paging)' });
export const Limit = (max: number, def: number) => Type.Integer({ minimum: 1, maximum: max, default: def, description: `Items per page (default ${def}, at most ${max})` });

const DocumentStatus = Type.Union([Type.Literal('pending'), Type.Literal('ready'), Type.Literal('failed')], {
  description: 'pending: not ingested yet; ready: searchable; failed: the last attempt failed (an older version may still be searchable)',
});
export const SourceKindSchema = Type.Union([Type.Literal('url'), Type.Literal('upload'), Type.Literal('path')]);
const JobStatus = Type.Union([
  Type.Literal('queued'),
  Type.Literal('running'),
  Type.Literal('succeeded'),
  Type.Literal('partial'),
  Type.Literal('failed'),
  Type.Literal('cancelled'),
]);
export const JobStatusSchema = JobStatus;
export const DocumentStatusSchema = DocumentStatus;

export const DocumentErrorSchema = Type.Object({ code: Type.String(), message: Type.String() });
// additionalProperties, not Type.Record's patternProperties: OpenAPI and MCP then publish the same schema.
// Unsafe only to give it the static type Record<string, number> (an empty object type otherwise).
const Counts = Type.Unsafe<Record<string, number>>(Type.Object({}, { additionalProperties: Type.Integer({ minimum: 0 }) }));

export const CollectionStatsSchema = Type.Object({
  documents: Type.Integer({ minimum: 0 }),
  documents_by_status: Counts,
  chunks: Type.Integer({ minimum: 0 }),
  bytes: Type.Integer({ minimum: 0 }),
  pages: Type.Integer({ minimum: 0 }),
  languages: Counts,
  types: Counts,
});

export const CollectionSchema = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    description: Nullable(Type.String()),
    version: Type.Integer({ description: 'Bumped by every committed change to its documents' }),
    embedder: Nullable(Type.String(), 'The embedding model of its dense index; null: lexical only'),
    dimension: Nullable(Type.Integer()),
    chunk_size: Nullable(Type.Integer(), 'Chunk size in characters for all its documents; null: adaptive per format'),
    created_at: Type.String(),
    updated_at: Type.String(),
    stats: CollectionStatsSchema,
  },
  { description: 'A collection with its statistics' },
);

/** list_collections' answer. */
export const CollectionListSchema = Type.Object({ collections: Type.Array(CollectionSchema) });

export const DocumentSchema = Type.Object({
  id: Type.String(),
  collection_id: Type.Integer(),
  source: Type.String({ description: 'The URL, the local path or the uploaded file name' }),
  source_kind: SourceKindSchema,
  source_key: Type.String(),
  filename: Nullable(Type.String()),
  content_sha256: Nullable(Type.String()),
  bytes: Nullable(Type.Integer()),
  type: Nullable(Type.String()),
  title: Nullable(Type.String()),
  pages: Nullable(Type.Integer()),
  language: Nullable(Type.String()),
  status: DocumentStatus,
  error: Nullable(DocumentErrorSchema),
  chunk_count: Type.Integer({ minimum: 0 }),
  revision: Type.Integer({ minimum: 0, description: 'How many versions of this source were committed' }),
  created_at: Type.String(),
  updated_at: Type.String(),
  ingested_at: Nullable(Type.String()),
});

export const HistoryEntrySchema = Type.Object({
  at: Type.String(),
  action: Type.Union([Type.Literal('ingested'), Type.Literal('skipped'), Type.Literal('failed'), Type.Literal('deleted')]),
  content_sha256: Nullable(Type.String()),
  job_id: Nullable(Type.String()),
  detail: Nullable(Type.String()),
});

/** get_document's answer: the document with its history, newest last. */
export const DocumentWithHistorySchema = Type.Object({ ...DocumentSchema.properties, history: Type.Array(HistoryEntrySchema) });

export const ChunkSchema = Type.Object({
  id: Type.Integer(),
  document_id: Type.String(),
  collection_id: Type.Integer(),
  ord: Type.Integer({ minimum: 0, description: 'Position within its document' }),
  text: Type.String(),
  page_start: Nullable(Type.Integer()),
  page_end: Nullable(Type.Integer()),
  heading_path: Type.Array(Type.String()),
  char_start: Type.Integer(),
  char_end: Type.Integer(),
  importance: Type.Number(),
  content_type: ContentTypeSchema,
});

export const ItemStageSchema = Type.Union([
  Type.Literal('queued'),
  Type.Literal('downloading'),
  Type.Literal('extracting'),
  Type.Literal('chunking'),
  Type.Literal('embedding'),
  Type.Literal('indexing'),
  Type.Literal('done'),
  Type.Literal('skipped'),
  Type.Literal('failed'),
  Type.Literal('cancelled'),
]);

export const JobItemSchema = Type.Object({
  index: Type.Integer({ minimum: 0 }),
  source: Type.String(),
  source_kind: SourceKindSchema,
  stage: ItemStageSchema,
  document_id: Nullable(Type.String()),
  note: Nullable(Type.String(), 'Why it was skipped (e.g. "unchanged")'),
  error: Nullable(DocumentErrorSchema),
  progress: Type.Object({
    pages_done: Nullable(Type.Integer()),
    pages_total: Nullable(Type.Integer()),
    chunks_embedded: Nullable(Type.Integer()),
    chunks_total: Nullable(Type.Integer()),
  }),
  started_at: Nullable(Type.String()),
  finished_at: Nullable(Type.String()),
});

export const JobCountsSchema = Type.Object({
  total: Type.Integer({ minimum: 0 }),
  done: Type.Integer({ minimum: 0 }),
  skipped: Type.Integer({ minimum: 0 }),
  failed: Type.Integer({ minimum: 0 }),
  cancelled: Type.Integer({ minimum: 0 }),
});

/** How far the walk of a job's folders is (folders of any size: src/kb/folder-feed.ts). */
export const JobEnumerationSchema = Type.Object(
  {
    state: Type.Union([Type.Literal('walking'), Type.Literal('complete'), Type.Literal('stopped')], {
      description:
        'walking: the folders are still being walked, more items are to come (counts.total grows); complete: every file was found; stopped: the walk ended early (the job was cancelled, or a part of the walk failed: see the failed item)',
    }),
    files_found: Type.Integer({ minimum: 0, description: 'Files the walk found so far (items made from them)' }),
  },
  {
    description:
      'Jobs that name folders: the folders are walked in parts as the job drains, so INGEST_QUEUE_MAX bounds the documents waiting at once, not the size of a folder',
  },
);

export const JobSchema = Type.Object(
  {
    id: Type.String(),
    collection: Type.String(),
    status: JobStatus,
    reason: Nullable(Type.String(), 'Why the job ended without finishing (failed, cancelled, interrupted by a restart)'),
    items: Type.Array(JobItemSchema),
    counts: JobCountsSchema,
    created_at: Type.String(),
    started_at: Nullable(Type.String()),
    finished_at: Nullable(Type.String()),
    resumed: Type.Integer({ minimum: 0, description: 'Times the job was resumed after a restart' }),
    enumeration: Type.Optional(JobEnumerationSchema),
  },
  { description: 'An ingestion job: one item per document, with its stage and progress' },
);

/** A JobEvent (src/kb/types.ts) as SSE and MCP progress relay it. */
export const JobEventSchema = Type.Object({
  job_id: Type.String(),
  type: Type.Union([Type.Literal('progress'), Type.Literal('item'), Type.Literal('job')]),
  fraction: Type.Number({ minimum: 0, maximum: 1, description: 'Progress over the whole job, 0-1' }),
  item: Type.Optional(JobItemSchema),
  job: Type.Optional(Type.Object({ id: Type.String(), status: JobStatus, reason: Nullable(Type.String()), counts: JobCountsSchema })),
  message: Type.String(),
});

export const PageOf = <T extends Parameters<typeof Type.Array>[0]>(item: T, description: string) =>
  Type.Object(
    {
      items: Type.Array(item),
      total: Type.Integer({ minimum: 0, description: 'Items in all pages' }),
      next_offset: Nullable(Type.Integer({ minimum: 0 }), 'Offset of the next page; null at the end'),
    },
    { description },
  );

/** A search_collection hit: retrieve_chunks' hit fields (HIT_FIELDS) and where the chunk lives in the knowledge base. */
export const HitSchema = Type.Object(
  {
    chunk_id: Type.Integer({ description: "The chunk's id in the knowledge base (list_document_chunks lists a document's chunks with theirs)" }),
    document_id: Type.String(),
    title: Nullable(Type.String()),
    ...HIT_FIELDS,
  },
  { description: "A hit: retrieve_chunks' hit fields and the chunk's place in the knowledge base" },
);

export const SearchResultSchema = Type.Object({
  collection: Type.String(),
  query: Type.String(),
  results: Type.Array(HitSchema),
  confidence: ConfidenceSchema,
  message: AnswerMessageSchema,
  total_chunks: Type.Integer({ minimum: 0 }),
  filtered_chunks: Nullable(Type.Integer({ minimum: 0 }), 'Chunks left after the filters (null without filters)'),
  retrieval: Type.Object({
    mode: Type.Union([Type.Literal('lexical'), Type.Literal('dense'), Type.Literal('hybrid')]),
    embedder: Nullable(Type.String()),
    reranker: Type.Union([Type.Literal('used'), Type.Literal('unavailable'), Type.Literal('skipped'), Type.Literal('failed')]),
    reranker_model: Nullable(Type.String()),
    reason: Type.Optional(Type.String()),
    reranker_reason: Type.Optional(Type.String()),
    top_k: Type.Integer(),
    candidates: Type.Integer(),
    language: Type.Optional(Nullable(Type.String(), 'The language whose rules analyzed the query (detected, else the collection\'s most common one); null: the default rules')),
  }),
  errors: Type.Array(Type.Object({ ...DOCUMENT_FAILURE_FIELDS, document_id: Type.String(), error: Type.Object(DocumentErrorSchema.properties, { description: 'code and message again (the older shape)' }) }), {
    description: 'Documents of the collection whose last ingestion failed',
  }),
  timings_ms: TimingsMsSchema,
  trace: Type.Optional(Type.Unknown({ description: 'With explain: the ranking trace' })),
});

export { COLLECTION_MAX_TOP_K, SEARCH_DEFAULT_TOP_K };

export const SearchFiltersSchema = Type.Object(
  {
    document_ids: Type.Optional(Type.Array(DocumentId, { minItems: 1, maxItems: 500, description: 'Only these documents' })),
    source_prefix: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, description: 'Only documents whose source starts with this (a URL prefix or a folder)' })),
    content_type: Type.Optional(Type.Array(ContentTypeSchema, { minItems: 1, uniqueItems: true, description: 'Only chunks of these kinds' })),
    language: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 16 }), { minItems: 1, maxItems: 16, description: 'Only documents in these languages (e.g. "en")' })),
    page_from: Type.Optional(Type.Integer({ minimum: 1, description: 'Only chunks ending on or after this page' })),
    page_to: Type.Optional(Type.Integer({ minimum: 1, description: 'Only chunks starting on or before this page' })),
  },
  { additionalProperties: false, description: 'Narrow the search; all given filters apply together' },
);

/** search_collection's input without the collection's name (the REST path names it): what the knowledge base's search takes. */
export const CollectionSearchRequestSchema = Type.Object(
  {
    query: Type.String({ minLength: 1, maxLength: 2000, description: 'What to look for, in words' }),
    top_k: Type.Optional(
      Type.Integer({ minimum: 1, maximum: COLLECTION_MAX_TOP_K, default: SEARCH_DEFAULT_TOP_K, description: `Results to return (1-${COLLECTION_MAX_TOP_K}, default ${SEARCH_DEFAULT_TOP_K})` }),
    ),
    mode: Type.Optional(RetrievalModeSchema),
    rerank: Type.Optional(Type.Boolean({ description: 'Rerank candidates with the cross-encoder when it is available (default true)' })),
    explain: Type.Optional(Type.Boolean({ description: 'Add a per-stage trace of every candidate (default false)' })),
    filters: Type.Optional(SearchFiltersSchema),
    context: Type.Optional(
      Type.Union([Type.Literal('none'), Type.Literal('section'), Type.Literal('neighbors')], {
        description: 'Parent text per hit: none (default), section (its heading section) or neighbors (adjacent chunks)',
      }),
    ),
    context_chars: Type.Optional(Type.Integer({ minimum: 100, maximum: 8000, description: 'Characters of context per hit (default 2000)' })),
    group_by: Type.Optional(
      Type.Union([Type.Literal('chunk'), Type.Literal('document')], {
        description: 'chunk (default): the best chunks; document: each document once (its best chunk), top_k counted in documents',
      }),
    ),
    min_confidence: Type.Optional(
      Type.Union([Type.Literal('none'), Type.Literal('low'), Type.Literal('medium'), Type.Literal('high')], {
        description: "Return results only at or above this confidence (default low: a 'none' answer has no results; none: always return the best matches)",
      }),
    ),
  },
  { additionalProperties: false },
);
