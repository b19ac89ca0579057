/**
 * Cheap "is there anything to read" check before OCR: a blank page or an empty scan costs tesseract
 * a full layout analysis (seconds at 300 DPI); a thumbnail histogram tells the same in milliseconds.
 */
import { createCanvas } from '@napi-rs/canvas';
import type { Drawable } from './ocr-drawable.ts';

/** Longest side of the thumbnail the check looks at: text strokes stay visible at this size. */
const THUMB_SIDE = 600;
/** Luminance distance from the background that counts as ink. */
const INK_DELTA = 48;
/** Ink pixels (on the thumbnail) below which nothing legible can be there. */
const MIN_INK_PIXELS = 24;

/** True when the image is one flat colour apart from a few specks (blank page, empty scan). */
export function looksBlank(src: Drawable, width: number, height: number): boolean {
  const s = Math.min(1, THUMB_SIDE / Math.max(width, height, 1));
  const w = Math.max(1, Math.round(width * s));
  const h = Math.max(1, Math.round(height * s));
  const canvas = createCanvas(w, h);
  try {
    const ctx = canvas.getContext('2d');
    ctx.fillStyle = '#ffffff';
    ctx.fillRect(0, 0, w, h);
    ctx.drawImage(src, 0, 0, w, h);
    const px = ctx.getImageData(0, 0, w, h).data;
    const hist = new Uint32Array(256);
    const lum = new Uint8Array(w * h);
    for (let i = 0, j = 0; i < px.length; i += 4, j++) {
      const l = (px[i] * 77 + px[i + 1] * 150 + px[i + 2] * 29) >> 8;
      lum[j] = l;
      hist[l]++;
    }
    let background = 0;
    for (let l = 1; l < 256; l++) if (hist[l] > hist[background]) background = l;
    let ink = 0;
    for (let j = 0; j < lum.length; j++) if (Math.abs(lum[j] - background) > INK_DELTA && ++ink >= MIN_INK_PIXELS) return false;
    return true;
  } finally {
    canvas.width = 0;
    canvas.height = 0;
  }
}
