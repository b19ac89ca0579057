/**
 * The image a canvas hands to tesseract.js: uncompressed netpbm instead of PNG. Leptonica (inside
 * tesseract.js) reads PGM and PPM natively, so a page costs no PNG encode here and no PNG decode in
 * the engine's WebAssembly, for the same pixels: a canvas whose every pixel is grey becomes PGM
 * (8-bit grey, what tesseract reduces a grey RGB image to anyway), any other PPM (8-bit RGB, what it
 * reads from an RGB or RGBA PNG: alpha is not used for recognition). Both are bigger than a PNG
 * (1 or 3 bytes a pixel) and live only until the engine has read them.
 */
import type { Canvas } from '@napi-rs/canvas';

/** Rows read from the canvas at a time (an RGBA copy of a whole page would be one more canvas). */
const STRIP_ROWS = 256;

export function canvasImage(canvas: Canvas): Buffer {
  const { width, height } = canvas;
  const ctx = canvas.getContext('2d');
  const rgb = Buffer.allocUnsafe(width * height * 3);
  let grey = true;
  for (let y0 = 0, o = 0; y0 < height; y0 += STRIP_ROWS) {
    const rows = Math.min(STRIP_ROWS, height - y0);
    const d = ctx.getImageData(0, y0, width, rows).data;
    for (let i = 0; i < d.length; i += 4, o += 3) {
      const r = d[i]!;
      const g = d[i + 1]!;
      const b = d[i + 2]!;
      rgb[o] = r;
      rgb[o + 1] = g;
      rgb[o + 2] = b;
      if (r !== g || g !== b) grey = false;
    }
  }
  if (!grey) return Buffer.concat([Buffer.from(`P6\n${width} ${height}\n255\n`, 'latin1'), rgb]);
  const g = Buffer.allocUnsafe(width * height);
  for (let i = 0; i < g.length; i++) g[i] = rgb[i * 3]!;
  return greyImage(g, width, height);
}

/** An 8-bit grey image (one byte a pixel, row by row) as PGM. */
export function greyImage(grey: Uint8Array, width: number, height: number): Buffer {
  if (grey.length !== width * height) throw new Error(`grey image of ${grey.length} bytes is not ${width}x${height}`);
  return Buffer.concat([Buffer.from(`P5\n${width} ${height}\n255\n`, 'latin1'), grey]);
}
