/**
 * `rag-document-server hash-key [KEY]`: prints a key (a new random one unless given) and the
 * `sha256:` hash to put in API_KEYS_FILE. The key goes to the client; only the hash to the file.
 */
import { hashKey, newKey } from './key-hash.ts';

export function hashKeyCommand(args: readonly string[], out: (s: string) => void): number {
  const given = args.find((a) => !a.startsWith('-'));
  if (args.includes('--help') || args.includes('-h')) {
    out('Usage: rag-document-server hash-key [KEY]\nPrints a new random key (or KEY) and its hash for API_KEYS_FILE.\n');
    return 0;
  }
  const key = given ?? newKey();
  out(`key:  ${key}\nhash: ${hashKey(key)}\n`);
  return 0;
}
