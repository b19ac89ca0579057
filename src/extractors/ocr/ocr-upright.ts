/**
 * OCR that copes with sideways and upside-down scans and with scripts the languages do not read.
 * Good pages pay nothing extra: only when the upright reading is weak (and not empty) do we ask tesseract's
 * orientation and script detection (osd, when installed: one quick pass on a reduced copy), and
 * re-read at the orientation it names. Without osd data we OCR small rotated copies instead and
 * keep the orientation that reads best. Blank images are never OCR'd.
 */
import { createCanvas } from '@napi-rs/canvas';
import { looksBlank } from './ocr-blank.ts';
import { canvasImage } from './ocr-image.ts';
import type { Drawable } from './ocr-drawable.ts';
import { scriptCovered } from './ocr-languages.ts';
import type { OcrPool, OcrResult } from './ocr-pool.ts';

export type Rotation = 0 | 90 | 180 | 270;

/** Mean word confidence below which a reading counts as weak and other orientations are tried. */
export const WEAK_OCR_CONFIDENCE = 65;
/** Longest side of the image orientation detection looks at (osd is reliable at this size, ~0.5 s). */
export const ORIENTATION_PROBE_SIDE = 1400;
/** Longest side of the rotated copies OCR'd when osd data is not installed. */
export const ROTATION_PROBE_SIDE = 1000;
/** osd orientation confidence from which its answer is acted on. */
export const MIN_OSD_CONFIDENCE = 1;

export interface UprightOcrResult extends OcrResult {
  /** Clockwise degrees the image was turned before the kept reading. */
  rotation: Rotation;
  /** Set when the image is blank: nothing was OCR'd. */
  blank?: boolean;
  /** osd's script when the kept reading is noise and none of the languages used reads that script. */
  uncoveredScript?: string;
}

export interface UprightOptions {
  /** Resizes the source for recognition. */
  scale?: number;
  /** The upright image already encoded at `scale` (for the engine: PNG, JPEG, PGM, PPM...). */
  uprightImage?: Buffer;
  /** The upright reading, when already done. */
  upright?: OcrResult;
  /** Languages for recognition (plain codes); default: the pool's. */
  languages?: readonly string[];
}

/**
 * `src` (width x height) drawn on a white background (alpha flattened), scaled, turned clockwise,
 * as the image the engine reads (PGM or PPM, ocr-image.ts).
 */
export function drawableImage(src: Drawable, width: number, height: number, rotation: Rotation = 0, scale = 1): Buffer {
  const s = scale;
  const sw = Math.max(1, Math.round(width * s));
  const sh = Math.max(1, Math.round(height * s));
  const [cw, ch] = rotation === 90 || rotation === 270 ? [sh, sw] : [sw, sh];
  const canvas = createCanvas(cw, ch);
  const ctx = canvas.getContext('2d');
  ctx.fillStyle = '#ffffff';
  ctx.fillRect(0, 0, cw, ch);
  ctx.translate(cw / 2, ch / 2);
  ctx.rotate((rotation * Math.PI) / 180);
  ctx.drawImage(src, -sw / 2, -sh / 2, sw, sh);
  const image = canvasImage(canvas);
  canvas.width = 0;
  canvas.height = 0;
  return image;
}

/** Readable-text score: characters of confident alphanumeric words (noise rarely scores). */
export function readingScore(r: OcrResult): number {
  let score = 0;
  for (const w of r.words) {
    if (w.confidence < 60) continue;
    const alnum = w.text.replace(/[^\p{L}\p{N}]/gu, '').length;
    if (alnum >= 2) score += alnum;
  }
  return score;
}

/** Mean confidence below which a reading with little confident text is noise (photos, art, unknown scripts). */
export const NOISE_CONFIDENCE = 50;

/** True when tesseract only "read" texture: low mean confidence and almost no confident words. */
export function isNoiseReading(r: OcrResult): boolean {
  return r.words.length === 0 || (r.confidence < NOISE_CONFIDENCE && readingScore(r) < 20);
}

/** An empty reading, kept as the result when the image holds no readable text. */
export function withoutNoise<T extends OcrResult>(r: T): T {
  return isNoiseReading(r) ? { ...r, text: '', words: [], confidence: 0 } : r;
}

export function isWeakReading(r: OcrResult): boolean {
  return r.words.length === 0 || r.confidence < WEAK_OCR_CONFIDENCE;
}

/**
 * OCR `src` upright; if that reading is weak, find the orientation (osd, else rotated probes on
 * reduced copies) and re-read at full size in the best orientation when it beats upright.
 */
export async function recognizeUpright(
  pool: OcrPool,
  src: Drawable,
  width: number,
  height: number,
  signal?: AbortSignal,
  opts: UprightOptions = {},
): Promise<UprightOcrResult> {
  const scale = opts.scale ?? 1;
  const languages = pool.resolveJobLanguages(opts.languages);
  if (!opts.upright && !opts.uprightImage && looksBlank(src, width, height)) return { text: '', confidence: 0, words: [], rotation: 0, blank: true };
  const read = async (rotation: Rotation, s: number) => pool.recognize(drawableImage(src, width, height, rotation, s), signal, { languages });
  const upright = opts.upright ?? (opts.uprightImage ? await pool.recognize(opts.uprightImage, signal, { languages }) : await read(0, scale));
  if (!isWeakReading(upright)) return { ...upright, rotation: 0 };
  // No word at all: a photo, art or a mark, not turned text. Text turned 90, 180 or 270 degrees
  // still reads as words upright, if garbled ones (measured on generated pages of 1-4 lines at 20-80
  // px and on the corpus images: only 1-2 character texts read as nothing, upright too, and text
  // in a script the languages lack reads as noise words, so its advice below still comes). Asking
  // osd here cost a photo twice its upright reading.
  if (upright.words.length === 0) return { ...upright, rotation: 0 };

  if (pool.languageInfo().orientation_detection) {
    const probeScale = Math.min(1, ORIENTATION_PROBE_SIDE / Math.max(width, height));
    const osd = await pool.detectOrientation(drawableImage(src, width, height, 0, probeScale), signal);
    // osd finding no text at all is the cheap answer for photos and art: no rotated re-reads.
    if (!osd) return { ...upright, rotation: 0 };
    let best: UprightOcrResult = { ...upright, rotation: 0 };
    if (osd.rotate !== 0 && osd.orientationConfidence >= MIN_OSD_CONFIDENCE) {
      const turned = await read(osd.rotate, scale);
      if (readingScore(turned) > readingScore(upright)) best = { ...turned, rotation: osd.rotate };
    }
    if (osd.script && isNoiseReading(best) && !scriptCovered(osd.script, languages)) best.uncoveredScript = osd.script;
    return best;
  }

  // Probes never upscale: orientation shows at native size, and noise images stay cheap.
  const probeScale = Math.min(scale, 1, ROTATION_PROBE_SIDE / Math.max(width, height));
  const small = probeScale === scale;
  const uprightScore = small ? readingScore(upright) : readingScore(await read(0, probeScale));
  let best: { rotation: Rotation; score: number; result: OcrResult } | null = null;
  for (const rotation of [90, 270, 180] as const) {
    const result = await read(rotation, probeScale);
    const score = readingScore(result);
    if (!best || score > best.score) best = { rotation, score, result };
    if (!isWeakReading(result) && score > 2 * uprightScore + 10) break;
  }
  if (!best || best.score <= uprightScore * 1.3 + 5) return { ...upright, rotation: 0 };
  const turned = small ? best.result : await read(best.rotation, scale);
  return readingScore(turned) > readingScore(upright) ? { ...turned, rotation: best.rotation } : { ...upright, rotation: 0 };
}
