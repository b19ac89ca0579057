/**
 * Compression bombs without inflating anything here: zlib, gzip and brotli streams of many zero
 * bytes, built from the project's repeated raw-deflate block (test/fixtures-gen) so that gigabytes
 * cost megabytes and milliseconds. Checksums are correct, so only size limits can stop them.
 */
import zlib from 'node:zlib';
import { zeroDeflateStream } from '../fixtures-gen/make-office-fixtures.ts';

const MIB = 1024 * 1024;

/** zlib-wrapped (PDF FlateDecode, PNG IDAT) zeros with the correct Adler-32. */
export function zlibZeros(mib: number): Buffer {
  const adler = Buffer.alloc(4);
  // Adler-32 of n zero bytes: a stays 1, b adds a once per byte.
  adler.writeUInt32BE((((mib * MIB) % 65521) * 65536 + 1) >>> 0);
  return Buffer.concat([Buffer.from([0x78, 0xda]), zeroDeflateStream(mib), adler]);
}

/** gzip-wrapped zeros; the CRC-32 is computed over zero blocks, never over the whole. */
export function gzipZeros(mib: number): Buffer {
  const zeros = Buffer.alloc(MIB);
  let crc = 0;
  for (let i = 0; i < mib; i++) crc = zlib.crc32(zeros, crc);
  const trailer = Buffer.alloc(8);
  trailer.writeUInt32LE(crc >>> 0, 0);
  trailer.writeUInt32LE((mib * MIB) % 2 ** 32, 4);
  return Buffer.concat([Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 2, 0xff]), zeroDeflateStream(mib), trailer]);
}

/** Brotli of zeros, compressed as a stream so the zeros are never held at once (~4 s per GiB). */
export async function brotliZeros(mib: number): Promise<Buffer> {
  const enc = zlib.createBrotliCompress({ params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 5 } });
  const out: Buffer[] = [];
  enc.on('data', (d: Buffer) => out.push(d));
  const done = new Promise<void>((resolve, reject) => {
    enc.once('end', resolve);
    enc.once('error', reject);
  });
  const zeros = Buffer.alloc(16 * MIB);
  for (let n = 0; n < mib; n += 16) {
    if (!enc.write(zeros)) await new Promise((r) => enc.once('drain', r));
  }
  enc.end();
  await done;
  return Buffer.concat(out);
}
