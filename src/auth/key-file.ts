/**
 * API_KEYS_FILE: the scoped keys, as JSON (`.json`, or any file starting with `{` or `[`) or YAML
 * (`.yaml` / `.yml`). Either `{ "keys": [...] }` or the list itself; each key:
 *
 *   name: search-bot            # unique; shown in logs and by GET /v1/whoami
 *   hash: sha256:<64 hex>       # `rag-document-server hash-key` makes a key and its hash
 *   actions: [search]           # search, ingest, delete, admin
 *   collections: ["team-a-*"]   # "*", exact names, or prefixes ending in "*"; default ["*"]
 *   expires_at: 2027-01-01T00:00:00Z   # optional
 *
 * Keys are never stored in clear. A file that does not parse, or any key that is wrong, fails
 * the whole file with a message naming the entry: a half-read key file would silently lock
 * people out or let them in.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { COLLECTION_NAME_PATTERN } from '../kb/types.ts';
import { isAction, type Action } from './actions.ts';
import { HASH_PATTERN } from './key-hash.ts';

export interface KeyEntry {
  name: string;
  hash: string;
  actions: Action[];
  collections: string[];
  expiresAt: string | null;
}

/** Key files are small; a bigger one is a mistake (a wrong path), not a key list. */
export const MAX_KEY_FILE_BYTES = 1024 * 1024;
export const MAX_KEYS = 10_000;

export class KeyFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KeyFileError';
  }
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$/;
/** Names of the principals without a key (src/auth/principal.ts FULL_ACCESS, NO_ACCESS). */
const RESERVED = ['local', 'anonymous'];
const COLLECTION = new RegExp(COLLECTION_NAME_PATTERN);
/** A prefix pattern: what comes before `*` may be any start of a collection name. */
const PREFIX_BODY = /^[a-z0-9][a-z0-9_-]{0,62}$/;

function validPattern(p: unknown): p is string {
  if (typeof p !== 'string') return false;
  if (p === '*') return true;
  if (p.endsWith('*')) return PREFIX_BODY.test(p.slice(0, -1));
  return COLLECTION.test(p);
}

function parseEntry(raw: unknown, at: string): KeyEntry {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new KeyFileError(`${at}: must be an object with name, hash and actions`);
  const o = raw as Record<string, unknown>;
  const unknownField = Object.keys(o).find((k) => !['name', 'hash', 'actions', 'collections', 'expires_at'].includes(k));
  if (unknownField) throw new KeyFileError(`${at}: unknown field ${JSON.stringify(unknownField)}${unknownField === 'key' ? ' (store the hash, never the key: see hash-key)' : ''}`);
  if (typeof o.name !== 'string' || !NAME.test(o.name)) throw new KeyFileError(`${at}: name must be 1-64 letters, digits, "_", ".", "@" or "-"`);
  if (RESERVED.includes(o.name)) throw new KeyFileError(`${at}: the name ${JSON.stringify(o.name)} is reserved (it means no key)`);
  const where = `${at} (${o.name})`;
  if (typeof o.hash !== 'string' || !HASH_PATTERN.test(o.hash)) throw new KeyFileError(`${where}: hash must be "sha256:" and 64 lowercase hex digits`);
  if (!Array.isArray(o.actions) || o.actions.length === 0 || !o.actions.every(isAction)) {
    throw new KeyFileError(`${where}: actions must be a non-empty list of search, ingest, delete, admin`);
  }
  const collections = o.collections ?? ['*'];
  if (!Array.isArray(collections) || collections.length === 0 || !collections.every(validPattern)) {
    throw new KeyFileError(`${where}: collections must be a non-empty list of "*", collection names, or prefixes ending in "*"`);
  }
  let expiresAt: string | null = null;
  if (o.expires_at !== undefined && o.expires_at !== null) {
    // YAML reads an unquoted timestamp as a string; JSON gives a string.
    const value = o.expires_at instanceof Date ? o.expires_at.toISOString() : o.expires_at;
    const ms = typeof value === 'string' ? Date.parse(value) : NaN;
    if (Number.isNaN(ms)) throw new KeyFileError(`${where}: expires_at must be an ISO 8601 date-time`);
    expiresAt = new Date(ms).toISOString();
  }
  return { name: o.name, hash: o.hash, actions: [...new Set(o.actions as Action[])], collections: [...new Set(collections as string[])], expiresAt };
}

/**
 * The YAML parser, required on the first YAML key file: the config module loads this one at every
 * start, and YAML (0.3 MB of modules, kept out of the bundle by scripts/build.mjs) is only needed
 * by servers whose key file is YAML.
 */
let yaml: typeof import('yaml') | undefined;
const parseYaml = (text: string, options: import('yaml').ParseOptions & import('yaml').DocumentOptions & import('yaml').ToJSOptions): unknown =>
  (yaml ??= createRequire(import.meta.url)('yaml') as typeof import('yaml')).parse(text, options);

function parseText(text: string, file: string): unknown {
  const json = /\.json$/i.test(file) || /^\s*[[{]/.test(text);
  try {
    return json ? JSON.parse(text) : parseYaml(text, { maxAliasCount: 100 });
  } catch (err) {
    throw new KeyFileError(`${file} is not valid ${json ? 'JSON' : 'YAML'}: ${(err as Error).message.split('\n')[0]}`);
  }
}

export function parseKeyFile(text: string, file = 'API_KEYS_FILE'): KeyEntry[] {
  const doc = parseText(text, file);
  const list = Array.isArray(doc) ? doc : doc !== null && typeof doc === 'object' ? (doc as { keys?: unknown }).keys : undefined;
  if (!Array.isArray(list)) throw new KeyFileError(`${file}: expected a list of keys, or an object with "keys"`);
  if (list.length > MAX_KEYS) throw new KeyFileError(`${file}: at most ${MAX_KEYS} keys (got ${list.length})`);
  const entries = list.map((raw, i) => parseEntry(raw, `${file}: key ${i + 1}`));
  const names = new Set<string>();
  const hashes = new Set<string>();
  for (const e of entries) {
    if (names.has(e.name)) throw new KeyFileError(`${file}: the name ${JSON.stringify(e.name)} is used twice`);
    if (hashes.has(e.hash)) throw new KeyFileError(`${file}: key ${JSON.stringify(e.name)} has the same hash as another key`);
    names.add(e.name);
    hashes.add(e.hash);
  }
  return entries;
}

export function readKeyFile(file: string): KeyEntry[] {
  let text: string;
  try {
    const bytes = readFileSync(file);
    if (bytes.byteLength > MAX_KEY_FILE_BYTES) throw new KeyFileError(`${file}: larger than ${MAX_KEY_FILE_BYTES} bytes`);
    text = bytes.toString('utf8');
  } catch (err) {
    if (err instanceof KeyFileError) throw err;
    throw new KeyFileError(`${file} cannot be read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  return parseKeyFile(text, file);
}
