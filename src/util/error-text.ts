/** An error's message for logs and error texts, cut to `max` characters (no stack, no object dump). */
export function errorText(err: unknown, max = 300): string {
  return (err instanceof Error ? err.message : String(err)).slice(0, max);
}
