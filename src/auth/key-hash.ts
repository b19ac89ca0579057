/**
 * API keys are stored as `sha256:<64 hex>` of the key. A generated key carries 256 random bits,
 * so a fast hash cannot be brute-forced, and every request can be checked against every key
 * without the tens of milliseconds per key a password hash (scrypt) would cost. A key is compared
 * against every stored hash without an early exit, in constant time, so timing says nothing about
 * which key (if any) matched.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export const HASH_PATTERN = /^sha256:[0-9a-f]{64}$/;

export function hashKey(key: string): string {
  return `sha256:${createHash('sha256').update(key, 'utf8').digest('hex')}`;
}

/** A new random key: `rag_` and 43 base64url characters (256 bits). */
export function newKey(): string {
  return `rag_${randomBytes(32).toString('base64url')}`;
}

/** The stored hash's digest bytes. */
export function hashDigest(hash: string): Buffer {
  return Buffer.from(hash.slice('sha256:'.length), 'hex');
}

/** Index of the digest matching the candidate, or -1; every digest is compared. */
export function findDigest(digests: readonly Buffer[], candidate: string): number {
  const c = createHash('sha256').update(candidate, 'utf8').digest();
  let found = -1;
  for (let i = 0; i < digests.length; i++) {
    if (timingSafeEqual(digests[i]!, c) && found === -1) found = i;
  }
  return found;
}
