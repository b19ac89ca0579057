/**
 * OCR that copes with sideways and upside-down scans. The offline English model has no
 * orientation detector (tesseract's OSD needs the legacy data), so when the upright reading is
 * weak we OCR small rotated copies, keep the orientation that reads best, and only then run the
 * full-size recognition at that orientation. Good pages pay nothing extra.
 */
import { createCanvas, type Canvas, type Image } from '@napi-rs/canvas';
import type { OcrPool, OcrResult } from './ocr-pool.ts';

export type Drawable = Canvas | Image;
export type Rotation = 0 | 90 | 180 | 270;

/** Mean word confidence below which a reading counts as weak and other orientations are tried. */
export const WEAK_OCR_CONFIDENCE = 65;
/** Longest side of the rotated probe images. */
export const ORIENTATION_PROBE_SIDE = 1400;

export interface UprightOcrResult extends OcrResult {
  /** Clockwise degrees the image was turned before the kept reading. */
  rotation: Rotation;
}

/** Encodes `src` (width x height) as PNG on a white background (flattens alpha), scaled, turned clockwise. */
export async function drawablePng(src: Drawable, width: number, height: number, rotation: Rotation = 0, scale = 1): Promise<Buffer> {
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
  const png = await canvas.encode('png');
  canvas.width = 0;
  canvas.height = 0;
  return png;
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
 * OCR `src` upright; if that reading is weak, probe 90/270/180 degrees on reduced copies and
 * re-read at full size in the best orientation when it clearly beats upright.
 * `scale` resizes the source for recognition; `uprightPng` may pass the upright image already
 * encoded at that scale, or `upright` its reading, to avoid doing that work twice.
 */
export async function recognizeUpright(
  pool: OcrPool,
  src: Drawable,
  width: number,
  height: number,
  signal?: AbortSignal,
  opts: { scale?: number; uprightPng?: Buffer; upright?: OcrResult } = {},
): Promise<UprightOcrResult> {
  const scale = opts.scale ?? 1;
  const upright = opts.upright ?? (await pool.recognize(opts.uprightPng ?? (await drawablePng(src, width, height, 0, scale)), signal));
  if (!isWeakReading(upright)) return { ...upright, rotation: 0 };

  // Probes never upscale: orientation shows at native size, and noise images stay cheap.
  const probeScale = Math.min(scale, 1, ORIENTATION_PROBE_SIDE / Math.max(width, height));
  const small = probeScale === scale;
  const uprightScore = small ? readingScore(upright) : readingScore(await pool.recognize(await drawablePng(src, width, height, 0, probeScale), signal));
  let best: { rotation: Rotation; score: number; result: OcrResult } | null = null;
  for (const rotation of [90, 270, 180] as const) {
    const result = await pool.recognize(await drawablePng(src, width, height, rotation, probeScale), signal);
    const score = readingScore(result);
    if (!best || score > best.score) best = { rotation, score, result };
    if (!isWeakReading(result) && score > 2 * uprightScore + 10) break;
  }
  if (!best || best.score <= uprightScore * 1.3 + 5) return { ...upright, rotation: 0 };
  const turned = small ? best.result : await pool.recognize(await drawablePng(src, width, height, best.rotation, scale), signal);
  return readingScore(turned) > readingScore(upright) ? { ...turned, rotation: best.rotation } : { ...upright, rotation: 0 };
}
