/**
 * OCR input for a scan page whose one full-page image is a JPEG, without pdf.js ever decoding it.
 * pdf.js decodes a page's images at full size as soon as its operators are listed (a 600-dpi
 * Letter scan: 34 megapixels, ~300 MB with its copies); here the page's content stream and the
 * image's JPEG bytes are read from the file (pdf-raw-objects.ts) and the JPEG is decoded straight
 * to the OCR resolution: with sharp (libvips, which shrinks while decoding, DCT scaling, a few tens
 * of MB) when it can be loaded, else with @napi-rs/canvas (full-size RGBA, 4 bytes a pixel, then
 * drawn scaled). Anything else on the page, another filter, a mask, a colour space other than
 * grey/RGB, rotation or skew yields null, and the page goes through pdf-page-image.ts / pdf.js.
 */
import { loadSharp } from '../shared/sharp.ts';
import { createCanvas, loadImage, type Canvas } from '@napi-rs/canvas';
import { ocrCanvasSize } from './pdf-page-image.ts';
import type { PdfPage } from './pdf-render.ts';
import { isDict, isName, isRef, PdfObjectParser, type PdfDict, type PdfRef, type PdfValue, type RawPdf } from './pdf-raw-objects.ts';
import { multiplyMatrix, type Matrix } from './pdf-geometry.ts';
import { MAX_PDF_IMAGE_PIXELS } from './ocr-render-budget.ts';
import { greyImage } from '../ocr/ocr-image.ts';

/** Share of the page the image must cover to stand for the whole page (as pdf-page-image.ts). */
const MIN_PAGE_COVERAGE = 0.9;
/** Content stream operators that change nothing a single painted image shows. */
const NEUTRAL_OPS = new Set(['gs', 'w', 'J', 'j', 'M', 'd', 'ri', 'i', 'BMC', 'BDC', 'EMC', 'MP', 'DP']);
/** Rows copied onto the canvas at a time. */
const STRIP_ROWS = 128;
/** Longest content stream read (a scan page's is a few dozen bytes). */
const MAX_CONTENT_BYTES = 64 * 1024;

/** A page's single full-page JPEG image, as found in the file. */
export interface ScanJpeg {
  jpeg: Uint8Array;
  width: number;
  height: number;
  /** Image rectangle on the page, in points, PDF coordinates (y up). */
  x: number;
  y: number;
  placedWidth: number;
  placedHeight: number;
}

/** The page's one painted image when it is a plain full-page JPEG, else null. */
export function pageScanJpeg(raw: RawPdf, page: PdfPage): ScanJpeg | null {
  try {
    return findScanJpeg(raw, page);
  } catch {
    return null;
  }
}

function findScanJpeg(raw: RawPdf, page: PdfPage): ScanJpeg | null {
  if (page.rotate % 360 !== 0) return null;
  const ref = (page as unknown as { ref?: PdfRef | null }).ref;
  if (!ref || typeof ref.num !== 'number') return null;
  const pageDict = raw.resolve(ref);
  if (!isDict(pageDict) || !isName(pageDict.get('Type')) || (pageDict.get('Type') as { name: string }).name !== 'Page') return null;
  const resources = raw.inherited(pageDict, 'Resources');
  const xobjects = isDict(resources) ? raw.resolve(resources.get('XObject')) : undefined;
  const content = raw.content(pageDict.get('Contents'), MAX_CONTENT_BYTES);
  if (!content?.length || !isDict(xobjects)) return null;

  // q/Q/cm and neutral operators around exactly one Do.
  const parser = new PdfObjectParser(content);
  const operands: PdfValue[] = [];
  const stack: Matrix[] = [];
  let ctm: Matrix = [1, 0, 0, 1, 0, 0];
  let placed: { name: string; ctm: Matrix } | null = null;
  for (let tok = parser.next(); tok !== undefined; tok = parser.next()) {
    if (typeof tok !== 'object' || tok === null || !('op' in tok)) {
      operands.push(tok as PdfValue);
      if (operands.length > 16) return null;
      continue;
    }
    const op = tok.op;
    if (op === 'q') stack.push(ctm);
    else if (op === 'Q') ctm = stack.pop() ?? ctm;
    else if (op === 'cm') {
      if (operands.length !== 6 || operands.some((v) => typeof v !== 'number')) return null;
      ctm = multiplyMatrix(ctm, operands as unknown as Matrix);
    } else if (op === 'Do') {
      const name = operands[operands.length - 1];
      if (placed || operands.length !== 1 || !isName(name)) return null;
      placed = { name: name.name, ctm };
    } else if (!NEUTRAL_OPS.has(op)) return null;
    operands.length = 0;
  }
  if (parser.pos < content.length || !placed) return null;
  const { ctm: m } = placed;
  // Only an upright, unskewed placement maps image rows to page rows one to one.
  if (m[1] !== 0 || m[2] !== 0 || m[0] <= 0 || m[3] <= 0) return null;
  const [vx0, vy0, vx1, vy1] = page.view as [number, number, number, number];
  const ix = Math.max(0, Math.min(m[4] + m[0], vx1) - Math.max(m[4], vx0));
  const iy = Math.max(0, Math.min(m[5] + m[3], vy1) - Math.max(m[5], vy0));
  if (ix * iy < MIN_PAGE_COVERAGE * (vx1 - vx0) * (vy1 - vy0)) return null;

  const imageRef = xobjects.get(placed.name);
  if (!isRef(imageRef)) return null;
  const image = raw.stream(imageRef);
  if (!image || !plainJpegImage(raw, image.dict)) return null;
  const jpeg = raw.bytes.subarray(image.start, image.end);
  const frame = jpegFrame(jpeg);
  const width = image.dict.get('Width') ?? image.dict.get('W');
  const height = image.dict.get('Height') ?? image.dict.get('H');
  if (!frame || frame.width !== width || frame.height !== height || frame.components !== componentsOf(raw, image.dict)) return null;
  if (frame.width * frame.height > MAX_PDF_IMAGE_PIXELS) return null;
  return { jpeg, width: frame.width, height: frame.height, x: m[4], y: m[5], placedWidth: m[0], placedHeight: m[3] };
}

function plainJpegImage(raw: RawPdf, dict: PdfDict): boolean {
  const name = (k: string) => {
    const v = raw.resolve(dict.get(k));
    return isName(v) ? v.name : Array.isArray(v) && v.length === 1 && isName(v[0]) ? v[0].name : undefined;
  };
  if (name('Subtype') !== 'Image') return false;
  if (!['DCTDecode', 'DCT'].includes(name('Filter') ?? '')) return false;
  const bpc = raw.resolve(dict.get('BitsPerComponent') ?? dict.get('BPC'));
  if (bpc !== 8) return false;
  // Masks, decode arrays and stencil images change what the page shows: pdf.js paints those.
  for (const k of ['SMask', 'Mask', 'Decode', 'D', 'ImageMask', 'IM', 'SMaskInData']) {
    const v = raw.resolve(dict.get(k));
    if (v !== undefined && v !== null && v !== false && v !== 0) return false;
  }
  return componentsOf(raw, dict) > 0;
}

/** Colour components of a grey or RGB colour space (ICC-based included); 0 for any other. */
function componentsOf(raw: RawPdf, dict: PdfDict): number {
  const cs = raw.resolve(dict.get('ColorSpace') ?? dict.get('CS'));
  if (isName(cs)) return cs.name === 'DeviceGray' || cs.name === 'G' ? 1 : cs.name === 'DeviceRGB' || cs.name === 'RGB' ? 3 : 0;
  if (Array.isArray(cs) && cs.length === 2 && isName(cs[0]) && cs[0].name === 'ICCBased' && isRef(cs[1])) {
    const icc = raw.stream(cs[1]);
    const n = icc?.dict.get('N');
    return n === 1 || n === 3 ? n : 0;
  }
  return 0;
}

/** Size and component count from a JPEG's frame header, or null when it is not a readable JPEG. */
export function jpegFrame(jpeg: Uint8Array): { width: number; height: number; components: number } | null {
  if (jpeg[0] !== 0xff || jpeg[1] !== 0xd8) return null;
  let p = 2;
  while (p + 9 < jpeg.length) {
    if (jpeg[p] !== 0xff) return null;
    const marker = jpeg[p + 1]!;
    if (marker === 0xff) {
      p++;
      continue;
    }
    const len = (jpeg[p + 2]! << 8) | jpeg[p + 3]!;
    // SOF0-SOF2 (baseline, extended, progressive Huffman); arithmetic and lossless frames are left to pdf.js.
    if (marker >= 0xc0 && marker <= 0xc2) {
      return { height: (jpeg[p + 5]! << 8) | jpeg[p + 6]!, width: (jpeg[p + 7]! << 8) | jpeg[p + 8]!, components: jpeg[p + 9]! };
    }
    if (marker === 0xda || (marker >= 0xc3 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc)) return null;
    p += 2 + len;
  }
  return null;
}

/** Where the image lands on the OCR canvas, or null when it is no larger than that (pdf.js then upsamples it cheaply). */
export function scanJpegTarget(scan: ScanJpeg, page: PdfPage): { canvasWidth: number; canvasHeight: number; rx: number; ry: number; rw: number; rh: number } | null {
  const [vx0, vy0, vx1, vy1] = page.view as [number, number, number, number];
  const size = ocrCanvasSize(vx1 - vx0, vy1 - vy0);
  const rw = Math.round(scan.placedWidth * size.scale);
  const rh = Math.round(scan.placedHeight * size.scale);
  if (rw < 1 || rh < 1 || rw >= scan.width || rh >= scan.height) return null;
  return {
    canvasWidth: size.width,
    canvasHeight: size.height,
    rx: Math.round((scan.x - vx0) * size.scale),
    ry: Math.round((vy1 - (scan.y + scan.placedHeight)) * size.scale),
    rw,
    rh,
  };
}

/** Estimated peak bytes of decoding `scan` to the OCR canvas (for the render memory budget). */
export async function scanJpegDecodeBytes(scan: ScanJpeg, page: PdfPage): Promise<number> {
  const target = scanJpegTarget(scan, page);
  const out = target ? target.rw * target.rh : 0;
  // libvips shrinks while decoding: a few strips plus the output; the canvas path holds the full RGBA image.
  return (await loadSharp()) ? scan.jpeg.length + out * 3 + 32 * 1024 * 1024 : scan.width * scan.height * 4 + out * 4;
}

/** The page as an OCR-sized canvas decoded from its JPEG at the OCR resolution, or null (render another way). */
export async function scanJpegCanvas(scan: ScanJpeg, page: PdfPage, opts: { decoder?: 'auto' | 'canvas' } = {}): Promise<Canvas | null> {
  return (await scanJpegImage(scan, page, opts))?.canvas ?? null;
}

/**
 * The canvas, and when the image fills it and sharp decoded it, the same picture as an 8-bit grey
 * PGM (ocr-image.ts): the OCR engine then holds one byte a pixel instead of four while reading it.
 */
export async function scanJpegImage(scan: ScanJpeg, page: PdfPage, opts: { decoder?: 'auto' | 'canvas' } = {}): Promise<{ canvas: Canvas; greyImage: Buffer | null } | null> {
  const target = scanJpegTarget(scan, page);
  if (!target) return null;
  const { canvasWidth, canvasHeight, rx, ry, rw, rh } = target;
  const sharp = opts.decoder === 'canvas' ? null : await loadSharp();
  let grey: Uint8Array | null = null;
  if (sharp) {
    try {
      const out: Buffer = await sharp(scan.jpeg, { failOn: 'none', limitInputPixels: MAX_PDF_IMAGE_PIXELS }).greyscale().resize(rw, rh, { fit: 'fill' }).raw().toBuffer();
      grey = out.length === rw * rh ? out : null;
    } catch {
      grey = null;
    }
  }
  const canvas = createCanvas(canvasWidth, canvasHeight);
  const ctx = canvas.getContext('2d');
  ctx.fillStyle = '#ffffff';
  ctx.fillRect(0, 0, canvasWidth, canvasHeight);
  if (grey) {
    // Put in strips: an RGBA copy of the whole image would be one more canvas-sized buffer.
    for (let y0 = 0; y0 < rh; y0 += STRIP_ROWS) {
      const rows = Math.min(STRIP_ROWS, rh - y0);
      const strip = ctx.createImageData(rw, rows);
      const d = strip.data;
      for (let i = y0 * rw, o = 0, end = (y0 + rows) * rw; i < end; i++, o += 4) {
        const v = grey[i]!;
        d[o] = v;
        d[o + 1] = v;
        d[o + 2] = v;
        d[o + 3] = 255;
      }
      ctx.putImageData(strip, rx, ry + y0);
    }
    const fills = rx === 0 && ry === 0 && rw === canvasWidth && rh === canvasHeight;
    // The same grey pixels as the canvas, as the engine reads them (PGM: no PNG encode or decode).
    return { canvas, greyImage: fills ? greyImage(grey, rw, rh) : null };
  }
  try {
    const img = await loadImage(Buffer.from(scan.jpeg.buffer, scan.jpeg.byteOffset, scan.jpeg.length));
    if (img.width !== scan.width || img.height !== scan.height) throw new Error('unexpected JPEG size');
    ctx.imageSmoothingEnabled = true;
    ctx.imageSmoothingQuality = 'high';
    ctx.drawImage(img, rx, ry, rw, rh);
    return { canvas, greyImage: null };
  } catch {
    canvas.width = 0;
    canvas.height = 0;
    return null;
  }
}
