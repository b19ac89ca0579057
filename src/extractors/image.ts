/**
 * Image extractor: OCR with per-word confidence through the shared worker pool. Sizes are checked
 * from the header first. Opaque PNG/JPEG of a good size go to tesseract as they are; everything
 * else (GIF, BMP, WebP, alpha, too small or too large, sideways) is decoded by the engine's
 * memory-safe decoder, then flattened onto white, resized and turned with @napi-rs/canvas.
 * TIFF goes to tesseract as is.
 */
import { loadImage } from '@napi-rs/canvas';
import { isToolError, toolError } from '../errors.ts';
import { readImageInfo, type ImageInfo } from './image-info.ts';
import type { OcrPool, OcrResult } from './ocr-pool.ts';
import { isWeakReading, recognizeUpright, withoutNoise, type UprightOcrResult } from './ocr-upright.ts';
import type { ExtractInput, ProcessedDocument } from './types.ts';
import { throwIfAborted as throwIfCancelled } from '../util/abort.ts';

/** Images declaring more pixels than this are refused before decoding (decompression bombs). */
export const MAX_IMAGE_PIXELS = 60_000_000;
/** Longest side an image is OCR'd at; larger images are scaled down (memory and time). */
export const OCR_MAX_SIDE = 4200;
/** Images whose longest side is below this are scaled up (at most 3x) to reach it: small text reads much better. */
export const OCR_UPSCALE_BELOW = 2000;

export async function extractImage(input: ExtractInput, deps: { ocr: OcrPool }): Promise<ProcessedDocument> {
  throwIfAborted(input.signal);
  const info = readImageInfo(input.bytes);
  if (!info) throw toolError('UNSUPPORTED_FORMAT', 'Not a supported image: expected PNG, JPEG, GIF, BMP, WebP or TIFF');
  if (info.width !== null && info.height !== null && info.width * info.height > MAX_IMAGE_PIXELS) {
    throw toolError('PAYLOAD_TOO_LARGE', `Image is ${info.width}x${info.height} pixels; the limit is ${MAX_IMAGE_PIXELS / 1e6} megapixels`);
  }
  const raw = info.format === 'tiff' ? await ocrTiff(input, deps.ocr) : await ocrDecoded(input, info, deps.ocr);
  const r = withoutNoise(raw);
  const { width, height } = r;
  return {
    kind: 'image',
    content: r.text,
    metadata: {
      format: info.format,
      ...(width !== null ? { width } : {}),
      ...(height !== null ? { height } : {}),
      ocr_confidence: r.confidence,
      word_count: r.words.length,
      ...(raw.words.length && !r.words.length ? { ocr_note: 'no readable text: the recognizer only found noise' } : {}),
      ...(r.rotation ? { ocr_rotation: r.rotation } : {}),
    },
    tables: [],
    images: [],
    urls: [],
    pages: [],
    ocr: { text: r.text, confidence: r.confidence, words: r.words },
  };
}

type Sized = UprightOcrResult & { width: number | null; height: number | null };

async function ocrDecoded(input: ExtractInput, info: ImageInfo, pool: OcrPool): Promise<Sized> {
  const { signal } = input;
  const longestDeclared = Math.max(info.width ?? 0, info.height ?? 0);
  const scaleFor = (longest: number) => (longest > OCR_MAX_SIDE ? OCR_MAX_SIDE / longest : longest < OCR_UPSCALE_BELOW ? Math.min(3, OCR_UPSCALE_BELOW / longest) : 1);
  // Opaque PNG/JPEG at their own size go to tesseract untouched: no decode, no re-encode.
  let upright: OcrResult | undefined;
  if (longestDeclared && scaleFor(longestDeclared) === 1 && !info.alpha && (info.format === 'png' || info.format === 'jpeg')) {
    upright = await pool.recognize(input.bytes, signal).catch((err) => rethrowDecode(err, info, signal));
    if (!isWeakReading(upright)) return { ...upright, rotation: 0, width: info.width, height: info.height };
  }
  // The native canvas decoder crashes on some damaged files, so it only ever sees a PNG that the
  // OCR engine's own decoder has re-encoded.
  const clean = await pool.normalizeImage(input.bytes, signal).catch((err) => rethrowDecode(err, info, signal));
  let img;
  try {
    img = await loadImage(clean);
  } catch (err) {
    throw toolError('PROCESSING_ERROR', `The ${info.format.toUpperCase()} image could not be decoded (damaged or truncated)`, err);
  }
  const { width, height } = img;
  if (!width || !height) throw toolError('PROCESSING_ERROR', `The ${info.format.toUpperCase()} image has no pixels`);
  if (width * height > MAX_IMAGE_PIXELS) {
    throw toolError('PAYLOAD_TOO_LARGE', `Image is ${width}x${height} pixels; the limit is ${MAX_IMAGE_PIXELS / 1e6} megapixels`);
  }
  const r = await recognizeUpright(pool, img, width, height, signal, { scale: scaleFor(Math.max(width, height)), upright });
  return { ...r, width, height };
}

function rethrowDecode(err: unknown, info: ImageInfo, signal: AbortSignal): never {
  throwIfAborted(signal);
  if (isToolError(err) && err.code !== 'PROCESSING_ERROR') throw err;
  throw toolError('PROCESSING_ERROR', `The ${info.format.toUpperCase()} image could not be decoded (damaged, truncated or an unsupported variant)`, err);
}

async function ocrTiff(input: ExtractInput, pool: OcrPool): Promise<Sized> {
  const info = readImageInfo(input.bytes);
  try {
    const r = await pool.recognize(input.bytes, input.signal);
    return { ...r, rotation: 0, width: info?.width ?? null, height: info?.height ?? null };
  } catch (err) {
    throwIfAborted(input.signal);
    if (isToolError(err) && err.code !== 'PROCESSING_ERROR') throw err;
    throw toolError('PROCESSING_ERROR', 'The TIFF image could not be read by the OCR engine (unsupported compression or damaged file)', err);
  }
}

const throwIfAborted = (signal: AbortSignal) => throwIfCancelled(signal, 'Image OCR');
