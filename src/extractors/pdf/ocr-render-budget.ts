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
  // Windows of the file around each "/Subtype", never the whole file as one string (a 50 MB scan
  // would be 50 MB more of heap).
  for (let at = bytes.indexOf('/Subtype', 0, 'latin1'); at >= 0; at = bytes.indexOf('/Subtype', at + 8, 'latin1')) {
    const base = Math.max(0, at - 2000);
    const text = bytes.toString('latin1', base, Math.min(bytes.length, at + 2000));
    const index = at - base;
    const subtype = /\/Subtype\s*\/Image\b/y;
    subtype.lastIndex = index;
    if (!subtype.test(text)) continue;
    // The dictionary around the match: from the preceding "obj" (or '<<') to the following "stream".
    const from = Math.max(0, text.lastIndexOf('obj', index));
    const endStream = text.indexOf('stream', index);
    const to = endStream >= 0 ? endStream : text.length;
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

/**
 * Memory the OCR engine may grow by for the pages of one document recognised at once (bytes). Its
 * WebAssembly heap grows with the image it reads (~250 MB for a Letter page at 300 dpi) and each
 * page in flight occupies a worker of its own: two full pages at once would double it.
 */
export const OCR_ENGINE_MEMORY_BUDGET = 320 * 1024 * 1024;
/** Engine bytes per image pixel while recognising (measured ~250-290 MB growth for 8.4 megapixels). */
const ENGINE_BYTES_PER_PIXEL = 30;

/** Estimated growth of the OCR engine while it reads an image of `pixels`. */
export function ocrEngineBytes(pixels: number): number {
  return pixels * ENGINE_BYTES_PER_PIXEL;
}

/** Estimated bytes of an OCR canvas of `pixels` (the RGBA canvas, its PNG, the copies OCR makes). */
export function canvasBytes(pixels: number): number {
  return pixels * BYTES_PER_CANVAS_PIXEL;
}

/**
 * Bytes reserved by the pages being rendered at once: a page waits until its estimate fits beside
 * those in flight (first come, first served), and one larger than the whole budget runs alone. So
 * the memory of concurrent decodes is bounded whatever the pages hold, not a fixed page count.
 */
export class RenderMemoryBudget {
  private inUse = 0;
  private running = 0;
  private readonly waiting: { bytes: number; grant: () => void }[] = [];

  constructor(readonly limit = OCR_RENDER_MEMORY_BUDGET) {}

  /**
   * Resolves once `bytes` may be used. `shrink(n)` lowers the reservation to n bytes (the decode is
   * over, the canvas stays), `release()` frees it.
   */
  async acquire(bytes: number): Promise<{ shrink: (to: number) => void; release: () => void }> {
    let held = Math.max(0, bytes);
    if (!this.waiting.length && this.fits(held)) this.take(held);
    else await new Promise<void>((grant) => this.waiting.push({ bytes: held, grant }));
    let released = false;
    return {
      shrink: (to: number) => {
        if (released || to >= held) return;
        this.inUse -= held - Math.max(0, to);
        held = Math.max(0, to);
        this.drain();
      },
      release: () => {
        if (released) return;
        released = true;
        this.inUse -= held;
        this.running--;
        this.drain();
      },
    };
  }

  /** Pages holding a reservation now. */
  get active(): number {
    return this.running;
  }

  private fits(bytes: number): boolean {
    return this.running === 0 || this.inUse + bytes <= this.limit;
  }

  private take(bytes: number): void {
    this.inUse += bytes;
    this.running++;
  }

  private drain(): void {
    while (this.waiting.length && this.fits(this.waiting[0]!.bytes)) {
      const next = this.waiting.shift()!;
      this.take(next.bytes);
      next.grant();
    }
  }
}
