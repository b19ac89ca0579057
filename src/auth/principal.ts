/**
 * Who a call is made by: the key's name, its actions and the collections it may see. Every
 * transport (REST, MCP over HTTP, MCP over stdio, the SSE job stream) carries one, so tools, the
 * job queue and a later per-key quota all read the same identity.
 *
 * Visibility comes from the name alone: a collection outside the key's patterns answers 404
 * NOT_FOUND exactly as a missing one does, so its existence does not leak. A visible collection
 * whose operation needs an action the key lacks answers 403 FORBIDDEN.
 */
import { toolError } from '../errors.ts';
import { ACTIONS, type Action } from './actions.ts';
import type { Whoami } from '../contract/whoami-schemas.ts';

export interface Principal {
  /** The key's name from API_KEYS_FILE, `API_KEYS[n]` for a plain key, `local` when auth is off. */
  name: string;
  actions: readonly Action[];
  /** `*`, exact names, or prefixes ending in `*` (`team-a-*`). */
  collections: readonly string[];
  /** ISO 8601; null: never expires. */
  expiresAt: string | null;
}

/** Auth off (no keys configured): one user who may do everything, as before keys had scopes. */
export const FULL_ACCESS: Principal = Object.freeze({ name: 'local', actions: ACTIONS, collections: ['*'], expiresAt: null });

/** The routes left open with auth on (/health, the console's files) carry this: nothing is allowed. */
export const NO_ACCESS: Principal = Object.freeze({ name: 'anonymous', actions: [], collections: [], expiresAt: null });

export function matchesPattern(pattern: string, name: string): boolean {
  if (pattern === '*') return true;
  if (pattern.endsWith('*')) return name.startsWith(pattern.slice(0, -1));
  return pattern === name;
}

export function maySeeCollection(p: Principal, name: string): boolean {
  return p.collections.some((pattern) => matchesPattern(pattern, name));
}

/** Whether the key may see every collection (there is nothing to filter). */
export function seesAllCollections(p: Principal): boolean {
  return p.collections.includes('*');
}

/** Whether the key has at least one of the actions. */
export function hasAnyAction(p: Principal, needed: Action | readonly Action[]): boolean {
  const list = typeof needed === 'string' ? [needed] : needed;
  return list.some((a) => p.actions.includes(a));
}

const describe = (needed: Action | readonly Action[]) => (typeof needed === 'string' ? `"${needed}"` : needed.map((a) => `"${a}"`).join(' or '));

/** FORBIDDEN unless the key has one of the actions. */
export function requireAction(p: Principal, needed: Action | readonly Action[], what: string): void {
  if (!hasAnyAction(p, needed)) throw toolError('FORBIDDEN', `The API key "${p.name}" may not ${what}: it needs the ${describe(needed)} action`);
}

/**
 * NOT_FOUND (worded as the knowledge base words a missing collection) when the key may not see the
 * collection; FORBIDDEN when it may see it but lacks the action.
 */
export function requireCollection(p: Principal, collection: string, needed: Action | readonly Action[], what: string): void {
  if (!maySeeCollection(p, collection)) throw toolError('NOT_FOUND', `Collection "${collection}" not found`);
  requireAction(p, needed, what);
}

/** A job of an invisible collection is reported missing, worded as the knowledge base does. */
export function requireJobVisible(p: Principal, job: { id: string; collection: string }): void {
  if (!maySeeCollection(p, job.collection)) throw toolError('NOT_FOUND', `Job ${job.id} not found`);
}

/** The public view of a principal (GET /v1/whoami, the console). */
export function principalView(p: Principal, authEnabled: boolean): Whoami {
  return { name: p.name, auth: authEnabled, actions: [...p.actions], collections: [...p.collections], expires_at: p.expiresAt };
}
