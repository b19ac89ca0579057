/**
 * The one table of document formats. Detection (detect-type.ts: media types and extensions that
 * name a format), dispatch (extractor-table.ts: one extractor per kind), messages (labels) and the
 * advertised formats (get_system_health, rag://supported-formats: tools/formats.ts) all derive
 * from FORMATS and KINDS, so a name the detector accepts is a name the server advertises.
 */
import type { DocumentKind } from '../extractors/shared/types.ts';

export interface FormatSpec {
  /** The extractor that reads it. */
  kind: DocumentKind;
  /** For messages: "the file is a PNG image". */
  label: string;
  /** Canonical media type (reported as mime_type). */
  mime: string;
  /** Media types that name this format (lower case, without parameters); the canonical one first. */
  mediaTypes: readonly string[];
  /** File name extensions that name this format (lower case, without the dot). */
  extensions: readonly string[];
}

const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
const PPTX = 'application/vnd.openxmlformats-officedocument.presentationml.presentation';
const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

export const FORMATS = {
  pdf: { kind: 'pdf', label: 'a PDF document', mime: 'application/pdf', mediaTypes: ['application/pdf', 'application/x-pdf'], extensions: ['pdf'] },
  docx: {
    kind: 'docx',
    label: 'a Word document (DOCX)',
    mime: DOCX,
    mediaTypes: [DOCX, 'application/vnd.ms-word.document.macroenabled.12'],
    extensions: ['docx', 'docm', 'dotx'],
  },
  pptx: {
    kind: 'pptx',
    label: 'a PowerPoint presentation (PPTX)',
    mime: PPTX,
    mediaTypes: [PPTX, 'application/vnd.ms-powerpoint.presentation.macroenabled.12'],
    extensions: ['pptx', 'pptm', 'ppsx', 'potx'],
  },
  xlsx: {
    kind: 'xlsx',
    label: 'an Excel workbook (XLSX)',
    mime: XLSX,
    mediaTypes: [XLSX, 'application/vnd.ms-excel.sheet.macroenabled.12'],
    extensions: ['xlsx', 'xlsm', 'xltx'],
  },
  // Some servers label CSV as application/vnd.ms-excel: detection reads text bytes under it as CSV.
  xls: { kind: 'xls', label: 'a legacy Excel workbook (XLS)', mime: 'application/vnd.ms-excel', mediaTypes: ['application/vnd.ms-excel', 'application/msexcel'], extensions: ['xls'] },
  csv: {
    kind: 'csv',
    label: 'a CSV/TSV table',
    mime: 'text/csv',
    mediaTypes: ['text/csv', 'text/tab-separated-values', 'application/csv', 'text/comma-separated-values'],
    extensions: ['csv', 'tsv', 'tab'],
  },
  png: { kind: 'image', label: 'a PNG image', mime: 'image/png', mediaTypes: ['image/png'], extensions: ['png'] },
  jpeg: { kind: 'image', label: 'a JPEG image', mime: 'image/jpeg', mediaTypes: ['image/jpeg', 'image/jpg'], extensions: ['jpg', 'jpeg', 'jpe'] },
  gif: { kind: 'image', label: 'a GIF image', mime: 'image/gif', mediaTypes: ['image/gif'], extensions: ['gif'] },
  tiff: { kind: 'image', label: 'a TIFF image', mime: 'image/tiff', mediaTypes: ['image/tiff'], extensions: ['tif', 'tiff'] },
  webp: { kind: 'image', label: 'a WebP image', mime: 'image/webp', mediaTypes: ['image/webp'], extensions: ['webp'] },
  bmp: { kind: 'image', label: 'a BMP image', mime: 'image/bmp', mediaTypes: ['image/bmp', 'image/x-ms-bmp'], extensions: ['bmp'] },
  html: { kind: 'html', label: 'an HTML page', mime: 'text/html', mediaTypes: ['text/html', 'application/xhtml+xml'], extensions: ['html', 'htm', 'xhtml'] },
  text: {
    kind: 'text',
    label: 'plain text',
    mime: 'text/plain',
    mediaTypes: ['text/plain', 'text/markdown', 'application/json', 'application/xml', 'text/xml'],
    extensions: ['txt', 'text', 'md', 'markdown', 'json', 'xml', 'log'],
  },
  /** Zero bytes: read as (empty) text, named by nothing. */
  empty: { kind: 'text', label: 'an empty file', mime: 'text/plain', mediaTypes: [], extensions: [] },
} as const satisfies Record<string, FormatSpec>;

export type DetectedFormat = keyof typeof FORMATS;

export interface KindSpec {
  /** For "expected ..." messages. */
  expected: string;
  /** For the advertised list of formats. */
  description: string;
}

/** Every kind, in the order the supported formats are listed. */
export const KINDS: Readonly<Record<DocumentKind, KindSpec>> = {
  pdf: { expected: 'a PDF document', description: 'PDF documents (text layer; OCR for scanned pages when available)' },
  docx: { expected: 'a Word document (DOCX)', description: 'Word documents' },
  pptx: { expected: 'a PowerPoint presentation (PPTX)', description: 'PowerPoint presentations' },
  xlsx: { expected: 'an Excel workbook (XLSX)', description: 'Excel workbooks' },
  xls: { expected: 'a legacy Excel workbook (XLS)', description: 'Legacy Excel workbooks' },
  csv: { expected: 'a CSV/TSV file', description: 'Comma- or tab-separated values' },
  image: { expected: 'an image (PNG, JPEG, GIF, TIFF, WebP or BMP)', description: 'Images (OCR)' },
  html: { expected: 'an HTML page', description: 'Web pages' },
  text: { expected: 'plain text', description: 'Plain text, Markdown, JSON, XML and logs' },
};

const ALL = Object.entries(FORMATS) as [DetectedFormat, FormatSpec][];

/** name -> format, refusing a name claimed twice (the table must be unambiguous). */
function index(names: (f: FormatSpec) => readonly string[]): ReadonlyMap<string, DetectedFormat> {
  const out = new Map<string, DetectedFormat>();
  for (const [format, spec] of ALL) {
    for (const name of names(spec)) {
      if (out.has(name)) throw new Error(`format table: "${name}" names both ${out.get(name)} and ${format}`);
      out.set(name, format);
    }
  }
  return out;
}

export const FORMAT_BY_MEDIA_TYPE = index((f) => f.mediaTypes);
export const FORMAT_BY_EXTENSION = index((f) => f.extensions);

/** What the server advertises for one kind: every extension and media type that detection accepts for it. */
export interface KindFormats {
  format: DocumentKind;
  description: string;
  extensions: string[];
  media_types: string[];
}

export function kindFormats(kind: DocumentKind): KindFormats {
  const specs = ALL.filter(([, f]) => f.kind === kind).map(([, f]) => f);
  return {
    format: kind,
    description: KINDS[kind].description,
    extensions: specs.flatMap((f) => f.extensions.map((e) => `.${e}`)),
    media_types: specs.flatMap((f) => f.mediaTypes),
  };
}

export const DOCUMENT_KINDS = Object.keys(KINDS) as DocumentKind[];
