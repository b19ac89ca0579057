/**
 * Image extractor: OCR with per-word confidence through the shared worker pool. Sizes are checked
 * from the header first. Opaque PNG/JPEG of a good size go to tesseract as they are; everything
 * else (GIF, BMP, WebP, alpha, too small or too large, sideways) is decoded by sharp, or by the
 * engine's memory-safe decoder where sharp cannot (image-decode.ts), then flattened onto white,
 * resized and turned with @napi-rs/canvas.
 * TIFF goes to tesseract as is.
 */
import { loadImage } from '@napi-rs/canvas';
import { decodeWithSharp } from './image-decode.ts';
import type { Drawable } from '../ocr/ocr-drawable.ts';
import { isToolError, toolError } from '../../errors.ts';
import { uncoveredScriptAdvice } from '../ocr/ocr-languages.ts';
import { readImageInfo, type ImageInfo } from '../shared/image-info.ts';
import type { OcrPool, OcrResult } from '../ocr/ocr-pool.ts';
import { looksBlank } from '../ocr/ocr-blank.ts';
import { drawableImage, isNoiseReading, isWeakReading, recognizeUpright, withoutNoise, type UprightOcrResult } from '../ocr/ocr-upright.ts';
import type { ExtractInput, ProcessedDocument } from '../shared/types.ts';
import { throwIfAborted as throwIfCancelled } from '../../util/abort.ts';

/** Images declaring more pixels than this are refused before decoding (decompression bombs). */
export const MAX_IMAGE_PIXELS = 60_000_000;
/** Longest side an image is OCR'd at; larger images are scaled down (memory and time). */
export const OCR_MAX_SIDE = 4200;
/** Images whose longest side is below this are scaled up (at most 3x) to reach it: small text reads much better. */
export const OCR_UPSCALE_BELOW = 2000;
/** Median word height (px) from which a native-size reading is kept without trying an enlarged copy. */
export const MIN_NATIVE_TEXT_HEIGHT = 20;

export async function extractImage(input: ExtractInput, deps: { ocr: OcrPool }): Promise<ProcessedDocument> {
  throwIfAborted(input.signal);
  const info = readImageInfo(input.bytes);
  if (!info) throw toolError('UNSUPPORTED_FORMAT', 'Not a supported image: expected PNG, JPEG, GIF, BMP, WebP or TIFF');
  if (info.width !== null && info.height !== null && info.width * info.height > MAX_IMAGE_PIXELS) {
    throw toolError('PAYLOAD_TOO_LARGE', `Image is ${info.width}x${info.height} pixels; the limit is ${MAX_IMAGE_PIXELS / 1e6} megapixels`);
  }
  if (input.ocr?.mode === 'never') return notRead(info);
  const languages = deps.ocr.resolveJobLanguages(input.ocr?.languages);
  const started = Date.now();
  const raw = info.format === 'tiff' ? await ocrTiff(input, deps.ocr, languages) : await ocrDecoded(input, info, deps.ocr, languages);
  const r = withoutNoise(raw);
  if (raw.uncoveredScript && !r.words.length) {
    throw toolError('PROCESSING_ERROR', `No text could be read from the image. ${uncoveredScriptAdvice(raw.uncoveredScript, languages, deps.ocr.languageInfo().installed_languages)}`);
  }
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
      ...(raw.blank ? { ocr_note: 'blank image: nothing to read' } : {}),
      ocr_languages: languages,
      ocr_ms: Date.now() - started,
    },
    tables: [],
    images: [],
    urls: [],
    pages: [],
    ocr: { text: r.text, confidence: r.confidence, words: r.words },
  };
}

type Sized = UprightOcrResult & { width: number | null; height: number | null };

function notRead(info: ImageInfo): ProcessedDocument {
  return {
    kind: 'image',
    content: '',
    metadata: {
      format: info.format,
      ...(info.width !== null ? { width: info.width } : {}),
      ...(info.height !== null ? { height: info.height } : {}),
      ocr_mode: 'never',
      ocr_note: 'OCR was turned off for this call (ocr: never); images have no other text',
      word_count: 0,
    },
    tables: [],
    images: [],
    urls: [],
    pages: [],
  };
}

async function ocrDecoded(input: ExtractInput, info: ImageInfo, pool: OcrPool, languages: string[]): Promise<Sized> {
  const { signal } = input;
  const longestDeclared = Math.max(info.width ?? 0, info.height ?? 0);
  // Opaque PNG/JPEG that need no shrinking go to tesseract untouched first: no decode, no re-encode.
  if (longestDeclared && scaleFor(longestDeclared) >= 1 && !info.alpha && (info.format === 'png' || info.format === 'jpeg')) {
    const native = await pool.recognize(input.bytes, signal, { languages }).catch((err) => rethrowDecode(err, info, signal));
    const done = await settledAtNativeSize(pool, native, input.bytes, signal, scaleFor(longestDeclared) > 1);
    if (done) return { ...done, width: info.width, height: info.height };
    if (scaleFor(longestDeclared) === 1) return decodeAndRead(input, info, pool, languages, native);
    return decodeAndRead(input, info, pool, languages, undefined, true);
  }
  return decodeAndRead(input, info, pool, languages);
}

/** Enlargements below this gain nothing worth a second recognition. */
const MIN_UPSCALE = 1.25;
const scaleFor = (longest: number) => {
  if (longest > OCR_MAX_SIDE) return OCR_MAX_SIDE / longest;
  const up = Math.min(3, OCR_UPSCALE_BELOW / longest);
  return up >= MIN_UPSCALE ? up : 1;
};

/**
 * A native-size reading that settles the image: strong with text large enough for tesseract (a
 * small image is enlarged only when its text is small or its reading weak — enlarging costs time
 * and splits ruled tables into column blocks), no word at all (a photo or art), or, on an image
 * that is not enlarged, noise where osd sees no text either.
 *
 * A small image whose reading is noise is enlarged without asking osd: at native size osd saw no
 * text in 5-12 px lines either (480x360, measured), so it turned away the very images enlarging
 * is for; their 7-8 px lines read as a few low-confidence words natively and as every word at 3x.
 */
async function settledAtNativeSize(pool: OcrPool, native: OcrResult, png: Buffer, signal: AbortSignal, canEnlarge: boolean): Promise<UprightOcrResult | null> {
  if (!isWeakReading(native) && (!canEnlarge || (native.textHeight ?? 0) >= MIN_NATIVE_TEXT_HEIGHT)) return { ...native, rotation: 0 };
  if (native.words.length === 0) return { ...native, rotation: 0 };
  if (!canEnlarge && isNoiseReading(native) && pool.languageInfo().orientation_detection && !(await pool.detectOrientation(png, signal))) return { ...native, rotation: 0 };
  return null;
}

async function decodeAndRead(input: ExtractInput, info: ImageInfo, pool: OcrPool, languages: string[], upright?: OcrResult, nativeTried = false): Promise<Sized> {
  const { signal } = input;
  const canvas = await decodeWithSharp(input.bytes, info);
  try {
    return await readDecoded(canvas ?? (await decodedByEngine(input, info, pool)), info, pool, languages, signal, upright, nativeTried);
  } finally {
    // Its pixels go now, not at the next collection.
    if (canvas) canvas.width = canvas.height = 0;
  }
}

/** The engine decodes and re-encodes as PNG, which canvas then loads: the native canvas decoder crashes on some damaged files, so it never sees a client's file. */
async function decodedByEngine(input: ExtractInput, info: ImageInfo, pool: OcrPool): Promise<Drawable> {
  const clean = await pool.normalizeImage(input.bytes, input.signal).catch((err) => rethrowDecode(err, info, input.signal));
  try {
    return await loadImage(clean);
  } catch (err) {
    throw toolError('PROCESSING_ERROR', `The ${info.format.toUpperCase()} image could not be decoded (damaged or truncated)`, err);
  }
}

async function readDecoded(img: Drawable, info: ImageInfo, pool: OcrPool, languages: string[], signal: AbortSignal, upright: OcrResult | undefined, nativeTried: boolean): Promise<Sized> {
  const { width, height } = img;
  if (!width || !height) throw toolError('PROCESSING_ERROR', `The ${info.format.toUpperCase()} image has no pixels`);
  if (width * height > MAX_IMAGE_PIXELS) {
    throw toolError('PAYLOAD_TOO_LARGE', `Image is ${width}x${height} pixels; the limit is ${MAX_IMAGE_PIXELS / 1e6} megapixels`);
  }
  const scale = scaleFor(Math.max(width, height));
  if (scale > 1 && !nativeTried && !upright) {
    if (looksBlank(img, width, height)) return { text: '', confidence: 0, words: [], rotation: 0, blank: true, width, height };
    const image = drawableImage(img, width, height);
    const done = await settledAtNativeSize(pool, await pool.recognize(image, signal, { languages }), image, signal, true);
    if (done) return { ...done, width, height };
  }
  const r = await recognizeUpright(pool, img, width, height, signal, { scale, ...(upright ? { upright } : {}), languages });
  return { ...r, width, height };
}

function rethrowDecode(err: unknown, info: ImageInfo, signal: AbortSignal): never {
  throwIfAborted(signal);
  if (isToolError(err) && err.code !== 'PROCESSING_ERROR') throw err;
  throw toolError('PROCESSING_ERROR', `The ${info.format.toUpperCase()} image could not be decoded (damaged, truncated or an unsupported variant)`, err);
}

async function ocrTiff(input: ExtractInput, pool: OcrPool, languages: string[]): Promise<Sized> {
  const info = readImageInfo(input.bytes);
  try {
    const r = await pool.recognize(input.bytes, input.signal, { languages });
    return { ...r, rotation: 0, width: info?.width ?? null, height: info?.height ?? null };
  } catch (err) {
    throwIfAborted(input.signal);
    if (isToolError(err) && err.code !== 'PROCESSING_ERROR') throw err;
    throw toolError('PROCESSING_ERROR', 'The TIFF image could not be read by the OCR engine (unsupported compression or damaged file)', err);
  }
}

const throwIfAborted = (signal: AbortSignal) => throwIfCancelled(signal, 'Image OCR');
