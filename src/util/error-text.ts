import { redactPaths } from './fs-errors.ts';

/**
 * An error's message for logs and error texts, cut to `max` characters (no stack, no object dump).
 * File paths are replaced: fs and library errors name the files they failed on, and these texts
 * end up in client-visible messages.
 */
export function errorText(err: unknown, max = 300): string {
  return redactPaths(err instanceof Error ? err.message : String(err)).slice(0, max);
}
