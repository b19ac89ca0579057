/**
 * One extractor per document kind. Each is loaded on first use: the heavy parsers (pdf.js,
 * jsdom, SheetJS, tesseract) cost start-up time and memory only when a file of that kind arrives.
 */
import type { DocumentKind, ExtractInput, ProcessedDocument } from '../extractors/shared/types.ts';
import type { OcrPool } from '../extractors/ocr/ocr-pool.ts';

export interface ExtractorDeps {
  ocr: OcrPool;
}

export type Extractor = (input: ExtractInput, deps: ExtractorDeps) => Promise<ProcessedDocument> | ProcessedDocument;

export type ExtractorTable = Record<DocumentKind, Extractor>;

const spreadsheet: Extractor = async (input) => (await import('../extractors/spreadsheet/spreadsheet.ts')).extractSpreadsheet(input);

export const DEFAULT_EXTRACTORS: Readonly<ExtractorTable> = Object.freeze({
  pdf: async (input, deps) => (await import('../extractors/pdf/pdf.ts')).extractPdf(input, deps),
  image: async (input, deps) => (await import('../extractors/image/image.ts')).extractImage(input, deps),
  docx: async (input) => (await import('../extractors/docx/docx.ts')).extractDocx(input),
  pptx: async (input) => (await import('../extractors/pptx/pptx.ts')).extractPptx(input),
  xlsx: spreadsheet,
  xls: spreadsheet,
  csv: async (input) => (await import('../extractors/csv/csv.ts')).extractCsv(input),
  html: async (input) => (await import('../extractors/html/html.ts')).extractHtml(input, { baseUrl: input.sourceUrl }),
  text: async (input) => (await import('../extractors/text/text.ts')).extractText(input),
});
