/**
 * Image format and pixel size read from the file header alone, so that oversized images
 * (decompression bombs) are refused before any decoder allocates pixels.
 */
export type ImageFormat = 'png' | 'jpeg' | 'gif' | 'bmp' | 'webp' | 'tiff';

export interface ImageInfo {
  format: ImageFormat;
  width: number | null;
  height: number | null;
  /** True when the format carries an alpha channel (PNG colour types 4/6, WebP with alpha). */
  alpha: boolean;
}

export function sniffImageFormat(b: Buffer): ImageFormat | null {
  if (b.length >= 8 && b.readUInt32BE(0) === 0x89504e47 && b.readUInt32BE(4) === 0x0d0a1a0a) return 'png';
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'jpeg';
  if (b.length >= 6 && (b.toString('latin1', 0, 6) === 'GIF87a' || b.toString('latin1', 0, 6) === 'GIF89a')) return 'gif';
  if (b.length >= 2 && b[0] === 0x42 && b[1] === 0x4d) return 'bmp';
  if (b.length >= 12 && b.toString('latin1', 0, 4) === 'RIFF' && b.toString('latin1', 8, 12) === 'WEBP') return 'webp';
  if (b.length >= 4 && ((b[0] === 0x49 && b[1] === 0x49 && b[2] === 0x2a && b[3] === 0) || (b[0] === 0x4d && b[1] === 0x4d && b[2] === 0 && b[3] === 0x2a))) return 'tiff';
  return null;
}

export function readImageInfo(b: Buffer): ImageInfo | null {
  const format = sniffImageFormat(b);
  if (!format) return null;
  try {
    switch (format) {
      case 'png':
        return b.length >= 26
          ? { format, width: b.readUInt32BE(16), height: b.readUInt32BE(20), alpha: b[25] === 4 || b[25] === 6 || hasPngTrns(b) }
          : { format, width: null, height: null, alpha: false };
      case 'gif':
        return { format, width: b.readUInt16LE(6), height: b.readUInt16LE(8), alpha: false };
      case 'bmp':
        return b.length >= 26 ? { format, width: Math.abs(b.readInt32LE(18)), height: Math.abs(b.readInt32LE(22)), alpha: false } : { format, width: null, height: null, alpha: false };
      case 'jpeg':
        return { format, ...jpegSize(b), alpha: false };
      case 'webp':
        return { format, ...webpSize(b) };
      case 'tiff':
        return { format, ...tiffSize(b), alpha: false };
    }
  } catch {
    return { format, width: null, height: null, alpha: false };
  }
}

function hasPngTrns(b: Buffer): boolean {
  // Palette/grey images may carry transparency in a tRNS chunk before IDAT.
  let off = 8;
  while (off + 8 <= b.length) {
    const len = b.readUInt32BE(off);
    const type = b.toString('latin1', off + 4, off + 8);
    if (type === 'tRNS') return true;
    if (type === 'IDAT' || type === 'IEND') return false;
    off += 12 + len;
  }
  return false;
}

function jpegSize(b: Buffer): { width: number | null; height: number | null } {
  let off = 2;
  while (off + 9 < b.length) {
    if (b[off] !== 0xff) {
      off++;
      continue;
    }
    const marker = b[off + 1];
    if (marker === 0xff) {
      off++;
      continue;
    }
    if (marker === 0xd8 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      off += 2;
      continue;
    }
    const len = b.readUInt16BE(off + 2);
    // SOF0..SOF15 except DHT (C4), JPG (C8) and DAC (CC) carry the frame size.
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return { height: b.readUInt16BE(off + 5), width: b.readUInt16BE(off + 7) };
    }
    if (marker === 0xda || len < 2) break;
    off += 2 + len;
  }
  return { width: null, height: null };
}

function webpSize(b: Buffer): { width: number | null; height: number | null; alpha: boolean } {
  const chunk = b.toString('latin1', 12, 16);
  if (chunk === 'VP8X' && b.length >= 30) {
    return { width: 1 + b.readUIntLE(24, 3), height: 1 + b.readUIntLE(27, 3), alpha: (b[20] & 0x10) !== 0 };
  }
  if (chunk === 'VP8L' && b.length >= 25) {
    const bits = b.readUInt32LE(21);
    return { width: 1 + (bits & 0x3fff), height: 1 + ((bits >> 14) & 0x3fff), alpha: ((bits >> 28) & 1) === 1 };
  }
  if (chunk === 'VP8 ' && b.length >= 30) {
    return { width: b.readUInt16LE(26) & 0x3fff, height: b.readUInt16LE(28) & 0x3fff, alpha: false };
  }
  return { width: null, height: null, alpha: false };
}

function tiffSize(b: Buffer): { width: number | null; height: number | null } {
  const le = b[0] === 0x49;
  const u16 = (o: number) => (le ? b.readUInt16LE(o) : b.readUInt16BE(o));
  const u32 = (o: number) => (le ? b.readUInt32LE(o) : b.readUInt32BE(o));
  const ifd = u32(4);
  const n = u16(ifd);
  let width: number | null = null;
  let height: number | null = null;
  for (let i = 0; i < n; i++) {
    const e = ifd + 2 + i * 12;
    const tag = u16(e);
    const type = u16(e + 2);
    const value = type === 3 ? u16(e + 8) : u32(e + 8);
    if (tag === 256) width = value;
    if (tag === 257) height = value;
  }
  return { width, height };
}
