/**
 * The chunks of a per-document index (it has no SQLite rows): a JSON array with one chunk a line,
 * written and read in slices, hashed as it goes so the snapshot manifest can check it.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import { throwIfAborted } from '../../util/abort.ts';
import type { FileDigest } from '../../util/atomic-file.ts';
import { yieldToEventLoopEvery } from '../../util/yield.ts';
import type { Chunk } from '../types.ts';

export const CHUNKS_FILE = 'chunks.json';

const WRITE_BATCH_BYTES = 1 << 20;

/**
 * Chunks as a JSON array with one chunk a line ("[", chunks joined by ",\n", "]"), written and
 * hashed in batches with a yield between: a big document has 100k chunks, and one stringify of
 * them all would stall the event loop for a second. `sync: false` skips the fsync, for a snapshot
 * written without them (SnapshotWriter.begin's `durable`).
 */
export async function writeChunks(file: string, chunks: readonly Chunk[], signal?: AbortSignal, sync = true): Promise<FileDigest> {
  const hash = createHash('sha256');
  let bytes = 0;
  const fh = await fs.open(file, 'wx');
  try {
    let batch: string[] = ['[\n'];
    let batchChars = 2;
    const flush = async () => {
      const buf = Buffer.from(batch.join(''), 'utf8');
      batch = [];
      batchChars = 0;
      hash.update(buf);
      bytes += buf.byteLength;
      await fh.write(buf);
      throwIfAborted(signal, 'Saving the index');
    };
    for (let i = 0; i < chunks.length; i++) {
      const line = `${JSON.stringify(chunks[i])}${i + 1 < chunks.length ? ',' : ''}\n`;
      batch.push(line);
      batchChars += line.length;
      if (batchChars >= WRITE_BATCH_BYTES) await flush();
    }
    batch.push(']\n');
    await flush();
    if (sync) await fh.sync();
  } finally {
    await fh.close();
  }
  return { bytes, sha256: hash.digest('hex') };
}

/** Parses chunks.json (the layout writeChunks makes) while hashing it, in slices: one pass, bounded pauses. */
export async function readChunks(file: string, signal?: AbortSignal): Promise<{ chunks: Chunk[]; digest: FileDigest }> {
  const hash = createHash('sha256');
  const chunks: Chunk[] = [];
  let bytes = 0;
  let carry: Buffer | null = null;
  let lines = 0;
  let closed = false;
  const tick = yieldToEventLoopEvery(10);
  for await (const piece of createReadStream(file, { highWaterMark: 1 << 20 }) as AsyncIterable<Buffer>) {
    hash.update(piece);
    bytes += piece.byteLength;
    const buf: Buffer = carry ? Buffer.concat([carry, piece]) : piece;
    let start = 0;
    for (let nl = buf.indexOf(10, start); nl >= 0; nl = buf.indexOf(10, start)) {
      const line = buf.toString('utf8', start, nl);
      start = nl + 1;
      if (closed) throw new Error('chunks file continues after its end');
      if (lines++ === 0) {
        if (line !== '[') throw new Error('chunks file does not start an array');
      } else if (line === ']') {
        closed = true;
      } else {
        chunks.push(JSON.parse(line.endsWith(',') ? line.slice(0, -1) : line) as Chunk);
      }
      if (await tick()) throwIfAborted(signal, 'Loading the index');
    }
    carry = start < buf.byteLength ? buf.subarray(start) : null;
  }
  if (carry || !closed) throw new Error('chunks file is truncated');
  return { chunks, digest: { bytes, sha256: hash.digest('hex') } };
}
