/**
 * The OCR canvas of one PDF page, within the render memory budget. The cheapest way that applies
 * is taken: a full-page JPEG scan is decoded from its file bytes straight to the OCR resolution
 * (pdf-scan-jpeg.ts, pdf.js never decodes it); another single-image page is box-filtered from
 * pdf.js's decoded image (pdf-page-image.ts); anything else is rendered by pdf.js. Each page first
 * reserves its estimated peak bytes (its own JPEG size when known, else the file's largest image)
 * from a RenderMemoryBudget shared by the pages in flight, so concurrent decodes are bounded by
 * their bytes, not by a page count; after the decode the reservation shrinks to the canvas.
 */
import type { Canvas } from '@napi-rs/canvas';
import { canvasBytes, pageRenderBytes, type PdfImageScan, type RenderMemoryBudget } from './ocr-render-budget.ts';
import { pageImageCanvas } from './pdf-page-image.ts';
import type { RawPdf } from './pdf-raw-objects.ts';
import { renderPage, type PdfPage } from './pdf-render.ts';
import { pageScanJpeg, scanJpegDecodeBytes, scanJpegImage, scanJpegTarget } from './pdf-scan-jpeg.ts';

export interface OcrCanvasContext {
  budget: RenderMemoryBudget;
  /** Bounds the OCR engine's memory: pages recognised at once, by their pixels (ocrEngineBytes). */
  engineBudget: RenderMemoryBudget;
  /** Image sizes read from the file (the estimate for pages pdf.js decodes). */
  imageScan: PdfImageScan;
  /** The file's raw objects, when scan JPEGs may be read from it (null: always use pdf.js). */
  raw: RawPdf | null;
}

export interface OcrCanvas {
  canvas: Canvas;
  /** The canvas as an 8-bit grey image for the engine (PGM), when it was decoded that way (else the canvas is encoded). */
  greyImage: Buffer | null;
  /** True when pdf.js decoded the page's content (its caches may be worth dropping). */
  viaPdfJs: boolean;
  /** Frees the page's reservation in the budget (after recognition). */
  release: () => void;
}

/** The page's OCR canvas, holding a reservation in the budget until `release` is called. */
export async function ocrPageCanvas(page: PdfPage, ctx: OcrCanvasContext): Promise<OcrCanvas> {
  const scan = ctx.raw ? pageScanJpeg(ctx.raw, page) : null;
  const target = scan ? scanJpegTarget(scan, page) : null;
  if (scan && target) {
    const canvasCost = canvasBytes(target.canvasWidth * target.canvasHeight);
    const lease = await ctx.budget.acquire((await scanJpegDecodeBytes(scan, page)) + canvasCost);
    try {
      const image = await scanJpegImage(scan, page);
      if (image) {
        lease.shrink(canvasCost);
        return { ...image, viaPdfJs: false, release: lease.release };
      }
    } catch {
      // Fall through to pdf.js.
    }
    lease.release();
  }
  const lease = await ctx.budget.acquire(pageRenderBytes(ctx.imageScan));
  try {
    const canvas = (await pageImageCanvas(page)) ?? (await renderPage(page));
    lease.shrink(canvasBytes(canvas.width * canvas.height));
    return { canvas, greyImage: null, viaPdfJs: true, release: lease.release };
  } catch (err) {
    lease.release();
    throw err;
  }
}
