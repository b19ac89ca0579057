/**
 * The knowledge base's wire types, derived from the schemas (src/contract/kb-schemas.ts) so the
 * server, the tools and the console cannot drift apart. No Node imports: the console imports this.
 */
import type { Static } from 'typebox';
import type {
  ChunkSchema,
  CollectionSchema,
  CollectionStatsSchema,
  DocumentErrorSchema,
  DocumentSchema,
  DocumentStatusSchema,
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
export type Document = Static<typeof DocumentSchema>;
export type HistoryEntry = Static<typeof HistoryEntrySchema>;
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

/** One page of a listing (documents, chunks, jobs). */
export interface Page<T> {
  items: T[];
  total: number;
  next_offset: number | null;
}
