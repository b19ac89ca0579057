/**
 * Zip guard for OOXML containers (DOCX, PPTX, XLSX). We read the central directory ourselves and
 * refuse archives whose declared shape is dangerous (too many entries, too much declared data,
 * compression ratios only bombs reach), then inflate with a hard cap on the ACTUAL output, because
 * declared sizes are written by whoever made the file and can lie.
 */
import zlib from 'node:zlib';
import { toolError } from '../../errors.ts';
import { hasZipSignature } from './signatures.ts';

export interface ZipLimits {
  /** Most entries an archive may list. */
  maxEntries: number;
  /** Most bytes all entries together may inflate to (declared, and actual when test-inflated). */
  maxTotalUncompressed: number;
  /** Highest uncompressed/compressed ratio, per entry and for the whole archive. */
  maxRatio: number;
  /**
   * Entries smaller than this are exempt from the per-entry ratio rule: a few KB of repetitive XML
   * can compress 200:1 and cannot hurt anyone; bombs need volume.
   */
  ratioMinBytes: number;
}

export const DEFAULT_ZIP_LIMITS: Readonly<ZipLimits> = Object.freeze({
  maxEntries: 10_000,
  maxTotalUncompressed: 300 * 1024 * 1024,
  maxRatio: 100,
  ratioMinBytes: 1024 * 1024,
});

export interface ZipEntryInfo {
  name: string;
  /** 0 = stored, 8 = deflate; anything else is refused when read. */
  method: number;
  compressedSize: number;
  /** As declared by the central directory; verified against the actual output when inflated. */
  uncompressedSize: number;
  /** Offset of the local file header. */
  localHeaderOffset: number;
  /** Offset of the entry's compressed data (after the local header). */
  dataOffset: number;
  encrypted: boolean;
  isDirectory: boolean;
}

const SIG_EOCD = 0x06054b50;
const SIG_ZIP64_EOCD = 0x06064b50;
const SIG_ZIP64_LOCATOR = 0x07064b50;
const SIG_CENTRAL = 0x02014b50;
const SIG_LOCAL = 0x04034b50;

function corrupt(reason: string): never {
  throw toolError('PROCESSING_ERROR', `Invalid or corrupt zip archive: ${reason}`);
}

function tooLarge(reason: string): never {
  throw toolError('PAYLOAD_TOO_LARGE', `Archive refused: ${reason}`);
}

function u64(buf: Buffer, off: number): number {
  const v = buf.readBigUInt64LE(off);
  if (v > BigInt(Number.MAX_SAFE_INTEGER)) tooLarge('zip64 size field beyond what can be processed');
  return Number(v);
}

/** True when the bytes start like a zip (local header, or the empty-archive EOCD). */
export function looksLikeZip(bytes: Buffer): boolean {
  return bytes.length >= 22 && hasZipSignature(bytes);
}

function findEocd(bytes: Buffer): number {
  // The EOCD sits in the last 22 + 65,535 (comment) bytes; scan backwards.
  const min = Math.max(0, bytes.length - 22 - 0xffff);
  for (let i = bytes.length - 22; i >= min; i--) {
    if (bytes.readUInt32LE(i) === SIG_EOCD) return i;
  }
  return -1;
}

interface Directory {
  count: number;
  cdOffset: number;
  cdSize: number;
}

function readDirectory(bytes: Buffer): Directory {
  if (bytes.length < 22) corrupt('too short');
  const eocd = findEocd(bytes);
  if (eocd < 0) corrupt('end of central directory not found');
  let count = bytes.readUInt16LE(eocd + 10);
  let cdSize = bytes.readUInt32LE(eocd + 12);
  let cdOffset = bytes.readUInt32LE(eocd + 16);
  if (count === 0xffff || cdSize === 0xffffffff || cdOffset === 0xffffffff) {
    const loc = eocd - 20;
    if (loc < 0 || bytes.readUInt32LE(loc) !== SIG_ZIP64_LOCATOR) corrupt('zip64 locator missing');
    const z64 = u64(bytes, loc + 8);
    if (z64 + 56 > bytes.length || bytes.readUInt32LE(z64) !== SIG_ZIP64_EOCD) corrupt('zip64 end record missing');
    count = u64(bytes, z64 + 32);
    cdSize = u64(bytes, z64 + 40);
    cdOffset = u64(bytes, z64 + 48);
  }
  if (cdOffset + cdSize > bytes.length) corrupt('central directory lies outside the file');
  return { count, cdOffset, cdSize };
}

/** Zip64 extra field (0x0001): 8-byte values present only for fields that are 0xFFFFFFFF. */
function applyZip64Extra(
  bytes: Buffer,
  start: number,
  end: number,
  sizes: { uncompressed: number; compressed: number; offset: number },
): void {
  let p = start;
  while (p + 4 <= end) {
    const id = bytes.readUInt16LE(p);
    const len = bytes.readUInt16LE(p + 2);
    const body = p + 4;
    if (body + len > end) break;
    if (id === 0x0001) {
      let q = body;
      const take = (): number => {
        if (q + 8 > body + len) corrupt('short zip64 extra field');
        const v = u64(bytes, q);
        q += 8;
        return v;
      };
      if (sizes.uncompressed === 0xffffffff) sizes.uncompressed = take();
      if (sizes.compressed === 0xffffffff) sizes.compressed = take();
      if (sizes.offset === 0xffffffff) sizes.offset = take();
      return;
    }
    p = body + len;
  }
}

/**
 * Parse and check the central directory. Throws PAYLOAD_TOO_LARGE when the declared shape breaks a
 * limit and PROCESSING_ERROR when the structure is broken (overlapping entries included: that is
 * how non-recursive zip bombs reuse one compressed stream for thousands of entries).
 */
export function inspectZip(bytes: Buffer, limits: Partial<ZipLimits> = {}): ZipEntryInfo[] {
  const lim = { ...DEFAULT_ZIP_LIMITS, ...limits };
  const dir = readDirectory(bytes);
  if (dir.count > lim.maxEntries) tooLarge(`${dir.count} entries exceed the limit of ${lim.maxEntries}`);

  const entries: ZipEntryInfo[] = [];
  const names = new Set<string>();
  let totalUncompressed = 0;
  let totalCompressed = 0;
  let p = dir.cdOffset;
  const cdEnd = dir.cdOffset + dir.cdSize;
  for (let i = 0; i < dir.count; i++) {
    if (p + 46 > cdEnd || bytes.readUInt32LE(p) !== SIG_CENTRAL) corrupt(`central directory entry ${i} is damaged`);
    const flags = bytes.readUInt16LE(p + 8);
    const method = bytes.readUInt16LE(p + 10);
    const sizes = {
      compressed: bytes.readUInt32LE(p + 20),
      uncompressed: bytes.readUInt32LE(p + 24),
      offset: bytes.readUInt32LE(p + 42),
    };
    const nameLen = bytes.readUInt16LE(p + 28);
    const extraLen = bytes.readUInt16LE(p + 30);
    const commentLen = bytes.readUInt16LE(p + 32);
    const nameStart = p + 46;
    if (nameStart + nameLen + extraLen + commentLen > cdEnd) corrupt(`central directory entry ${i} is truncated`);
    // Bit 11: UTF-8 names. Otherwise CP437; OOXML part names are ASCII, so latin1 is close enough.
    const name = bytes.toString(flags & 0x800 ? 'utf8' : 'latin1', nameStart, nameStart + nameLen);
    applyZip64Extra(bytes, nameStart + nameLen, nameStart + nameLen + extraLen, sizes);
    p = nameStart + nameLen + extraLen + commentLen;

    if (names.has(name)) corrupt(`duplicate entry name "${name}"`);
    names.add(name);

    const lh = sizes.offset;
    if (lh + 30 > bytes.length || bytes.readUInt32LE(lh) !== SIG_LOCAL) corrupt(`local header of "${name}" not found`);
    const dataOffset = lh + 30 + bytes.readUInt16LE(lh + 26) + bytes.readUInt16LE(lh + 28);
    if (dataOffset + sizes.compressed > bytes.length) corrupt(`data of "${name}" runs past the end of the file`);

    totalUncompressed += sizes.uncompressed;
    totalCompressed += sizes.compressed;
    if (totalUncompressed > lim.maxTotalUncompressed) {
      tooLarge(`declared uncompressed size exceeds ${lim.maxTotalUncompressed} bytes`);
    }
    if (sizes.uncompressed >= lim.ratioMinBytes && sizes.uncompressed > lim.maxRatio * Math.max(1, sizes.compressed)) {
      tooLarge(`entry "${name}" has a compression ratio above ${lim.maxRatio}:1`);
    }
    entries.push({
      name,
      method,
      compressedSize: sizes.compressed,
      uncompressedSize: sizes.uncompressed,
      localHeaderOffset: lh,
      dataOffset,
      encrypted: (flags & 1) === 1,
      isDirectory: name.endsWith('/'),
    });
  }
  if (totalUncompressed >= lim.ratioMinBytes && totalUncompressed > lim.maxRatio * Math.max(1, totalCompressed)) {
    tooLarge(`overall compression ratio above ${lim.maxRatio}:1`);
  }

  // Entries may not share bytes: each one's data must end before the next local header begins.
  const byOffset = [...entries].sort((a, b) => a.localHeaderOffset - b.localHeaderOffset);
  for (let i = 1; i < byOffset.length; i++) {
    const prev = byOffset[i - 1];
    if (prev.dataOffset + prev.compressedSize > byOffset[i].localHeaderOffset) {
      corrupt(`entries "${prev.name}" and "${byOffset[i].name}" overlap`);
    }
  }
  return entries;
}

/**
 * Inflate one entry. Output is capped at min(maxBytes, declared size): an entry that produces more
 * than it declared is refused rather than trusted.
 */
export function readZipEntry(bytes: Buffer, entry: ZipEntryInfo | string, maxBytes: number): Buffer {
  let info: ZipEntryInfo | undefined;
  if (typeof entry === 'string') {
    info = inspectZip(bytes).find((e) => e.name === entry);
    if (!info) throw toolError('PROCESSING_ERROR', `Zip entry "${entry}" not found`);
  } else {
    info = entry;
  }
  return inflateEntry(bytes, info, maxBytes);
}

function inflateEntry(bytes: Buffer, e: ZipEntryInfo, maxBytes: number): Buffer {
  if (e.encrypted) throw toolError('PROCESSING_ERROR', `Zip entry "${e.name}" is encrypted`);
  if (e.uncompressedSize > maxBytes) {
    tooLarge(`entry "${e.name}" declares ${e.uncompressedSize} bytes, more than the ${maxBytes} allowed`);
  }
  const data = bytes.subarray(e.dataOffset, e.dataOffset + e.compressedSize);
  if (e.method === 0) {
    if (data.length !== e.uncompressedSize) corrupt(`stored entry "${e.name}" has inconsistent sizes`);
    return data;
  }
  if (e.method !== 8) {
    throw toolError('PROCESSING_ERROR', `Zip entry "${e.name}" uses unsupported compression method ${e.method}`);
  }
  // One byte over the declared size is enough to prove the header lied.
  const cap = e.uncompressedSize + 1;
  let out: Buffer;
  try {
    out = zlib.inflateRawSync(data, { maxOutputLength: Math.max(1, cap), chunkSize: 64 * 1024 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') {
      throw toolError('PROCESSING_ERROR', `Zip entry "${e.name}" inflates beyond its declared size (zip bomb?)`, err);
    }
    throw toolError('PROCESSING_ERROR', `Zip entry "${e.name}" cannot be inflated: ${(err as Error).message}`, err);
  }
  if (out.length !== e.uncompressedSize) {
    throw toolError('PROCESSING_ERROR', `Zip entry "${e.name}" inflates beyond its declared size (zip bomb?)`);
  }
  return out;
}

/**
 * Inspect, then test-inflate every entry under the running actual cap. Call it before handing the
 * bytes to a third-party parser that unzips on its own (mammoth, SheetJS).
 */
export function assertSafeZip(bytes: Buffer, limits: Partial<ZipLimits> = {}): ZipEntryInfo[] {
  const lim = { ...DEFAULT_ZIP_LIMITS, ...limits };
  const entries = inspectZip(bytes, lim);
  let left = lim.maxTotalUncompressed;
  for (const e of entries) {
    if (e.isDirectory && e.compressedSize === 0) continue;
    const out = inflateEntry(bytes, e, left);
    left -= out.length;
  }
  return entries;
}

/** Inflate the entries whose names pass the filter (all when omitted), within the total cap. */
export function readZipEntries(
  bytes: Buffer,
  filter?: (name: string) => boolean,
  limits: Partial<ZipLimits> = {},
): Map<string, Buffer> {
  const lim = { ...DEFAULT_ZIP_LIMITS, ...limits };
  const result = new Map<string, Buffer>();
  let left = lim.maxTotalUncompressed;
  for (const e of inspectZip(bytes, lim)) {
    if (e.isDirectory || (filter && !filter(e.name))) continue;
    const out = inflateEntry(bytes, e, left);
    left -= out.length;
    result.set(e.name, out);
  }
  return result;
}

const MAIN_TYPES: Array<[RegExp, 'docx' | 'pptx' | 'xlsx']> = [
  [/wordprocessingml\.(document|template)\.main\+xml|ms-word\.(document|template)\.macroenabled\.main\+xml/i, 'docx'],
  [
    /presentationml\.(presentation|slideshow|template)\.main\+xml|ms-powerpoint\.(presentation|slideshow|template)\.macroenabled\.main\+xml/i,
    'pptx',
  ],
  [/spreadsheetml\.(sheet|template)\.main\+xml|ms-excel\.(sheet|template)\.macroenabled\.main\+xml/i, 'xlsx'],
];

/**
 * Which OOXML format a zip holds, from the main part type in [Content_Types].xml (falling back to
 * the well-known main part names). Null when the bytes are not a readable zip or not OOXML; throws
 * the coded error when the archive is a zip that breaks the safety limits.
 */
export function ooxmlKind(bytes: Buffer): 'docx' | 'pptx' | 'xlsx' | null {
  if (!looksLikeZip(bytes)) return null;
  let entries: ZipEntryInfo[];
  try {
    entries = inspectZip(bytes);
  } catch (err) {
    if ((err as { code?: string }).code === 'PAYLOAD_TOO_LARGE') throw err;
    return null;
  }
  const ct = entries.find((e) => e.name === '[Content_Types].xml');
  if (ct) {
    try {
      const xml = inflateEntry(bytes, ct, 1024 * 1024).toString('utf8');
      for (const [re, kind] of MAIN_TYPES) if (re.test(xml)) return kind;
    } catch {
      // fall through to part names
    }
  }
  const names = new Set(entries.map((e) => e.name));
  if (names.has('word/document.xml')) return 'docx';
  if (names.has('ppt/presentation.xml')) return 'pptx';
  if (names.has('xl/workbook.xml')) return 'xlsx';
  return null;
}
