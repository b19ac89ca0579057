/**
 * OCR input for a page that is just one large image (a scan): the image pdf.js has already decoded
 * is box-filtered straight down to the OCR resolution into a small canvas. pdf.js's own render of
 * such a page paints the full-size image (34 megapixels for a 600-dpi Letter scan) through
 * full-size intermediate canvases, ~500 MB for one page; this path holds the decoded image and
 * the OCR-sized canvas only. Any other page (text, vector art, several images, rotation, a
 * skewed placement) returns null and is rendered by pdf.js as before.
 */
import { createCanvas, type Canvas } from '@napi-rs/canvas';
import { getResolvedPDFJS } from 'unpdf';
import { renderScaleFor, type PdfPage } from './pdf-render.ts';
import { multiplyMatrix, type Matrix } from './pdf-geometry.ts';

/** Share of the page the image must cover to stand for the whole page. */
const MIN_PAGE_COVERAGE = 0.9;
/** pdf.js image kinds (ImageKind). */
const GRAYSCALE_1BPP = 1;
const RGB_24BPP = 2;
const RGBA_32BPP = 3;

interface DecodedImage {
  width: number;
  height: number;
  kind: number;
  data: Uint8Array | Uint8ClampedArray;
}


/** Where a page's single painted image sits, when the page paints exactly one image and nothing else. */
export interface PageImagePlacement {
  objId: string;
  /** Image rectangle on the page, in points, PDF coordinates (y up). */
  x: number;
  y: number;
  width: number;
  height: number;
}

/** The one image a page paints and where, or null when the page paints anything else too. */
export async function singlePageImage(page: PdfPage): Promise<PageImagePlacement | null> {
  if (page.rotate % 360 !== 0) return null;
  const ops = (await getResolvedPDFJS()).OPS as Record<string, number>;
  const list = await page.getOperatorList();
  const stack: Matrix[] = [];
  let ctm: Matrix = [1, 0, 0, 1, 0, 0];
  let found: PageImagePlacement | null = null;
  for (let i = 0; i < list.fnArray.length; i++) {
    const fn = list.fnArray[i];
    const args = list.argsArray[i] as unknown[] | null;
    if (fn === ops.save) stack.push(ctm);
    else if (fn === ops.restore) ctm = stack.pop() ?? ctm;
    else if (fn === ops.transform) ctm = multiplyMatrix(ctm, args as unknown as Matrix);
    else if (fn === ops.dependency || fn === ops.setGState) continue;
    else if (fn === ops.paintImageXObject && !found && typeof args?.[0] === 'string') {
      // Only an upright, unskewed placement maps image rows to page rows one to one.
      if (ctm[1] !== 0 || ctm[2] !== 0 || ctm[0] <= 0 || ctm[3] <= 0) return null;
      found = { objId: args[0], x: ctm[4], y: ctm[5], width: ctm[0], height: ctm[3] };
    } else return null;
  }
  if (!found) return null;
  const [vx0, vy0, vx1, vy1] = page.view as [number, number, number, number];
  const ix = Math.max(0, Math.min(found.x + found.width, vx1) - Math.max(found.x, vx0));
  const iy = Math.max(0, Math.min(found.y + found.height, vy1) - Math.max(found.y, vy0));
  return ix * iy >= MIN_PAGE_COVERAGE * (vx1 - vx0) * (vy1 - vy0) ? found : null;
}

function decodedImage(page: PdfPage, objId: string): Promise<DecodedImage | null> {
  // Images shared by several pages live in the document's common objects ("g_" ids).
  const objs = (objId.startsWith('g_') ? page.commonObjs : page.objs) as unknown as { get(id: string, cb: (v: unknown) => void): void };
  return new Promise((resolve) => {
    try {
      objs.get(objId, (v) => {
        const img = v as Partial<DecodedImage> | null;
        const ok = img && img.data && img.width && img.height && [GRAYSCALE_1BPP, RGB_24BPP, RGBA_32BPP].includes(img.kind ?? 0);
        resolve(ok ? (img as DecodedImage) : null);
      });
    } catch {
      resolve(null);
    }
  });
}

/** The OCR canvas size for a page: the page at the OCR resolution, capped by the render pixel budget. */
export function ocrCanvasSize(pageWidth: number, pageHeight: number): { width: number; height: number; scale: number } {
  const scale = renderScaleFor(pageWidth, pageHeight);
  // The scale is a float: 792 pt x 300/72 must give 3300 pixels, not 3301.
  const side = (pt: number) => Math.max(1, Math.ceil(pt * scale - 1e-6));
  return { width: side(pageWidth), height: side(pageHeight), scale };
}

/**
 * The page as an OCR-sized canvas drawn from its single full-page image, or null (render with
 * pdf.js instead) when the page is not just one image or the image is no larger than the canvas
 * (then pdf.js's render is cheap and upsamples it).
 */
export async function pageImageCanvas(page: PdfPage): Promise<Canvas | null> {
  const placement = await singlePageImage(page);
  if (!placement) return null;
  const img = await decodedImage(page, placement.objId);
  if (!img) return null;
  const [vx0, vy0, vx1, vy1] = page.view as [number, number, number, number];
  const size = ocrCanvasSize(vx1 - vx0, vy1 - vy0);
  const rx = Math.round((placement.x - vx0) * size.scale);
  const ry = Math.round((vy1 - (placement.y + placement.height)) * size.scale);
  const rw = Math.round(placement.width * size.scale);
  const rh = Math.round(placement.height * size.scale);
  if (rw < 1 || rh < 1 || rw >= img.width || rh >= img.height) return null;
  const canvas = createCanvas(size.width, size.height);
  const ctx = canvas.getContext('2d');
  ctx.fillStyle = '#ffffff';
  ctx.fillRect(0, 0, size.width, size.height);
  const out = ctx.createImageData(rw, rh);
  boxDownsample(img, rw, rh, out.data);
  ctx.putImageData(out, rx, ry);
  return canvas;
}

/** Area-averaged grey levels of `img` at rw x rh, written as opaque RGBA into `dest`. */
export function boxDownsample(img: DecodedImage, rw: number, rh: number, dest: Uint8ClampedArray): void {
  const { width, height, kind, data } = img;
  const column = new Uint32Array(width);
  for (let sx = 0; sx < width; sx++) column[sx] = Math.min(rw - 1, Math.floor((sx * rw) / width));
  const sums = new Float64Array(rw);
  const counts = new Uint32Array(rw);
  const stride = kind === GRAYSCALE_1BPP ? (width + 7) >> 3 : width * (kind === RGB_24BPP ? 3 : 4);
  let sy = 0;
  for (let ty = 0; ty < rh; ty++) {
    sums.fill(0);
    counts.fill(0);
    const syEnd = Math.min(height, Math.ceil(((ty + 1) * height) / rh));
    for (; sy < syEnd; sy++) {
      const row = sy * stride;
      if (kind === GRAYSCALE_1BPP) {
        // A set bit is white (pdf.js has applied /Decode already).
        for (let sx = 0; sx < width; sx++) {
          const tx = column[sx]!;
          sums[tx]! += data[row + (sx >> 3)]! & (128 >> (sx & 7)) ? 255 : 0;
          counts[tx]!++;
        }
      } else {
        const step = kind === RGB_24BPP ? 3 : 4;
        for (let sx = 0, p = row; sx < width; sx++, p += step) {
          const tx = column[sx]!;
          sums[tx]! += (data[p]! * 299 + data[p + 1]! * 587 + data[p + 2]! * 114) / 1000;
          counts[tx]!++;
        }
      }
    }
    for (let tx = 0, o = ty * rw * 4; tx < rw; tx++, o += 4) {
      const v = counts[tx] ? sums[tx]! / counts[tx]! : 255;
      dest[o] = v;
      dest[o + 1] = v;
      dest[o + 2] = v;
      dest[o + 3] = 255;
    }
  }
}
