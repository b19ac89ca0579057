/**
 * The retrieval answers' wire types (chunk_document, retrieve_chunks), derived from the schemas in
 * retrieval-schemas.ts so the tools, the retrieval layer and the console cannot drift apart. No
 * Node imports: the console imports this.
 */
import type { Static } from 'typebox';
import type { ChunkSchema, ContentTypeSchema, RetrievalModeSchema, RetrievedChunkSchema, RetrieveResultSchema } from './retrieval-schemas.ts';

export type ContentType = Static<typeof ContentTypeSchema>;
export type RetrievalMode = Static<typeof RetrievalModeSchema>;
/** One chunk as chunk_document returns it. */
export type DocumentChunk = Static<typeof ChunkSchema>;
export type RetrievedChunk = Static<typeof RetrievedChunkSchema>;
export type RetrieveResult = Static<typeof RetrieveResultSchema>;
/** retrieve_chunks' retrieval block: the mode served, the reranker, the documents and the stage timings. */
export type RetrieveRetrieval = RetrieveResult['retrieval'];
/** retrieve_chunks' explain trace. */
export type RetrieveTrace = NonNullable<RetrieveResult['trace']>;
export type RetrieveTraceCandidate = RetrieveTrace['candidates'][number];
