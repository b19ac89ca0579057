/**
 * The knowledge base's wire types, derived from the schemas (src/contract/kb-schemas.ts) so the
 * server, the tools and the console cannot drift apart. No Node imports: the console imports this.
 */
import type { Static } from 'typebox';
import type { RetrieveTrace, RetrieveTraceCandidate } from './retrieval-types.ts';
import type {
  ChunkSchema,
  CollectionListSchema,
  CollectionSchema,
  CollectionSearchRequestSchema,
  CollectionStatsSchema,
  DocumentErrorSchema,
  DocumentSchema,
  DocumentStatusSchema,
  DocumentWithHistorySchema,
  HistoryEntrySchema,
  HitSchema,
  ItemStageSchema,
  JobCountsSchema,
  JobEventSchema,
  JobItemSchema,
  JobSchema,
  JobStatusSchema,
  SearchResultSchema,
  SourceKindSchema,
} from './kb-schemas.ts';

export type SourceKind = Static<typeof SourceKindSchema>;
export type DocumentStatus = Static<typeof DocumentStatusSchema>;
export type DocumentError = Static<typeof DocumentErrorSchema>;
export type CollectionStats = Static<typeof CollectionStatsSchema>;
/** A collection as the API answers it: its record with its statistics. */
export type Collection = Static<typeof CollectionSchema>;
/** list_collections' answer. */
export type CollectionList = Static<typeof CollectionListSchema>;
export type Document = Static<typeof DocumentSchema>;
export type HistoryEntry = Static<typeof HistoryEntrySchema>;
/** get_document's answer. */
export type DocumentWithHistory = Static<typeof DocumentWithHistorySchema>;
export type Chunk = Static<typeof ChunkSchema>;
export type JobStatus = Static<typeof JobStatusSchema>;
export type ItemStage = Static<typeof ItemStageSchema>;
export type JobItemWire = Static<typeof JobItemSchema>;
export type ItemProgress = JobItemWire['progress'];
export type JobCounts = Static<typeof JobCountsSchema>;
export type Job = Static<typeof JobSchema>;
export type JobEventWire = Static<typeof JobEventSchema>;
export type CollectionHit = Static<typeof HitSchema>;
export type CollectionSearchResult = Static<typeof SearchResultSchema>;
export type Confidence = CollectionSearchResult['confidence'];
export type RetrievalInfo = CollectionSearchResult['retrieval'];
/** What search_collection takes besides the collection's name (the knowledge base's search request). */
export type CollectionSearchRequest = Static<typeof CollectionSearchRequestSchema>;
export type SearchFilters = NonNullable<CollectionSearchRequest['filters']>;

/** One page of a listing (documents, chunks, jobs). */
export interface Page<T> {
  items: T[];
  total: number;
  next_offset: number | null;
}

/**
 * search_collection's explain trace. The schema publishes it as unknown (its confidence signals are
 * the ranking's own); its candidates are retrieve_chunks' trace candidates named by chunk and
 * document instead of by source.
 */
export interface CollectionTraceCandidate extends Omit<RetrieveTraceCandidate, 'source' | 'duplicate_of'> {
  chunk_id: number;
  document_id: string;
  duplicate_of?: { chunk_id: number; document_id: string; chunk_index: number };
}

/** Its confidence signals are retrieve_chunks' (the same ranking stage, src/kb/search-answer.ts). */
export interface CollectionTrace extends Omit<RetrieveTrace, 'candidates'> {
  candidates: CollectionTraceCandidate[];
}
