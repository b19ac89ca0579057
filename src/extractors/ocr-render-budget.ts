/**
 * Memory bounds for OCR of PDF pages. pdf.js decodes every embedded image at its full size (a
 * 600-dpi Letter scan is 34 megapixels, ~135 MB as RGBA, more while it is scaled onto the canvas),
 * whatever resolution the page is rendered at. So before any page is rendered (or even has its
 * operators listed, which already decodes images) we read image sizes from the file's raw
 * dictionaries — image XObjects are always streams, never inside compressed object streams — and
 * choose how many pages may be in memory at once, or refuse pages whose images alone exceed the
 * budget.
 */
import { MAX_RENDER_PIXELS } from './pdf-render.ts';

/** Largest embedded image OCR will let pdf.js decode (same budget as a standalone image). */
export const MAX_PDF_IMAGE_PIXELS = 60_000_000;
/** Images from this size are decoded once only (rendering), never also while looking for scans. */
export const LARGE_IMAGE_PIXELS = 8_000_000;
/** Memory all pages being rendered for OCR at once may take, estimated (bytes). */
export const OCR_RENDER_MEMORY_BUDGET = 400 * 1024 * 1024;
/** Bytes per image pixel while pdf.js decodes and paints it: decoded RGBA, the scaled copy, the source buffer. */
const BYTES_PER_IMAGE_PIXEL = 9;
/** Bytes per canvas pixel: the RGBA canvas and its PNG encoding / the engine's copy. */
const BYTES_PER_CANVAS_PIXEL = 10;

export interface PdfImageScan {
  /** Image XObjects found. */
  count: number;
  /** Pixels of the largest one (width x height), 0 when none. */
  maxPixels: number;
  maxWidth: number;
  maxHeight: number;
}

/** Sizes of the image XObjects declared in the file (direct /Width and /Height integers). */
export function scanPdfImages(bytes: Buffer): PdfImageScan {
  const out: PdfImageScan = { count: 0, maxPixels: 0, maxWidth: 0, maxHeight: 0 };
  const text = bytes.toString('latin1');
  const subtype = /\/Subtype\s*\/Image\b/g;
  for (let m = subtype.exec(text); m; m = subtype.exec(text)) {
    // The dictionary around the match: from the preceding "obj" (or '<<') to the following "stream".
    const from = Math.max(0, text.lastIndexOf('obj', m.index), m.index - 2000);
    const endStream = text.indexOf('stream', m.index);
    const to = endStream >= 0 && endStream - m.index < 2000 ? endStream : m.index + 2000;
    const dict = text.slice(from, to);
    const w = /\/(?:Width|W)\s+(\d{1,9})\b/.exec(dict);
    const h = /\/(?:Height|H)\s+(\d{1,9})\b/.exec(dict);
    if (!w || !h) continue;
    out.count++;
    const width = Number(w[1]);
    const height = Number(h[1]);
    if (width * height > out.maxPixels) Object.assign(out, { maxPixels: width * height, maxWidth: width, maxHeight: height });
  }
  return out;
}

/** Estimated peak bytes for one page: its largest possible image plus the render canvas. */
export function pageRenderBytes(scan: PdfImageScan): number {
  return Math.min(scan.maxPixels, MAX_PDF_IMAGE_PIXELS) * BYTES_PER_IMAGE_PIXEL + MAX_RENDER_PIXELS * BYTES_PER_CANVAS_PIXEL;
}

/** Pages rendered at once so that the estimate stays within the budget (at least one). */
export function renderLanes(scan: PdfImageScan, wanted: number): number {
  return Math.max(1, Math.min(wanted, Math.floor(OCR_RENDER_MEMORY_BUDGET / pageRenderBytes(scan))));
}
