// Which retrieval variants a collection can serve here, and why not, from what the server says
// about itself (GET /v1/system/health: features.dense_retrieval, features.reranking and the
// models with their states) and about the collection (its embedder). The Evaluate page pre-selects
// only what can be served and shows the rest disabled with these reasons; the Search page pre-checks
// rerank only with a reranker. Pure: tested against real health answers in
// test/retrieval/console-capabilities.test.ts.

import type { SystemHealth } from '../../../src/contract/health-schemas.ts';
import type { Collection } from '../../../src/contract/kb-types.ts';

export interface Availability {
  available: boolean;
  /** Why not (the server's own words where it gives them); null when available. */
  reason: string | null;
}

/** The parts of GET /v1/system/health this reads (the contract's health answer). */
export type HealthCapabilities = Pick<SystemHealth, 'features' | 'models'>;

/** The collection as this reads it: its embedder id, null when it was indexed without one. */
export type CollectionCapabilities = Pick<Collection, 'name' | 'embedder'>;

const OK: Availability = { available: true, reason: null };
const no = (reason: string): Availability => ({ available: false, reason });

/**
 * Dense search over `collection` (null: a collection the page is about to create, which gets the
 * server's current embedder): the collection must have embeddings and the model that made them
 * must be ready.
 */
export function denseAvailability(health: HealthCapabilities, collection: CollectionCapabilities | null): Availability {
  const feature = health.features.dense_retrieval;
  if (!collection) return feature?.available ? OK : no(feature?.reason ?? 'no embedding model is available');
  if (!collection.embedder) return no(`the collection "${collection.name}" has no embeddings (its documents were indexed without an embedding model)`);
  const model = health.models.find((m) => (m.id ?? m.name) === collection.embedder);
  if (model) {
    if (model.state === 'ready') return OK;
    if (model.state === 'loading') return no(`the embedding model ${collection.embedder} is still loading`);
    return no(`the embedding model that indexed the collection (${collection.embedder}) is ${model.state}${model.reason ? `: ${model.reason}` : ''}`);
  }
  // Every configured embedder is in the list (the embeddings service too): this one is not configured here.
  return no(`the embedding model that indexed the collection (${collection.embedder}) is not configured on this server`);
}

export function rerankAvailability(health: HealthCapabilities): Availability {
  const feature = health.features.reranking;
  return feature?.available ? OK : no(feature?.reason ?? 'no reranker model is available');
}

/** A variant's needs: dense for dense and hybrid, a reranker on top for rerank. */
export function variantAvailability(
  variant: { mode: 'lexical' | 'dense' | 'hybrid'; rerank: boolean },
  health: HealthCapabilities | null,
  collection: CollectionCapabilities | null,
): Availability {
  // Health not known (not loaded yet, or refused): nothing is held back; the API will say.
  if (!health) return OK;
  if (variant.mode !== 'lexical') {
    const dense = denseAvailability(health, collection);
    if (!dense.available) return dense;
  }
  return variant.rerank ? rerankAvailability(health) : OK;
}

/** A reason short enough for a line under a checkbox; the full text goes in its title. */
export function shortReason(reason: string, max = 200): string {
  return reason.length <= max ? reason : `${reason.slice(0, max - 1).trimEnd()}…`;
}
