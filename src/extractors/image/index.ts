/** Images, read by OCR (the extraction code is in image.ts; the OCR engine in ../ocr/). */
import { DEFAULT_CHUNKING } from '../shared/chunk-profile.ts';
import { defineFormat } from '../shared/descriptor.ts';
import { sniffImageFormat } from '../shared/image-info.ts';

declare module '../shared/types.ts' {
  interface DocumentKinds {
    image: true;
  }
}

/** BITMAPINFOHEADER sizes a BMP's DIB header may have. */
const DIB_HEADER_SIZES = [12, 40, 52, 56, 64, 108, 124];

export const IMAGE_FORMAT = defineFormat({
  id: 'image',
  kinds: {
    image: {
      expected: 'an image (PNG, JPEG, GIF, TIFF, WebP or BMP)',
      description: 'Images (OCR)',
      chunking: DEFAULT_CHUNKING,
      extract: async (input, deps) => (await import('./image.ts')).extractImage(input, deps),
    },
  },
  formats: {
    png: { kind: 'image', label: 'a PNG image', mime: 'image/png', mediaTypes: ['image/png'], extensions: ['png'] },
    jpeg: { kind: 'image', label: 'a JPEG image', mime: 'image/jpeg', mediaTypes: ['image/jpeg', 'image/jpg'], extensions: ['jpg', 'jpeg', 'jpe'] },
    gif: { kind: 'image', label: 'a GIF image', mime: 'image/gif', mediaTypes: ['image/gif'], extensions: ['gif'] },
    tiff: { kind: 'image', label: 'a TIFF image', mime: 'image/tiff', mediaTypes: ['image/tiff'], extensions: ['tif', 'tiff'] },
    webp: { kind: 'image', label: 'a WebP image', mime: 'image/webp', mediaTypes: ['image/webp'], extensions: ['webp'] },
    bmp: { kind: 'image', label: 'a BMP image', mime: 'image/bmp', mediaTypes: ['image/bmp', 'image/x-ms-bmp'], extensions: ['bmp'] },
  },
  magic: (e) => {
    const b = e.bytes;
    const format = sniffImageFormat(b);
    // "BM" alone is too weak (text can start with it); require a known DIB header size as well.
    if (format === 'bmp') return b.length >= 26 && DIB_HEADER_SIZES.includes(b.readUInt32LE(14)) ? 'bmp' : undefined;
    return format ?? undefined;
  },
});
