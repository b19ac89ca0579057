/**
 * Reading a response body with a byte cap: refused up front when the declared Content-Length is
 * over the cap, and reading stops (the stream is cancelled) at the first chunk past it. Works on
 * Node streams (undici's request) and web streams (fetch) alike. Callers map BodyTooLargeError
 * to their own coded error.
 */

export class BodyTooLargeError extends Error {
  constructor(
    readonly limit: number,
    /** The Content-Length that was declared, when that is what exceeded the limit. */
    readonly declared?: number,
  ) {
    super(declared !== undefined ? `body of ${declared} bytes is larger than ${limit} bytes` : `body is larger than ${limit} bytes`);
    this.name = 'BodyTooLargeError';
  }
}

/** The Content-Length a response declares, when it declares a valid one. */
export function declaredLength(contentLength: string | string[] | null | undefined): number | undefined {
  const v = Array.isArray(contentLength) ? contentLength[0] : contentLength;
  if (v === null || v === undefined || v.trim() === '') return undefined;
  const n = Number(v);
  return Number.isFinite(n) && n >= 0 ? n : undefined;
}

/** Throws BodyTooLargeError when a declared Content-Length exceeds `max`. */
export function checkDeclaredLength(contentLength: string | string[] | null | undefined, max: number): void {
  const declared = declaredLength(contentLength);
  if (declared !== undefined && declared > max) throw new BodyTooLargeError(max, declared);
}

/**
 * All chunks of `body` as one Buffer, at most `max` bytes; `onChunk` sees each chunk (e.g. to hash
 * it). Leaving the loop early cancels the stream.
 */
export async function readBounded(body: AsyncIterable<Uint8Array>, max: number, onChunk?: (chunk: Uint8Array) => void): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of body) {
    total += chunk.byteLength;
    if (total > max) throw new BodyTooLargeError(max);
    onChunk?.(chunk);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, total);
}
