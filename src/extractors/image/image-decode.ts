/**
 * Decoding an image that cannot go to tesseract as it is (alpha, a size to change, a second
 * reading) into the canvas the OCR helpers draw from.
 *
 * First choice: sharp (libvips), strict about damage, its RGBA pixels put on a canvas. Otherwise
 * (sharp missing, a format it does not read, a file it refuses, a very large image) the caller
 * falls back to the OCR engine's decoder, whose PNG canvas then loads. That fallback re-encodes the
 * whole image as PNG inside the engine's WebAssembly and hands it over as base64: on a 1700x1100
 * RGBA PNG it cost 214 ms, against about 30 ms here, which made a screenshot with an alpha channel
 * 1.13-1.2x slower to read than tesseract.js on the same file. Canvas never decodes a client's
 * file itself: its native decoder crashes on some damaged ones.
 */
import { createCanvas, type Canvas } from '@napi-rs/canvas';
import type { ImageInfo } from '../shared/image-info.ts';
import { loadSharp } from '../shared/sharp.ts';

/**
 * Images above this many pixels take the engine's path: here the decoded pixels and the canvas
 * are two RGBA copies at once (64 MB each at this size), there the canvas is the only one.
 */
export const SHARP_DECODE_MAX_PIXELS = 16_000_000;

/** Formats sharp's prebuilt libvips reads (BMP is not among them). */
const SHARP_FORMATS = new Set<ImageInfo['format']>(['png', 'jpeg', 'gif', 'webp']);

/** The image on a canvas of its own size, or null: decode it another way. */
export async function decodeWithSharp(bytes: Buffer, info: ImageInfo): Promise<Canvas | null> {
  if (!SHARP_FORMATS.has(info.format) || !info.width || !info.height || info.width * info.height > SHARP_DECODE_MAX_PIXELS) return null;
  const sharp = await loadSharp();
  if (!sharp) return null;
  let decoded: { data: Buffer; info: { width: number; height: number; channels: number } };
  try {
    // failOn 'warning' (the default): a truncated or damaged file is refused here and decoded (or
    // reported) by the engine's path, as before. The first frame of an animation, as there.
    decoded = await sharp(bytes, { limitInputPixels: SHARP_DECODE_MAX_PIXELS, animated: false })
      .toColourspace('srgb')
      .ensureAlpha()
      .raw({ depth: 'uchar' })
      .toBuffer({ resolveWithObject: true });
  } catch {
    return null;
  }
  const { width, height, channels } = decoded.info;
  if (channels !== 4 || decoded.data.length !== width * height * 4) return null;
  const canvas = createCanvas(width, height);
  const ctx = canvas.getContext('2d');
  const pixels = ctx.createImageData(width, height);
  pixels.data.set(decoded.data);
  ctx.putImageData(pixels, 0, 0);
  return canvas;
}
