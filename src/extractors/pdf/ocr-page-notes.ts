/**
 * The notes put into a PDF's content where a page was not (fully) read by OCR, so that a reader of
 * the text — or of a chunk of it — learns why and what to do, not only a client reading metadata.
 */
import type { PdfImageScan } from './ocr-render-budget.ts';
import { uncoveredScriptAdvice } from '../ocr/ocr-languages.ts';

export function ocrLimitMarker(page: number, max: number): string {
  return (
    `[Page ${page} not read: it is a scanned page beyond the first ${max} that one call OCRs (OCR_MAX_PAGES). ` +
    'Index the document as a knowledge-base job, which OCRs every page, or send the pages in smaller PDFs.]'
  );
}

export function oversizedImageMarker(scan: PdfImageScan, maxPixels: number): string {
  return (
    `[Page not read by OCR: the PDF holds a ${scan.maxWidth}x${scan.maxHeight}-pixel image, above the limit of ` +
    `${maxPixels / 1e6} megapixels per image. Re-export the scan at a lower resolution (300 dpi is plenty).]`
  );
}

export function uncoveredScriptMarker(script: string, used: readonly string[], installed: readonly string[]): string {
  return `[OCR: ${uncoveredScriptAdvice(script, used, installed)}.]`;
}

export function installedLanguagesNote(installed: readonly string[]): { ocr_installed_languages: string[] } {
  return { ocr_installed_languages: [...installed] };
}
