/**
 * Search limits shared by the server, the tools and the console. Plain constants with no imports,
 * so the console can take them as values without bundling TypeBox.
 */

/** The most results search_collection returns (its top_k maximum; src/kb/collection-search.ts holds it to this). */
export const COLLECTION_MAX_TOP_K = 100;
/** top_k when a search names none (retrieve_chunks' default too: src/retrieval/contracts.ts). */
export const SEARCH_DEFAULT_TOP_K = 5;
