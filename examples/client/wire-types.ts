/**
 * Names for the answers the examples read, taken from the generated OpenAPI types: MCP's
 * structuredContent is the REST response body, so one set of types serves both transports.
 */
import type { components, operations } from './openapi-types.ts';

type JsonBody<R> = R extends { content: { 'application/json': infer B } } ? B : never;
type Ok<Op extends keyof operations, S extends keyof operations[Op]['responses']> = JsonBody<operations[Op]['responses'][S]>;

export type SystemHealth = Ok<'get_system_health', 200>;
export type Job = Ok<'get_job', 200>;
export type JobStatus = Job['status'];
/** ingest_documents' answer: the job plus a hint (REST answers 202). */
export type IngestAnswer = Ok<'ingest_documents', 202>;
export type SearchResult = Ok<'search_collection', 200>;
export type SearchHit = SearchResult['results'][number];
export type SearchRequest = operations['search_collection']['requestBody']['content']['application/json'];
export type RetrieveResult = Ok<'retrieve_chunks', 200>;
export type RetrievedChunk = RetrieveResult['results'][number];
export type ErrorBody = components['schemas']['ErrorBody'];

export const ENDED_STATUSES: readonly JobStatus[] = ['succeeded', 'partial', 'failed', 'cancelled'];

export const jobEnded = (job: { status: JobStatus }): boolean => ENDED_STATUSES.includes(job.status);

/** "p. 2" or "pp. 2-3"; null for formats without pages (text, markdown). */
export function pageLabel(pageStart: number | null, pageEnd: number | null): string | null {
  if (pageStart === null) return null;
  return pageEnd === null || pageEnd === pageStart ? `p. ${pageStart}` : `pp. ${pageStart}-${pageEnd}`;
}
