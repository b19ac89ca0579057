/** Schemas shared by the document tools (process, extract_*, query_spreadsheet). */
import Type from 'typebox';
import { MAX_URL_LENGTH } from '../../documents/url-policy.ts';

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

export const TableItem = Type.Object(
  {
    content: Type.String({ description: `Markdown pipe table, at most ${MAX_TABLE_CHARS} characters (spreadsheets: at most 20 rows)` }),
    table_type: Type.String({ description: 'spreadsheet, csv, docx, pptx, html or pdf' }),
    location: Type.String({ description: 'e.g. "sheet:Sales", "slide:2", "table:1"' }),
    metadata: Metadata,
    truncated: Type.Optional(Type.Boolean({ description: 'True when content was cut to the limit' })),
    content_length: Type.Optional(Type.Integer({ minimum: 0, description: 'Full length of content when truncated' })),
  },
  { additionalProperties: false },
);

export const LanguageFields = {
  detected_language: Type.String({ description: 'ISO 639-1 code of the content language, e.g. "en"' }),
  detected_language_name: Type.String({ description: 'English name of the language' }),
};

export const TextResultFields = {
  text: Type.String({ description: `Extracted text, at most max_chars (default ${MAX_CONTENT_CHARS}) characters` }),
  char_count: Type.Integer({ minimum: 0, description: 'Length of the full extracted text' }),
  truncated: Type.Boolean({ description: 'True when text was cut to max_chars' }),
  source: Type.String({ description: 'The URL, or "upload:" and the file name' }),
  metadata: Metadata,
  ...LanguageFields,
};
