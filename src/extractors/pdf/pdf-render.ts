/**
 * pdf.js document loading and page rendering for OCR (pdf.js from unpdf's Node build, canvas from
 * @napi-rs/canvas). Rendering needs the ArrayBuffer transfer polyfill on Node 20; pdf.js inflates
 * with its own decoder (useInflaterOfPdfjs).
 */
import { createCanvas, type Canvas } from '@napi-rs/canvas';
import { createIsomorphicCanvasFactory, getResolvedPDFJS } from 'unpdf';
import { installArrayBufferTransferPolyfill } from './polyfills.ts';

type PdfJs = Awaited<ReturnType<typeof getResolvedPDFJS>>;
export type PdfDocument = Awaited<ReturnType<PdfJs['getDocument']>['promise']>;
export type PdfPage = Awaited<ReturnType<PdfDocument['getPage']>>;

/** Resolution scanned pages are rendered at for OCR (tesseract reads best around 300 DPI). */
export const OCR_RENDER_DPI = 300;
/** Longest side and pixel budget of one rendered page (bounds memory on poster-sized pages). */
export const MAX_RENDER_SIDE = 4200;
export const MAX_RENDER_PIXELS = 14_000_000;
/** Path-construction operators above which a page without a text layer is worth OCR (outlined text). */
const VECTOR_TEXT_PATHS = 50;

export interface LoadedPdf {
  doc: PdfDocument;
  pdfjs: PdfJs;
}

export class PdfPasswordError extends Error {}

/**
 * Opens a PDF; rejects with PdfPasswordError for encrypted files that need a user password.
 * `textOnly`: pdf.js leaves images out of operator lists (none is decoded), so listing a page's
 * operators for its ruling lines costs the paths only; such a document cannot render or tell
 * whether a page shows images.
 */
export async function loadPdf(bytes: Buffer, signal: AbortSignal, opts: { textOnly?: boolean } = {}): Promise<LoadedPdf> {
  installArrayBufferTransferPolyfill();
  useInflaterOfPdfjs();
  // The canvas factory also installs canvas-backed DOMMatrix/Path2D that pdf.js renders with.
  const CanvasFactory = await createIsomorphicCanvasFactory(() => import('@napi-rs/canvas'));
  const pdfjs = await getResolvedPDFJS();
  const task = pdfjs.getDocument({
    // pdf.js may transfer (detach) the buffer it is given: hand it a private copy.
    data: new Uint8Array(bytes),
    isEvalSupported: false,
    useSystemFonts: true,
    disableFontFace: true,
    verbosity: 0,
    stopAtErrors: false,
    // Images over this many pixels are dropped from operator lists, with a warning (stopAtErrors is off).
    ...(opts.textOnly ? { maxImageSize: 0 } : {}),
    CanvasFactory,
    ...standardFontOptions(),
  } as Parameters<PdfJs['getDocument']>[0]);
  const onAbort = () => void task.destroy();
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    const doc = await task.promise;
    return { doc, pdfjs };
  } catch (err) {
    void task.destroy();
    if ((err as { name?: string })?.name === 'PasswordException') throw new PdfPasswordError('password required', { cause: err });
    throw err;
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

/**
 * pdf.js (5.6, unpdf's build) inflates every Flate stream, each page's content included, through
 * the global DecompressionStream when there is one, and falls back to its own synchronous inflater
 * when constructing it fails. In Node that global is a web stream over zlib per stream: on the
 * corpus's 400-page file it costs about a fifth of the text extraction's time (the same text in
 * 1,100 ms instead of 1,400; `npm run bench:pdf-text` went from 1.9-2.3x pdf-parse's CPU time to
 * 1.6-1.8x; pdf-parse's pdf.js 5.4 never used it), and scans read no faster with it. So a process
 * that loads pdf.js goes without it: nothing else here uses it (undici and the upload parsers
 * inflate with zlib directly), and extraction runs in child processes of its own.
 */
export function useInflaterOfPdfjs(): void {
  if ('DecompressionStream' in globalThis) delete (globalThis as { DecompressionStream?: unknown }).DecompressionStream;
}

function standardFontOptions(): Record<string, unknown> {
  // Font data for the 14 standard fonts, when a pdfjs-dist copy is installed; text extraction
  // works without it, rendering of non-embedded fonts falls back to system fonts.
  try {
    const base = import.meta.resolve('pdfjs-dist/package.json');
    return { standardFontDataUrl: new URL('./standard_fonts/', base).href, cMapUrl: new URL('./cmaps/', base).href, cMapPacked: true };
  } catch {
    return {};
  }
}

/** True when a page without a text layer paints images or many paths (scans, outlined text). */
export async function pageHasVisualContent(page: PdfPage, pdfjs: PdfJs): Promise<boolean> {
  const ops = pdfjs.OPS as Record<string, number>;
  const imageOps = new Set(
    [
      'paintImageXObject',
      'paintInlineImageXObject',
      'paintInlineImageXObjectGroup',
      'paintImageXObjectRepeat',
      'paintImageMaskXObject',
      'paintImageMaskXObjectGroup',
      'paintImageMaskXObjectRepeat',
      'paintJpegXObject',
    ]
      .map((n) => ops[n])
      .filter((v) => v !== undefined),
  );
  const list = await page.getOperatorList();
  let paths = 0;
  for (const fn of list.fnArray) {
    if (imageOps.has(fn)) return true;
    if (fn === ops.constructPath && ++paths >= VECTOR_TEXT_PATHS) return true;
  }
  return false;
}

export function renderScaleFor(width: number, height: number): number {
  let scale = OCR_RENDER_DPI / 72;
  scale = Math.min(scale, MAX_RENDER_SIDE / Math.max(width, height, 1));
  scale = Math.min(scale, Math.sqrt(MAX_RENDER_PIXELS / Math.max(width * height, 1)));
  return Math.max(scale, 0.05);
}

/** Renders a page (its /Rotate applied) onto a white canvas sized for OCR. */
export async function renderPage(page: PdfPage): Promise<Canvas> {
  installArrayBufferTransferPolyfill();
  const base = page.getViewport({ scale: 1 });
  const viewport = page.getViewport({ scale: renderScaleFor(base.width, base.height) });
  const canvas = createCanvas(Math.max(1, Math.ceil(viewport.width)), Math.max(1, Math.ceil(viewport.height)));
  const ctx = canvas.getContext('2d');
  ctx.fillStyle = '#ffffff';
  ctx.fillRect(0, 0, canvas.width, canvas.height);
  await page.render({ canvas: canvas as never, canvasContext: ctx as never, viewport }).promise;
  return canvas;
}
