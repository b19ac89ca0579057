/**
 * PDF extractor: the text layer of every page in reading order, with `--- Page N ---` markers and
 * page spans; pages without a usable text layer that show images or outlined text are rendered and
 * OCR'd (bounded per document), so scanned PDFs work.
 */
import { isToolError, toolError } from '../errors.ts';
import type { OcrPool, OcrResult } from './ocr-pool.ts';
import { recognizeUpright, withoutNoise } from './ocr-upright.ts';
import { layoutPageText, type PositionedTextItem } from './pdf-layout.ts';
import { loadPdf, pageHasVisualContent, PdfPasswordError, renderPage, type LoadedPdf, type PdfDocument, type PdfPage } from './pdf-render.ts';
import { repairTruncatedPdf } from './pdf-repair.ts';
import type { ExtractInput, OcrWord, PageSpan, ProcessedDocument } from './types.ts';
import { throwIfAborted as throwIfCancelled } from '../util/abort.ts';
import { errorText as errorMessage } from '../util/error-text.ts';

/** Pages OCR'd per document at most; further scanned pages are listed in ocr_skipped_pages. */
export const MAX_OCR_PAGES = 30;
/** Pages whose text layer is read at most (a 3,000-page PDF reads in well under a minute). */
export const MAX_PDF_PAGES = 3000;
/** A page with fewer non-space characters than this has no usable text layer. */
export const MIN_TEXT_LAYER_CHARS = 32;
/** Pages rendered at once for OCR (each canvas can hold up to ~56 MB). */
export const MAX_PARALLEL_OCR_RENDERS = 4;
/** OCR words kept in doc.ocr.words. */
export const MAX_OCR_WORDS = 20_000;

export async function extractPdf(input: ExtractInput, deps: { ocr: OcrPool }): Promise<ProcessedDocument> {
  throwIfAborted(input.signal);
  if (!input.bytes.subarray(0, 1024).includes('%PDF-')) {
    throw toolError('PROCESSING_ERROR', 'Not a PDF file: the %PDF- header is missing');
  }
  const { loaded, repaired } = await openPdf(input);
  const { doc, pdfjs } = loaded;
  try {
    const metadata = await readMetadata(doc);
    const pageCount = doc.numPages;
    const readable = Math.min(pageCount, MAX_PDF_PAGES);
    const texts: string[] = [];
    const ocrCandidates: number[] = [];
    const pageErrors: number[] = [];
    for (let n = 1; n <= readable; n++) {
      throwIfAborted(input.signal);
      let page: PdfPage | null = null;
      try {
        page = await doc.getPage(n);
        const text = await pageText(page);
        texts.push(text);
        if (nonSpaceLength(text) < MIN_TEXT_LAYER_CHARS && (await pageHasVisualContent(page, pdfjs))) ocrCandidates.push(n);
      } catch (err) {
        throwIfAborted(input.signal);
        // A broken page costs that page only; the rest of the document is still worth reading.
        texts.push('');
        pageErrors.push(n);
      } finally {
        page?.cleanup();
      }
    }
    if (pageErrors.length === readable && readable > 0) {
      throw toolError('PROCESSING_ERROR', 'The PDF is damaged: no page could be read');
    }

    const toOcr = ocrCandidates.slice(0, MAX_OCR_PAGES);
    const ocr = await ocrPages(doc, toOcr, deps.ocr, input.signal);
    for (const [n, r] of ocr.results) {
      if (r.text.trim()) texts[n - 1] = r.text;
    }

    const { content, pages } = joinPages(texts);
    const ocrPagesDone = [...ocr.results.keys()].sort((a, b) => a - b);
    const allWords: OcrWord[] = [];
    for (const n of ocrPagesDone) {
      for (const w of ocr.results.get(n)!.words) if (allWords.length < MAX_OCR_WORDS) allWords.push(w);
    }
    const meanConf = ocrPagesDone.length
      ? round2(ocrPagesDone.reduce((a, n) => a + ocr.results.get(n)!.confidence, 0) / ocrPagesDone.length)
      : 0;

    return {
      kind: 'pdf',
      content,
      metadata: {
        ...metadata,
        page_count: pageCount,
        ...(repaired ? { repaired: true } : {}),
        ...(readable < pageCount ? { pages_read: readable } : {}),
        ocr_pages: ocrPagesDone,
        ...(ocrCandidates.length > toOcr.length ? { ocr_skipped_pages: ocrCandidates.slice(MAX_OCR_PAGES) } : {}),
        ...(ocr.failed.length ? { ocr_failed_pages: ocr.failed } : {}),
        ...(ocr.rotated.length ? { ocr_rotated_pages: ocr.rotated } : {}),
        ...(pageErrors.length ? { damaged_pages: pageErrors } : {}),
      },
      tables: [],
      images: [],
      urls: [],
      pages,
      ...(ocrPagesDone.length
        ? {
            ocr: {
              text: ocrPagesDone.map((n) => ocr.results.get(n)!.text).join('\n\n'),
              confidence: meanConf,
              words: allWords,
              pages: ocrPagesDone,
            },
          }
        : {}),
    };
  } finally {
    await doc.destroy().catch(() => undefined);
  }
}

async function openPdf(input: ExtractInput): Promise<{ loaded: LoadedPdf; repaired: boolean }> {
  try {
    return { loaded: await loadPdf(input.bytes, input.signal), repaired: false };
  } catch (err) {
    throwIfAborted(input.signal);
    if (err instanceof PdfPasswordError) {
      throw toolError('PROCESSING_ERROR', 'The PDF is password-protected; remove the password and try again', err);
    }
    const fixed = repairTruncatedPdf(input.bytes);
    if (fixed) {
      try {
        return { loaded: await loadPdf(fixed, input.signal), repaired: true };
      } catch {
        throwIfAborted(input.signal);
      }
    }
    throw toolError('PROCESSING_ERROR', `The PDF could not be read (damaged or not a PDF): ${errorText(err)}`, err);
  }
}

async function pageText(page: PdfPage): Promise<string> {
  const viewport = page.getViewport({ scale: 1 });
  const content = await page.getTextContent();
  const items: PositionedTextItem[] = [];
  for (const item of content.items) {
    if (!('str' in item) || !item.str) continue;
    items.push({
      str: item.str,
      transform: multiply(viewport.transform, item.transform),
      width: item.width,
      height: item.height,
      dir: item.dir,
    });
  }
  return layoutPageText(items);
}

/** Affine matrix product m1 x m2 (pdf.js [a b c d e f] convention). */
function multiply(m1: number[], m2: number[]): number[] {
  return [
    m1[0] * m2[0] + m1[2] * m2[1],
    m1[1] * m2[0] + m1[3] * m2[1],
    m1[0] * m2[2] + m1[2] * m2[3],
    m1[1] * m2[2] + m1[3] * m2[3],
    m1[0] * m2[4] + m1[2] * m2[5] + m1[4],
    m1[1] * m2[4] + m1[3] * m2[5] + m1[5],
  ];
}

interface OcrOutcome {
  results: Map<number, OcrResult>;
  failed: number[];
  rotated: number[];
}

async function ocrPages(doc: PdfDocument, pageNumbers: number[], pool: OcrPool, signal: AbortSignal): Promise<OcrOutcome> {
  const outcome: OcrOutcome = { results: new Map(), failed: [], rotated: [] };
  if (!pageNumbers.length) return outcome;
  const queue = [...pageNumbers];
  const lanes = Math.max(1, Math.min(pool.stats().size, MAX_PARALLEL_OCR_RENDERS, queue.length));
  const lane = async () => {
    for (let n = queue.shift(); n !== undefined; n = queue.shift()) {
      throwIfAborted(signal);
      let page: PdfPage | null = null;
      try {
        page = await doc.getPage(n);
        const canvas = await renderPage(page);
        try {
          const png = await canvas.encode('png');
          const r = withoutNoise(await recognizeUpright(pool, canvas, canvas.width, canvas.height, signal, { uprightPng: png }));
          outcome.results.set(n, { text: r.text, confidence: r.confidence, words: r.words });
          if (r.rotation) outcome.rotated.push(n);
        } finally {
          canvas.width = 0;
          canvas.height = 0;
        }
      } catch (err) {
        throwIfAborted(signal);
        // The pool timing out or being shut down is not a page problem: stop, say why.
        if (isToolError(err) && (err.code === 'TIMEOUT' || err.code === 'MODEL_UNAVAILABLE' || err.code === 'RATE_LIMITED')) throw err;
        outcome.failed.push(n);
      } finally {
        page?.cleanup();
      }
    }
  };
  await Promise.all(Array.from({ length: lanes }, lane));
  outcome.failed.sort((a, b) => a - b);
  outcome.rotated.sort((a, b) => a - b);
  return outcome;
}

function joinPages(texts: string[]): { content: string; pages: PageSpan[] } {
  let content = '';
  const pages: PageSpan[] = [];
  texts.forEach((text, i) => {
    if (i > 0) content += '\n\n';
    const start = content.length;
    content += `--- Page ${i + 1} ---\n${text.trim()}`;
    pages.push({ number: i + 1, unit: 'page', start, end: content.length });
  });
  return { content, pages };
}

async function readMetadata(doc: PdfDocument): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  try {
    const { info, metadata } = (await doc.getMetadata()) as unknown as { info: Record<string, unknown>; metadata: { get(k: string): unknown } | null };
    const str = (v: unknown) => (typeof v === 'string' && v.trim() ? v.trim() : undefined);
    const xmp = (k: string) => {
      try {
        return str(metadata?.get(k));
      } catch {
        return undefined;
      }
    };
    const fields: Record<string, string | undefined> = {
      title: str(info.Title) ?? xmp('dc:title'),
      author: str(info.Author) ?? xmp('dc:creator'),
      subject: str(info.Subject),
      keywords: str(info.Keywords),
      creator: str(info.Creator),
      producer: str(info.Producer),
      creation_date: pdfDate(info.CreationDate),
      modification_date: pdfDate(info.ModDate),
      pdf_version: str(info.PDFFormatVersion),
    };
    for (const [k, v] of Object.entries(fields)) if (v !== undefined) out[k] = v;
    out.encrypted = typeof info.EncryptFilterName === 'string';
  } catch {
    // Broken metadata never fails the extraction.
  }
  return out;
}

/** PDF date string (D:YYYYMMDDHHmmSSOHH'mm') to ISO 8601; undefined when unparseable. */
export function pdfDate(v: unknown): string | undefined {
  if (typeof v !== 'string') return undefined;
  const m = /^(?:D:)?(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?\s*([Zz+-])?\s*(\d{2})?'?(\d{2})?'?/.exec(v.trim());
  if (!m) return undefined;
  const [, y, mo = '01', d = '01', h = '00', mi = '00', s = '00', tz, th = '00', tm = '00'] = m;
  const offset = !tz || tz.toUpperCase() === 'Z' ? 'Z' : `${tz}${th}:${tm}`;
  const date = new Date(`${y}-${mo}-${d}T${h}:${mi}:${s}${offset}`);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

function nonSpaceLength(s: string): number {
  return s.replace(/\s+/g, '').length;
}

function round2(x: number): number {
  return Math.round(x * 100) / 100;
}

const throwIfAborted = (signal: AbortSignal) => throwIfCancelled(signal, 'PDF extraction');
const errorText = (err: unknown) => errorMessage(err, 200);
