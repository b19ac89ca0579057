/** Schemas shared by the document tools (process, extract_*, query_spreadsheet). */
import Type from 'typebox';
import { MAX_URL_LENGTH } from '../../documents/url-policy.ts';
import { thousands } from '../../util/thousands.ts';

/** Characters of text a response carries at most (callers may ask for fewer with max_chars). */
export const MAX_CONTENT_CHARS = 50_000;
/** Characters of one table rendering at most. */
export const MAX_TABLE_CHARS = 5_000;

const HTTP_URL_PATTERN = '^[Hh][Tt][Tt][Pp][Ss]?://';

export const DocumentUrl = Type.String({
  minLength: 8,
  maxLength: MAX_URL_LENGTH,
  pattern: HTTP_URL_PATTERN,
  description:
    'http(s) URL of the document. Over REST the file itself may be sent instead (multipart field "file", or a raw body with its Content-Type).',
});

export const ImageUrl = Type.String({
  minLength: 8,
  maxLength: MAX_URL_LENGTH,
  pattern: HTTP_URL_PATTERN,
  description: 'http(s) URL of the image (PNG, JPEG, GIF, TIFF, WebP, BMP). Over REST the image itself may be uploaded instead.',
});

export const MaxChars = Type.Integer({
  minimum: 1,
  maximum: MAX_CONTENT_CHARS,
  description: `Return at most this many characters of text (default and maximum ${MAX_CONTENT_CHARS}); the full length is always reported`,
});

/** Per-call OCR choices for tools that read PDFs and images. */
export const OcrFields = {
  ocr: Type.Optional(
    Type.Union([Type.Literal('auto'), Type.Literal('always'), Type.Literal('never')], {
      description:
        'OCR of scanned pages and images: auto (default) reads pages without a usable text layer (none, or a garbled one); ' +
        'always reads every page; never uses the text layer only',
    }),
  ),
  ocr_languages: Type.Optional(
    Type.Array(Type.String({ pattern: '^[A-Za-z_]{3,16}$' }), {
      minItems: 1,
      maxItems: 8,
      uniqueItems: true,
      examples: [['eng']],
      description: 'Tesseract language codes to read with, e.g. ["deu"] or ["jpn", "jpn_vert"] (default OCR_LANGUAGES); get_system_health lists the installed ones',
    }),
  ),
};

/** The OcrRequest a tool input asks for (undefined: the server's defaults). */
export function ocrRequestOf(input: { ocr?: 'auto' | 'always' | 'never'; ocr_languages?: string[] }): { mode?: 'auto' | 'always' | 'never'; languages?: string[] } | undefined {
  if (!input.ocr && !input.ocr_languages) return undefined;
  return { ...(input.ocr ? { mode: input.ocr } : {}), ...(input.ocr_languages ? { languages: input.ocr_languages } : {}) };
}

export const TextOffset = Type.Integer({
  minimum: 0,
  default: 0,
  description: 'Character offset to start from (default 0): pass the next_offset of the previous answer to read on',
});

/** Where a page of text starts, and where the next one does (null at the end). */
export const TextPageFields = {
  offset: Type.Integer({ minimum: 0, description: 'Offset of the first character returned' }),
  next_offset: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
    description: 'Offset to ask for next to read on (same document, same extraction); null when the text ends here',
  }),
};

/** Free-form metadata (kept as is by the serializers). */
export const Metadata = Type.Object({}, { additionalProperties: true, description: 'Format-specific details' });

export const UrlItem = Type.Object(
  {
    url: Type.String(),
    type: Type.Union([Type.Literal('api_endpoint'), Type.Literal('navigation'), Type.Literal('image'), Type.Literal('general')]),
    context: Type.String({ description: 'Up to 100 characters either side of the URL in the content' }),
    location: Type.Optional(Type.String({ description: 'Where it appears: "page 3", "slide 2", "sheet Sales"' })),
  },
  { additionalProperties: false },
);

/** Characters of row data (JSON) one answer carries across its tables; the rest is paged. */
export const MAX_TABLE_ROW_CHARS = 1_000_000;
/** Tables listed per answer (table_offset pages through more). */
export const MAX_LISTED_TABLES = 100;

const RowCell = Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()]);

export const TableItem = Type.Object(
  {
    content: Type.String({ description: `Markdown pipe table, at most ${MAX_TABLE_CHARS} characters (spreadsheets and CSV: at most 20 rows; rows has them all)` }),
    table_type: Type.String({ description: 'spreadsheet, csv, docx, pptx, html or pdf' }),
    location: Type.String({ description: 'e.g. "sheet:Sales", "slide:2", "table:1"' }),
    metadata: Metadata,
    headers: Type.Optional(Type.Array(Type.String(), { description: 'Column names (tables with row data: spreadsheets, CSV, DOCX, PPTX, HTML)' })),
    rows: Type.Optional(
      Type.Array(Type.Array(RowCell), {
        description: `Data rows from row_offset, every row up to ${thousands(MAX_TABLE_ROW_CHARS)} characters of row data per answer (then truncated is true and next_table_offset / next_row_offset say where to go on)`,
      }),
    ),
    row_count: Type.Optional(Type.Integer({ minimum: 0, description: 'Number of data rows in the whole table' })),
    row_offset: Type.Optional(Type.Integer({ minimum: 0, description: 'Index (0-based) of the first data row in rows' })),
    truncated: Type.Optional(Type.Boolean({ description: 'True when content was cut to its limit or rows stop before the last row' })),
    content_length: Type.Optional(Type.Integer({ minimum: 0, description: 'Full length of content when it was cut' })),
  },
  { additionalProperties: false },
);

export const TableOffset = Type.Integer({
  minimum: 0,
  default: 0,
  description: `Index (0-based) of the first table to list (default 0; at most ${MAX_LISTED_TABLES} are listed per answer)`,
});
export const RowOffset = Type.Integer({
  minimum: 0,
  default: 0,
  description: 'Data rows of the first listed table to skip (default 0): pass next_row_offset with next_table_offset to read on',
});

/** Where the next answer should start so that every table and row is read once. */
export const TablePageFields = {
  next_table_offset: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
    description: 'table_offset for the next call when tables or rows remain (with next_row_offset); null when all were sent',
  }),
  next_row_offset: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], { description: 'row_offset for the next call; null when all were sent' }),
};

export const LanguageFields = {
  detected_language: Type.String({ description: 'ISO 639-1 code of the content language, e.g. "en"' }),
  detected_language_name: Type.String({ description: 'English name of the language' }),
};

export const TextResultFields = {
  text: Type.String({ description: `Extracted text from offset, at most max_chars (default ${MAX_CONTENT_CHARS}) characters` }),
  char_count: Type.Integer({ minimum: 0, description: 'Length of the full extracted text' }),
  truncated: Type.Boolean({ description: 'True when text does not reach the end (next_offset says where to go on)' }),
  ...TextPageFields,
  source: Type.String({ description: 'The URL, or "upload:" and the file name' }),
  metadata: Metadata,
  ...LanguageFields,
};
