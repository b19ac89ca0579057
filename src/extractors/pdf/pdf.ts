/**
 * PDF extractor: the text layer of every page in reading order, with `--- Page N ---` markers and
 * page spans; pages without a usable text layer that show images or outlined text are rendered and
 * OCR'd (bounded per document), so scanned PDFs work.
 */
import { isToolError, toolError } from '../../errors.ts';
import type { OcrPool, OcrResult } from '../ocr/ocr-pool.ts';
import { looksBlank } from '../ocr/ocr-blank.ts';
import { installedLanguagesNote, ocrLimitMarker, oversizedImageMarker, uncoveredScriptMarker } from './ocr-page-notes.ts';
import { LARGE_IMAGE_PIXELS, MAX_PDF_IMAGE_PIXELS, OCR_ENGINE_MEMORY_BUDGET, ocrEngineBytes, RenderMemoryBudget, scanPdfImages, type PdfImageScan } from './ocr-render-budget.ts';
import { judgeTextLayer } from './ocr-text-layer.ts';
import { recognizeUpright, withoutNoise } from '../ocr/ocr-upright.ts';
import { canvasImage } from '../ocr/ocr-image.ts';
import { layoutPage, type PageLayout, type PositionedTextItem } from './pdf-layout.ts';
import { resolveHyphenBreaks } from './pdf-hyphens.ts';
import { pageRules } from './pdf-rules.ts';
import { extractedPdfTables } from './pdf-table-output.ts';
import type { PdfTable } from './pdf-tables.ts';
import { loadPdf, pageHasVisualContent, PdfPasswordError, type LoadedPdf, type PdfDocument, type PdfPage } from './pdf-render.ts';
import { ocrPageCanvas, type OcrCanvasContext } from './ocr-page-canvas.ts';
import { RawPdf, type PdfRef } from './pdf-raw-objects.ts';
import { mayHaveRules } from './pdf-rule-hint.ts';
import { nonSpaceLength } from '../shared/whitespace.ts';
import { rulesFromContent } from './pdf-content-rules.ts';
import type { Rule } from './pdf-geometry.ts';
import { repairTruncatedPdf } from './pdf-repair.ts';
import { rebalancePageTree } from './pdf-page-tree.ts';
import { DEFAULT_PDF_MAX_PAGES, pageLimitMarker } from './pdf-page-limit.ts';
import type { ExtractInput, OcrWord, PageSpan, ProcessedDocument } from '../shared/types.ts';
import { throwIfAborted as throwIfCancelled } from '../../util/abort.ts';
import { DEFAULT_SLICE_MS } from '../../util/slices.ts';
import { yieldToEventLoopEvery } from '../../util/yield.ts';
import { errorText as errorMessage } from '../../util/error-text.ts';
import { multiplyMatrix } from './pdf-geometry.ts';

/** Pages OCR'd per call at most by default (OCR_MAX_PAGES); further scanned pages are marked in the content. */
export const MAX_OCR_PAGES = 30;
/** A page with fewer non-space characters than this has no usable text layer. */
export const MIN_TEXT_LAYER_CHARS = 32;
/** Pages rendered at once for OCR at most; the render memory budget (bytes in flight) bounds them further. */
export const MAX_PARALLEL_OCR_RENDERS = 4;
/** OCR words kept in doc.ocr.words. */
export const MAX_OCR_WORDS = 20_000;
/** Pages per document whose ruling lines are read for tables (an operator list costs about as much as the text); later pages find borderless tables only. */
export const MAX_RULED_PAGES = 100;

export async function extractPdf(input: ExtractInput, deps: { ocr: OcrPool }): Promise<ProcessedDocument> {
  throwIfAborted(input.signal);
  if (!input.bytes.subarray(0, 1024).includes('%PDF-')) {
    throw toolError('PROCESSING_ERROR', 'Not a PDF file: the %PDF- header is missing');
  }
  const ocrMode = input.ocr?.mode ?? 'auto';
  const maxOcrPages = input.ocr?.maxPages ?? MAX_OCR_PAGES;
  // A language that is not installed is the caller's mistake: say so before any work.
  const ocrLanguages = ocrMode === 'never' ? [] : deps.ocr.resolveJobLanguages(input.ocr?.languages);
  // The text pass reads a document whose operator lists leave images out (no image is decoded
  // to find ruling lines); pages that may need OCR are checked and rendered from a full one.
  const { loaded, repaired, bytes } = await openPdf(input, { textOnly: true });
  const { pdfjs } = loaded;
  let doc = loaded.doc;
  let textDoc: PdfDocument | null = loaded.doc;
  try {
    const metadata = await readMetadata(doc);
    const pageCount = doc.numPages;
    const maxPages = input.pdfMaxPages && input.pdfMaxPages >= 1 ? Math.floor(input.pdfMaxPages) : DEFAULT_PDF_MAX_PAGES;
    const readable = Math.min(pageCount, maxPages);
    const texts: string[] = [];
    const pageTables: PdfTable[][] = [];
    let ruledPages = 0;
    /** The opened file's raw objects: whether a page can hold ruled tables is read from its content first. */
    let rawOpened: RawPdf | null = null;
    let ocrCandidates: number[] = [];
    /** Pages without text whose images or paths decide whether they are OCR'd (checked on the full document). */
    const visualChecks: number[] = [];
    const garbledPages: number[] = [];
    const oversizedPages: number[] = [];
    let imageScan: PdfImageScan | null = null;
    const pageErrors: number[] = [];
    // pdf.js resolves page after page in microtasks: without a turn of the event loop the timeout
    // timer (and, in a child, the IPC cancel) never fires, and the signal is never seen aborted.
    const yieldNow = yieldToEventLoopEvery(DEFAULT_SLICE_MS);
    for (let n = 1; n <= readable; n++) {
      await yieldNow();
      throwIfAborted(input.signal);
      // Text-layer pass: pages before this one are read (those needing OCR are not done yet).
      if (input.onProgress && n % 16 === 1) input.onProgress({ pages_done: n - 1 - ocrCandidates.length - visualChecks.length, pages_total: readable });
      let page: PdfPage | null = null;
      try {
        page = await doc.getPage(n);
        const ref = (page as unknown as { ref?: PdfRef | null }).ref;
        const layout = await pageLayout(page, pdfjs, () => mayHaveRules((rawOpened ??= new RawPdf(bytes)), ref) && ruledPages++ < MAX_RULED_PAGES, (viewport) =>
          rulesFromContent((rawOpened ??= new RawPdf(bytes)), ref, viewport),
        );
        const text = layout.text;
        texts.push(text);
        pageTables[n - 1] = layout.tables;
        const why = ocrMode === 'never' ? null : ocrMode === 'always' ? 'always' : nonSpaceLength(text) < MIN_TEXT_LAYER_CHARS ? 'no_text' : judgeTextLayer(text).garbled ? 'garbled' : null;
        if (why) {
          // Listing a page's operators already decodes its images: check their sizes first. A file
          // with large images has its text-less pages rendered directly (a blank render is skipped
          // there), so no large image is decoded twice or held from this pass to the OCR pass.
          imageScan ??= scanPdfImages(input.bytes);
          if (imageScan.maxPixels > MAX_PDF_IMAGE_PIXELS) oversizedPages.push(n);
          else if (why !== 'no_text' || imageScan.maxPixels > LARGE_IMAGE_PIXELS) {
            ocrCandidates.push(n);
            if (why === 'garbled') garbledPages.push(n);
          } else visualChecks.push(n);
        }
      } catch {
        throwIfAborted(input.signal);
        // A broken page costs that page only; the rest of the document is still worth reading.
        texts.push('');
        pageErrors.push(n);
      } finally {
        page?.cleanup();
      }
    }
    if (ocrCandidates.length || visualChecks.length) {
      await textDoc.destroy().catch(() => undefined);
      textDoc = null;
      doc = (await loadPdf(bytes, input.signal)).doc;
      for (const n of visualChecks) {
        throwIfAborted(input.signal);
        let page: PdfPage | null = null;
        try {
          page = await doc.getPage(n);
          if (await pageHasVisualContent(page, pdfjs)) ocrCandidates.push(n);
        } catch {
          throwIfAborted(input.signal);
          pageErrors.push(n);
        } finally {
          page?.cleanup();
        }
      }
      ocrCandidates = ocrCandidates.sort((a, b) => a - b);
      pageErrors.sort((a, b) => a - b);
    }
    if (pageErrors.length === readable && readable > 0) {
      throw toolError('PROCESSING_ERROR', 'The PDF is damaged: no page could be read');
    }

    if (oversizedPages.length && imageScan && texts.every((x) => !x.trim())) {
      throw toolError(
        'PAYLOAD_TOO_LARGE',
        `The PDF holds a ${imageScan.maxWidth}x${imageScan.maxHeight}-pixel image; scanned pages are OCR'd only when their images are at most ${MAX_PDF_IMAGE_PIXELS / 1e6} megapixels`,
      );
    }
    // Line-end hyphens are kept or joined by the vocabulary of the whole document.
    texts.splice(0, texts.length, ...resolveHyphenBreaks(texts));
    const toOcr = ocrCandidates.slice(0, maxOcrPages);
    // A page is done when its text is final: now every page but those waiting for OCR.
    let pagesDone = readable - toOcr.length;
    input.onProgress?.({ pages_done: pagesDone, pages_total: readable });
    const ocrPageDone = () => input.onProgress?.({ pages_done: ++pagesDone, pages_total: readable });
    const scanned = imageScan ?? scanPdfImages(Buffer.alloc(0));
    // Scan JPEGs are read from the file as uploaded (a repaired file's objects are not where they were).
    const render: OcrCanvasContext = { budget: new RenderMemoryBudget(), engineBudget: new RenderMemoryBudget(OCR_ENGINE_MEMORY_BUDGET), imageScan: scanned, raw: toOcr.length && scanned.count && !repaired ? new RawPdf(input.bytes) : null };
    const ocr = await ocrPages(doc, toOcr, deps.ocr, input.signal, { languages: ocrLanguages, lanes: MAX_PARALLEL_OCR_RENDERS, render, onPage: ocrPageDone });
    for (const [n, r] of ocr.results) {
      if (r.text.trim()) {
        texts[n - 1] = r.text;
        pageTables[n - 1] = [];
      }
    }
    // What was not read is said where it stands, not only in metadata.
    const withNote = (n: number, note: string) => (texts[n - 1] = texts[n - 1].trim() ? `${texts[n - 1].trim()}\n${note}` : note);
    for (const n of ocrCandidates.slice(maxOcrPages)) withNote(n, ocrLimitMarker(n, maxOcrPages));
    for (const n of oversizedPages) withNote(n, oversizedImageMarker(imageScan!, MAX_PDF_IMAGE_PIXELS));
    const installed = ocr.uncovered.size ? deps.ocr.languageInfo().installed_languages : [];
    for (const [n, script] of ocr.uncovered) withNote(n, uncoveredScriptMarker(script, ocrLanguages, installed));

    const { content, pages } = joinPages(texts, readable < pageCount ? pageLimitMarker(readable + 1, pageCount, maxPages) : null);
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
        ...(readable < pageCount ? { pages_total: pageCount, pages_read: readable, truncated: true, pdf_max_pages: maxPages } : {}),
        ocr_pages: ocrPagesDone,
        ...(ocrPagesDone.length ? { ocr_page_ms: ocrPagesDone.map((n) => ocr.ms.get(n) ?? 0), ocr_languages: ocrLanguages } : {}),
        ...(ocrMode !== 'auto' ? { ocr_mode: ocrMode } : {}),
        ...(ocrCandidates.length > toOcr.length ? { ocr_skipped_pages: ocrCandidates.slice(maxOcrPages), ocr_max_pages: maxOcrPages } : {}),
        ...(garbledPages.length ? { ocr_garbled_text_pages: garbledPages } : {}),
        ...(ocr.blank.length ? { ocr_blank_pages: ocr.blank } : {}),
        ...(oversizedPages.length ? { ocr_refused_pages: oversizedPages } : {}),
        ...(ocr.uncovered.size ? { ocr_uncovered_script: Object.fromEntries([...ocr.uncovered].map(([n, sc]) => [String(n), sc])), ...installedLanguagesNote(installed) } : {}),
        ...(ocr.failed.length ? { ocr_failed_pages: ocr.failed } : {}),
        ...(ocr.rotated.length ? { ocr_rotated_pages: ocr.rotated } : {}),
        ...(pageErrors.length ? { damaged_pages: pageErrors } : {}),
      },
      tables: extractedPdfTables(pageTables),
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
    if (textDoc && textDoc !== doc) await textDoc.destroy().catch(() => undefined);
  }
}

/** The document as pdf.js opened it, with the bytes it was opened from (rebalanced or repaired) to open it again. */
async function openPdf(input: ExtractInput, opts: { textOnly?: boolean }): Promise<{ loaded: LoadedPdf; repaired: boolean; bytes: Buffer }> {
  try {
    // A flat page tree costs pdf.js pages x kids to walk: split long /Kids arrays first.
    const bytes = rebalancePageTree(input.bytes) ?? input.bytes;
    return { loaded: await loadPdf(bytes, input.signal, opts), repaired: false, bytes };
  } catch (err) {
    throwIfAborted(input.signal);
    if (err instanceof PdfPasswordError) {
      throw toolError('PROCESSING_ERROR', 'The PDF is password-protected; remove the password and try again', err);
    }
    const fixed = repairTruncatedPdf(input.bytes);
    if (fixed) {
      try {
        const bytes = rebalancePageTree(fixed) ?? fixed;
        return { loaded: await loadPdf(bytes, input.signal, opts), repaired: true, bytes };
      } catch {
        throwIfAborted(input.signal);
      }
    }
    throw toolError('PROCESSING_ERROR', `The PDF could not be read (damaged or not a PDF): ${errorText(err)}`, err);
  }
}

/**
 * Text and tables of a page's text layer. Ruling lines are read only for pages with gapped lines
 * whose content may draw a ruled table (pdf-rule-hint.ts), MAX_RULED_PAGES per document: from the
 * raw content stream (`rawRules`, pdf-content-rules.ts, several times cheaper) or, where that
 * reader cannot follow the page, from pdf.js's operator list (the same rules either way). The text
 * pass's document lists operators without its images, so no image is decoded for them.
 */
async function pageLayout(page: PdfPage, pdfjs: LoadedPdf['pdfjs'], mayReadRules: () => boolean, rawRules: (viewport: number[]) => Rule[] | null): Promise<PageLayout> {
  const viewport = page.getViewport({ scale: 1 });
  const content = await page.getTextContent();
  const items: PositionedTextItem[] = [];
  for (const item of content.items) {
    if (!('str' in item) || !item.str) continue;
    items.push({
      str: item.str,
      transform: multiplyMatrix(viewport.transform, item.transform),
      width: item.width,
      height: item.height,
      dir: item.dir,
    });
  }
  const plain = layoutPage(items);
  if (plain.gappedLines < 2 || !mayReadRules()) return plain;
  const rules = rawRules(viewport.transform) ?? (await pageRules(page, pdfjs).catch(() => []));
  return rules.length ? layoutPage(items, rules) : plain;
}

interface OcrOutcome {
  results: Map<number, OcrResult>;
  failed: number[];
  rotated: number[];
  blank: number[];
  /** Milliseconds per OCR'd page (render + recognition). */
  ms: Map<number, number>;
  /** Pages whose text is in a script the languages used do not read, with that script. */
  uncovered: Map<number, string>;
}

async function ocrPages(
  doc: PdfDocument,
  pageNumbers: number[],
  pool: OcrPool,
  signal: AbortSignal,
  opts: { languages: string[]; lanes: number; render: OcrCanvasContext; onPage?: () => void },
): Promise<OcrOutcome> {
  const outcome: OcrOutcome = { results: new Map(), failed: [], rotated: [], blank: [], ms: new Map(), uncovered: new Map() };
  if (!pageNumbers.length) return outcome;
  const queue = [...pageNumbers];
  const lanes = Math.max(1, Math.min(pool.stats().size, opts.lanes, queue.length));
  const lane = async () => {
    for (let n = queue.shift(); n !== undefined; n = queue.shift()) {
      throwIfAborted(signal);
      let page: PdfPage | null = null;
      let usedPdfJs = false;
      let release = () => {};
      const started = Date.now();
      try {
        page = await doc.getPage(n);
        // A scan page (one full-page image) is decoded or downsampled directly: no full-size pdf.js render.
        const drawn = await ocrPageCanvas(page, opts.render);
        const canvas = drawn.canvas;
        ({ viaPdfJs: usedPdfJs, release } = drawn);
        try {
          if (looksBlank(canvas, canvas.width, canvas.height)) {
            outcome.blank.push(n);
            continue;
          }
          const image = drawn.greyImage ?? canvasImage(canvas);
          // The engine's memory grows with the pages it reads at once: bounded too, by their pixels.
          const engine = await opts.render.engineBudget.acquire(ocrEngineBytes(canvas.width * canvas.height));
          const raw = await recognizeUpright(pool, canvas, canvas.width, canvas.height, signal, { uprightImage: image, languages: opts.languages }).finally(engine.release);
          const r = withoutNoise(raw);
          outcome.results.set(n, { text: r.text, confidence: r.confidence, words: r.words });
          outcome.ms.set(n, Date.now() - started);
          if (r.rotation) outcome.rotated.push(n);
          if (raw.uncoveredScript) outcome.uncovered.set(n, raw.uncoveredScript);
        } finally {
          canvas.width = 0;
          canvas.height = 0;
        }
      } catch (err) {
        throwIfAborted(signal);
        // The pool timing out or being shut down is not a page problem: stop, say why.
        if (isToolError(err) && (err.code === 'TIMEOUT' || err.code === 'MODEL_UNAVAILABLE' || err.code === 'RATE_LIMITED' || err.code === 'VALIDATION_ERROR')) throw err;
        outcome.failed.push(n);
      } finally {
        page?.cleanup();
        // Large images, no other page in flight: drop pdf.js's document-wide caches of decoded
        // images and fonts too, or every page's full-size image stays in memory until the end.
        if (usedPdfJs && opts.render.budget.active <= 1 && (lanes === 1 || opts.render.imageScan.maxPixels > LARGE_IMAGE_PIXELS)) await doc.cleanup(true).catch(() => undefined);
        release();
        opts.onPage?.();
      }
    }
  };
  await Promise.all(Array.from({ length: lanes }, lane));
  outcome.failed.sort((a, b) => a - b);
  outcome.rotated.sort((a, b) => a - b);
  outcome.blank.sort((a, b) => a - b);
  return outcome;
}

/** `unreadNote` stands, as one more page, where the pages beyond PDF_MAX_PAGES would. */
function joinPages(texts: string[], unreadNote: string | null): { content: string; pages: PageSpan[] } {
  let content = '';
  const pages: PageSpan[] = [];
  texts.forEach((text, i) => {
    if (i > 0) content += '\n\n';
    const start = content.length;
    content += `--- Page ${i + 1} ---\n${text.trim()}`;
    pages.push({ number: i + 1, unit: 'page', start, end: content.length });
  });
  if (unreadNote) {
    if (content) content += '\n\n';
    const start = content.length;
    content += `--- Page ${texts.length + 1} ---\n${unreadNote}`;
    pages.push({ number: texts.length + 1, unit: 'page', start, end: content.length });
  }
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

function round2(x: number): number {
  return Math.round(x * 100) / 100;
}

const throwIfAborted = (signal: AbortSignal) => throwIfCancelled(signal, 'PDF extraction');
const errorText = (err: unknown) => errorMessage(err, 200);
