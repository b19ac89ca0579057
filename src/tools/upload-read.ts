/**
 * Reading an uploaded file off the socket without a long pause of the event loop: its SHA-256 is
 * updated chunk by chunk as the bytes arrive (hashing 50 MB at once holds the loop for 100 ms or
 * more), the chunks are joined once at the end (one allocation, never a growing buffer copied on
 * every chunk), and a body over the limit stops being read as soon as it passes it.
 */
import { setImmediate } from 'node:timers/promises';
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';

export interface ReadUpload {
  bytes: Buffer;
  sha256: string;
}

/** An over-limit body: the caller words the error for its transport. */
export class UploadTooLarge extends Error {
  constructor(readonly maxBytes: number) {
    super(`upload larger than ${maxBytes} bytes`);
  }
}

export async function readHashed(stream: Readable, maxBytes: number): Promise<ReadUpload> {
  const hash = createHash('sha256');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) {
      stream.destroy();
      throw new UploadTooLarge(maxBytes);
    }
    hash.update(chunk);
    chunks.push(chunk);
  }
  return { bytes: chunks.length === 1 ? chunks[0]! : await joinSliced(chunks, size), sha256: hash.digest('hex') };
}

/** Bytes copied between yields when joining an upload's chunks (a 50 MB join in one go: ~50 ms). */
const JOIN_SLICE_BYTES = 4 * 1024 * 1024;

/** Buffer.concat in slices, yielding to the event loop between them. */
async function joinSliced(chunks: readonly Buffer[], size: number): Promise<Buffer> {
  if (size <= JOIN_SLICE_BYTES) return Buffer.concat(chunks, size);
  const out = Buffer.allocUnsafe(size);
  let at = 0;
  let sinceYield = 0;
  for (const c of chunks) {
    c.copy(out, at);
    at += c.length;
    sinceYield += c.length;
    if (sinceYield >= JOIN_SLICE_BYTES) {
      sinceYield = 0;
      await setImmediate();
    }
  }
  return out;
}

/** A raw upload body as the content-type parser hands it on: the bytes and their digest. */
export class RawUpload {
  constructor(
    readonly bytes: Buffer,
    readonly sha256: string,
  ) {}
}
