/**
 * The one way this project writes a file that a reader (or the next start) must see whole or not
 * at all: write a temporary file beside the target, fsync it, rename it over the target, fsync the
 * folder. A crash at any point leaves the old file or the new one, never half of either; a failed
 * write removes its temporary file. Checksums are taken from the bytes written, so a reader can
 * verify what it loads against a manifest without hashing twice.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { setImmediate as yieldTurn } from 'node:timers/promises';
import { throwIfAborted } from './abort.ts';

export interface FileDigest {
  bytes: number;
  sha256: string;
}

/** A temporary name beside `file`, unique per process and call, so concurrent writers never share one. */
export function tempPathFor(file: string, tag = 'tmp'): string {
  return `${file}.${tag}-p${process.pid}-${randomBytes(4).toString('hex')}`;
}

/** Bytes written and hashed per turn of the event loop: hashing tens of MB at once holds it ~100 ms. */
const WRITE_PIECE = 4 << 20;

/**
 * Writes `data` to `file` (fsynced unless `sync` is false) and returns its digest, in pieces of
 * WRITE_PIECE with a turn of the event loop between them; `signal` stops the write between pieces
 * (what: its error text).
 */
export async function writeFileSynced(file: string, data: string | Uint8Array, flag: 'w' | 'wx' = 'w', signal?: AbortSignal, what = 'Writing the file', sync = true): Promise<FileDigest> {
  const buf = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  const hash = createHash('sha256');
  const fh = await fs.open(file, flag);
  try {
    if (!(buf instanceof Uint8Array)) throw new TypeError('writeFileSynced: data is neither a string nor bytes');
    for (let at = 0; at < buf.byteLength; at += WRITE_PIECE) {
      const piece = buf.subarray(at, Math.min(buf.byteLength, at + WRITE_PIECE));
      hash.update(piece);
      await fh.write(piece);
      if (at + WRITE_PIECE < buf.byteLength) {
        await yieldTurn();
        throwIfAborted(signal, what);
      }
    }
    if (sync) await fh.sync();
  } finally {
    await fh.close();
  }
  return { bytes: buf.byteLength, sha256: hash.digest('hex') };
}

/** fsyncs an existing file (written by a library that does not sync, e.g. a native index writer). */
export async function fsyncFile(file: string): Promise<void> {
  const fh = await fs.open(file, 'r+');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** fsyncs a folder so a rename inside it survives a power cut; filesystems that refuse are tolerated. */
export async function fsyncDir(dir: string): Promise<void> {
  let fh: fs.FileHandle | null = null;
  try {
    fh = await fs.open(dir, 'r');
    await fh.sync();
  } catch {
    // Some filesystems refuse fsync on folders; the rename itself is still atomic.
  } finally {
    await fh?.close();
  }
}

/** The sha256 and size of a file, streamed in 1 MiB reads (never the whole file in memory). */
export async function digestFile(file: string): Promise<FileDigest> {
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of createReadStream(file, { highWaterMark: 1 << 20 })) {
    hash.update(chunk as Buffer);
    bytes += (chunk as Buffer).length;
  }
  return { bytes, sha256: hash.digest('hex') };
}

/**
 * Writes `data` to `file` atomically (temp, fsync, rename, folder fsync) and returns its digest.
 * The folder is created when missing.
 */
export async function writeFileAtomic(file: string, data: string | Uint8Array): Promise<FileDigest> {
  const dir = path.dirname(file);
  await fs.mkdir(dir, { recursive: true });
  const tmp = tempPathFor(file);
  try {
    const digest = await writeFileSynced(tmp, data, 'wx');
    await fs.rename(tmp, file);
    await fsyncDir(dir);
    return digest;
  } catch (err) {
    await fs.rm(tmp, { force: true }).catch(() => {});
    throw err;
  }
}

/**
 * Moves an already written and fsynced temporary file into place (rename, folder fsync), removing
 * it when the rename fails. For writers that produce the temporary file themselves (a stream, a
 * native library).
 */
export async function commitTempFile(tmp: string, file: string): Promise<void> {
  try {
    await fs.rename(tmp, file);
  } catch (err) {
    await fs.rm(tmp, { force: true }).catch(() => {});
    throw err;
  }
  await fsyncDir(path.dirname(file));
}
