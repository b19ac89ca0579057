/**
 * Rebuild a zip in memory with some entries replaced. Used to hand a third-party OOXML reader a
 * document we have annotated (DOCX numbering labels, equations as text) without touching disk.
 * Unchanged entries are copied as their original compressed bytes; replaced ones are stored
 * uncompressed because the archive only lives for one conversion and deflating megabytes of XML
 * would cost more than it saves. The input must already have passed the zip guard (assertSafeZip),
 * which bounds entry count and sizes, so 32-bit fields always suffice here.
 */
import zlib from 'node:zlib';
import type { ZipEntryInfo } from '../shared/zip.ts';

const SIG_LOCAL = 0x04034b50;
const SIG_CENTRAL = 0x02014b50;
const SIG_EOCD = 0x06054b50;
const SIG_DESCRIPTOR = 0x08074b50;
const FLAG_UTF8 = 0x800;

interface Written {
  name: Buffer;
  method: number;
  time: number;
  date: number;
  crc: number;
  compressedSize: number;
  uncompressedSize: number;
  offset: number;
}

/** CRC of an unchanged entry: in its local header, or in the data descriptor when bit 3 is set. */
function originalCrc(bytes: Buffer, e: ZipEntryInfo): number {
  const flags = bytes.readUInt16LE(e.localHeaderOffset + 6);
  if ((flags & 0x8) === 0) return bytes.readUInt32LE(e.localHeaderOffset + 14);
  const at = e.dataOffset + e.compressedSize;
  if (at + 8 <= bytes.length && bytes.readUInt32LE(at) === SIG_DESCRIPTOR) return bytes.readUInt32LE(at + 4);
  return at + 4 <= bytes.length ? bytes.readUInt32LE(at) : 0;
}

/**
 * A new archive with the same entries in the same order, the ones named in `replace` carrying the
 * new contents. Entries in `replace` that the archive lacks are ignored.
 */
export function rewriteZip(bytes: Buffer, entries: ZipEntryInfo[], replace: Map<string, Buffer>): Buffer {
  const parts: Buffer[] = [];
  const written: Written[] = [];
  let offset = 0;
  for (const e of entries) {
    const name = Buffer.from(e.name, 'utf8');
    const time = bytes.readUInt16LE(e.localHeaderOffset + 10);
    const date = bytes.readUInt16LE(e.localHeaderOffset + 12);
    const fresh = replace.get(e.name);
    const data = fresh ?? bytes.subarray(e.dataOffset, e.dataOffset + e.compressedSize);
    const w: Written = {
      name,
      method: fresh ? 0 : e.method,
      time,
      date,
      crc: fresh ? zlib.crc32(fresh) >>> 0 : originalCrc(bytes, e),
      compressedSize: data.length,
      uncompressedSize: fresh ? fresh.length : e.uncompressedSize,
      offset,
    };
    const header = Buffer.alloc(30);
    header.writeUInt32LE(SIG_LOCAL, 0);
    header.writeUInt16LE(20, 4);
    header.writeUInt16LE(FLAG_UTF8, 6);
    header.writeUInt16LE(w.method, 8);
    header.writeUInt16LE(time, 10);
    header.writeUInt16LE(date, 12);
    header.writeUInt32LE(w.crc, 14);
    header.writeUInt32LE(w.compressedSize, 18);
    header.writeUInt32LE(w.uncompressedSize, 22);
    header.writeUInt16LE(name.length, 26);
    header.writeUInt16LE(0, 28);
    parts.push(header, name, data);
    offset += header.length + name.length + data.length;
    written.push(w);
  }
  const cdStart = offset;
  for (const w of written) {
    const c = Buffer.alloc(46);
    c.writeUInt32LE(SIG_CENTRAL, 0);
    c.writeUInt16LE(20, 4);
    c.writeUInt16LE(20, 6);
    c.writeUInt16LE(FLAG_UTF8, 8);
    c.writeUInt16LE(w.method, 10);
    c.writeUInt16LE(w.time, 12);
    c.writeUInt16LE(w.date, 14);
    c.writeUInt32LE(w.crc, 16);
    c.writeUInt32LE(w.compressedSize, 20);
    c.writeUInt32LE(w.uncompressedSize, 24);
    c.writeUInt16LE(w.name.length, 28);
    c.writeUInt32LE(w.offset, 42);
    parts.push(c, w.name);
    offset += c.length + w.name.length;
  }
  const eocd = Buffer.alloc(22);
  eocd.writeUInt32LE(SIG_EOCD, 0);
  eocd.writeUInt16LE(written.length, 8);
  eocd.writeUInt16LE(written.length, 10);
  eocd.writeUInt32LE(offset - cdStart, 12);
  eocd.writeUInt32LE(cdStart, 16);
  parts.push(eocd);
  return Buffer.concat(parts);
}
