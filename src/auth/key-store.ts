/**
 * The keys a server accepts: plain API_KEYS (full access, as before scopes) and API_KEYS_FILE
 * (scoped, stored as hashes). reload() reads the file again (SIGHUP, see plugins/auth.ts): a
 * file that fails to parse leaves the keys as they were, so a typo does not lock everyone out.
 */
import type { Config } from '../config.ts';
import { ACTIONS } from './actions.ts';
import { findDigest, hashDigest, hashKey } from './key-hash.ts';
import { readKeyFile, type KeyEntry } from './key-file.ts';
import { FULL_ACCESS, type Principal } from './principal.ts';

export type Authentication = { ok: true; principal: Principal } | { ok: false; reason: 'missing' | 'invalid' | 'expired'; name?: string };

interface Loaded {
  entries: KeyEntry[];
  digests: Buffer[];
  principals: Principal[];
}

function load(entries: KeyEntry[]): Loaded {
  return {
    entries,
    digests: entries.map((e) => hashDigest(e.hash)),
    principals: entries.map((e) => Object.freeze({ name: e.name, actions: Object.freeze([...e.actions]), collections: Object.freeze([...e.collections]), expiresAt: e.expiresAt })),
  };
}

/** Plain API_KEYS: each a full-access key named by its position. */
function plainEntries(keys: readonly string[]): KeyEntry[] {
  return keys.map((key, i) => ({ name: `API_KEYS[${i + 1}]`, hash: hashKey(key), actions: [...ACTIONS], collections: ['*'], expiresAt: null }));
}

export class KeyStore {
  private loaded: Loaded;
  private readonly plain: KeyEntry[];

  constructor(private readonly config: Pick<Config, 'apiKeys' | 'API_KEYS_FILE'>, private readonly now: () => number = Date.now) {
    this.plain = plainEntries(config.apiKeys);
    this.loaded = load([...this.plain, ...(config.API_KEYS_FILE ? readKeyFile(config.API_KEYS_FILE) : [])]);
  }

  /** Whether any key is configured (none: auth is off and every caller has full access). */
  get enabled(): boolean {
    return this.loaded.entries.length > 0;
  }

  get size(): number {
    return this.loaded.entries.length;
  }

  /** Reads API_KEYS_FILE again; throws (keeping the current keys) when it is wrong. */
  reload(): number {
    if (!this.config.API_KEYS_FILE) return this.size;
    this.loaded = load([...this.plain, ...readKeyFile(this.config.API_KEYS_FILE)]);
    return this.size;
  }

  authenticate(candidate: string | undefined): Authentication {
    if (!this.enabled) return { ok: true, principal: FULL_ACCESS };
    if (candidate === undefined || candidate === '') return { ok: false, reason: 'missing' };
    const { digests, principals } = this.loaded;
    const i = findDigest(digests, candidate);
    if (i < 0) return { ok: false, reason: 'invalid' };
    const principal = principals[i]!;
    if (principal.expiresAt !== null && Date.parse(principal.expiresAt) <= this.now()) return { ok: false, reason: 'expired', name: principal.name };
    return { ok: true, principal };
  }
}

/** Keys configured (plain and in the file), for health reports; a file that fails to read counts none. */
export function configuredKeyCount(config: Pick<Config, 'apiKeys' | 'API_KEYS_FILE'>): number {
  let fileKeys = 0;
  try {
    fileKeys = config.API_KEYS_FILE ? readKeyFile(config.API_KEYS_FILE).length : 0;
  } catch {
    // The server started with a valid file; a broken edit since is reported by SIGHUP's log.
  }
  return config.apiKeys.length + fileKeys;
}
