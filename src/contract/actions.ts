/**
 * What a key may do. Part of the contract (no Node imports), so the console imports the very names
 * the server checks. search: read and search (documents, jobs, per-URL tools); ingest: add and
 * re-ingest documents, cancel their jobs; delete: delete documents; admin: create and delete
 * collections, clear caches.
 */
export const ACTIONS = ['search', 'ingest', 'delete', 'admin'] as const;
export type Action = (typeof ACTIONS)[number];

export function isAction(value: unknown): value is Action {
  return typeof value === 'string' && (ACTIONS as readonly string[]).includes(value);
}
