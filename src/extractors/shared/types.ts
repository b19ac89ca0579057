/**
 * The shape every extractor fills. Extractors are pure functions of bytes (plus options); the
 * document service adds language detection and caching around them.
 */
import type { ExtractLimits } from './limits.ts';

/**
 * The kinds extractors read, one key each. Every format folder adds its own kinds beside its
 * descriptor (`declare module '../shared/types.ts' { interface DocumentKinds { ... } }`), so a kind
 * is written once, in its folder; registry.ts fails to compile unless the declared kinds and the
 * registered ones are the same. (A union here would make a new format touch this file too; a type
 * derived from the registry would close an import cycle through this module.)
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled by declaration merging, one format folder at a time
export interface DocumentKinds {}

export type DocumentKind = keyof DocumentKinds & string;

export interface PageSpan {
  /** 1-based page, slide or sheet number. */
  number: number;
  /** 'page' for PDF, 'slide' for PPTX, 'sheet' for spreadsheets, 'section' for everything else. */
  unit: 'page' | 'slide' | 'sheet' | 'section';
  /** Optional label (sheet name, slide title). */
  label?: string;
  /** Char offsets into ProcessedDocument.content: [start, end). */
  start: number;
  end: number;
}

export interface ExtractedTable {
  /** Pipe-table (Markdown) rendering, used as chunkable content; at most 20 data rows for sheets. */
  content: string;
  /** 'spreadsheet' | 'csv' | 'docx' | 'pptx' | 'html' | 'pdf' */
  table_type: string;
  /** Human-readable location, e.g. "sheet:Sales", "page:3", "slide:2", "table:1". */
  location: string;
  metadata: Record<string, unknown>;
  /** Full data for spreadsheets/CSV (query_spreadsheet); never sent over the wire in full. */
  headers?: string[];
  rows?: Array<Array<string | number | boolean | null>>;
  /** Source row number (Excel row, or CSV line) of each entry in rows. */
  row_numbers?: number[];
  sheet?: string;
}

export interface ExtractedUrl {
  url: string;
  type: 'api_endpoint' | 'navigation' | 'image' | 'general';
  context: string;
  location?: string;
}

export interface OcrWord {
  text: string;
  confidence: number;
}

export interface ProcessedDocument {
  kind: DocumentKind;
  content: string;
  metadata: Record<string, unknown>;
  tables: ExtractedTable[];
  images: Array<Record<string, unknown>>;
  urls: ExtractedUrl[];
  /** Char spans of pages/slides/sheets in content, for chunk page ranges. */
  pages: PageSpan[];
  detected_language?: string;
  detected_language_name?: string;
  /** OCR detail for images and scanned pages. */
  ocr?: { text: string; confidence: number; words: OcrWord[]; pages?: number[] };
}

export interface ExtractInput {
  bytes: Buffer;
  filename?: string;
  contentType?: string;
  /** Final URL of a downloaded document (after redirects): resolves relative links in HTML. */
  sourceUrl?: string;
  /** OCR choices for PDFs and images (plain data: it crosses to extraction child processes). */
  ocr?: OcrRequest;
  /** Decode-size limits (HTML_MAX_ELEMENTS, CSV_MAX_COLUMNS, TEXT_MAX_CHARS); defaults in limits.ts. Plain numbers. */
  limits?: Partial<ExtractLimits>;
  /** PDFs: pages whose text is read at most (PDF_MAX_PAGES); later ones are noted in the content. */
  pdfMaxPages?: number;
  /**
   * PDFs: pages whose text is final so far (text layer read, or OCR done) of the pages read; a
   * knowledge-base job shows it while a long scan is OCR'd. In a child it travels as a message.
   */
  onProgress?: (p: PageProgress) => void;
  signal: AbortSignal;
}

export interface PageProgress {
  pages_done: number;
  pages_total: number;
}

export interface OcrRequest {
  /** auto (default): pages without a usable text layer; always: every page; never: no OCR. */
  mode?: 'auto' | 'always' | 'never';
  /** Tesseract language codes, e.g. ['eng', 'deu']; default OCR_LANGUAGES. */
  languages?: string[];
  /** Scanned pages OCR'd at most (OCR_MAX_PAGES, default 30); knowledge-base jobs pass no limit. */
  maxPages?: number;
}
