/**
 * Which extractor a file goes to: magic bytes first, then Content-Type, then the extension of the
 * file name (Content-Disposition or URL path). Binary data of no supported kind is refused with
 * UNSUPPORTED_FORMAT rather than decoded into mojibake; text of no particular kind is plain text.
 */
import { toolError } from '../errors.ts';
import type { DocumentKind } from '../extractors/shared/types.ts';
import { sniffImageFormat } from '../extractors/shared/image-info.ts';
import { bomOf, hasOle2Signature, hasZipSignature, type BomEncoding } from '../extractors/shared/signatures.ts';
import { ooxmlKind } from '../extractors/shared/zip.ts';
import { extensionOf } from './filename.ts';
import { FORMAT_BY_EXTENSION, FORMAT_BY_MEDIA_TYPE, FORMATS, type DetectedFormat } from './formats.ts';

export interface DetectedType {
  kind: DocumentKind;
  format: DetectedFormat;
  /** Canonical media type of the detected format. */
  mime: string;
  /** Which evidence decided. */
  by: 'magic' | 'content-type' | 'extension' | 'sniff';
}

export interface DetectInput {
  bytes: Buffer;
  contentType?: string;
  /** File name from Content-Disposition, the upload, or the URL path. */
  filename?: string;
}

const result = (format: DetectedFormat, by: DetectedType['by']): DetectedType => ({
  kind: FORMATS[format].kind,
  format,
  mime: FORMATS[format].mime,
  by,
});

export function formatFromContentType(contentType: string | undefined): DetectedFormat | undefined {
  if (!contentType) return undefined;
  const essence = contentType.split(';')[0]!.trim().toLowerCase();
  return FORMAT_BY_MEDIA_TYPE.get(essence);
}

export function formatFromFilename(filename: string | undefined): DetectedFormat | undefined {
  return FORMAT_BY_EXTENSION.get(extensionOf(filename));
}

/** The image format named by the magic bytes, if any (the image extractor's own sniffer). */
function imageMagic(b: Buffer): DetectedFormat | undefined {
  const format = sniffImageFormat(b);
  // "BM" alone is too weak (text can start with it); require a known DIB header size as well.
  if (format === 'bmp') return b.length >= 26 && [12, 40, 52, 56, 64, 108, 124].includes(b.readUInt32LE(14)) ? 'bmp' : undefined;
  return format ?? undefined;
}

const utf16Name = (s: string) => Buffer.from(`${s}\0`, 'utf16le');

/** What an OLE2 compound file holds, from its directory entry names. */
function oleFormat(b: Buffer, hint: DetectedFormat | undefined): DetectedFormat {
  if (b.includes(utf16Name('EncryptedPackage'))) {
    throw toolError('PROCESSING_ERROR', 'The document is password-protected (encrypted Office file); remove the password and try again');
  }
  if (b.includes(utf16Name('Workbook')) || b.includes(utf16Name('Book'))) return 'xls';
  if (b.includes(utf16Name('WordDocument'))) {
    throw toolError('UNSUPPORTED_FORMAT', 'Legacy Word .doc files are not supported; save the document as DOCX or PDF');
  }
  if (b.includes(utf16Name('PowerPoint Document'))) {
    throw toolError('UNSUPPORTED_FORMAT', 'Legacy PowerPoint .ppt files are not supported; save the presentation as PPTX or PDF');
  }
  if (hint === 'xls') return 'xls';
  throw toolError('UNSUPPORTED_FORMAT', 'Unsupported format: an OLE2 compound file that is not an Excel workbook');
}

function zipFormat(b: Buffer, hint: DetectedFormat | undefined): DetectedFormat {
  const kind = ooxmlKind(b);
  if (kind) return kind;
  // A zip whose content types could not be read: trust a declared OOXML type; the extractor
  // gives the precise error if the file is damaged.
  if (hint === 'docx' || hint === 'pptx' || hint === 'xlsx') return hint;
  const head = b.subarray(0, 256).toString('latin1');
  if (head.includes('mimetypeapplication/vnd.oasis.opendocument')) {
    throw toolError('UNSUPPORTED_FORMAT', 'OpenDocument files (ODT/ODS/ODP) are not supported; save as DOCX, XLSX, PPTX or PDF');
  }
  throw toolError('UNSUPPORTED_FORMAT', 'Unsupported format: a ZIP archive that is not a Word, PowerPoint or Excel document');
}

type TextEncodingGuess = BomEncoding | 'none';

/**
 * Whether BOM-less bytes are text: no NUL bytes (unless laid out like UTF-16) and almost no
 * control characters. Legacy 8-bit encodings (Latin-1, Shift-JIS) count as text.
 */
export function looksLikeText(b: Buffer): boolean {
  const n = Math.min(b.length, 8192);
  if (n === 0) return true;
  let nul = 0;
  let nulEven = 0;
  let control = 0;
  for (let i = 0; i < n; i++) {
    const c = b[i]!;
    if (c === 0) {
      nul++;
      if (i % 2 === 0) nulEven++;
    } else if ((c < 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d && c !== 0x0c && c !== 0x1b) || c === 0x7f) {
      control++;
    }
  }
  if (nul > 0) {
    // UTF-16 without BOM: ASCII-range text puts zeros in every other byte.
    const half = n / 2;
    const utf16 = nul >= half * 0.3 && (nulEven / nul > 0.95 || nulEven / nul < 0.05);
    return utf16 && control <= n * 0.01;
  }
  return control <= n * 0.02;
}

/** Text decoded just enough to sniff its first kilobyte. */
function sniffHead(b: Buffer, bom: TextEncodingGuess, bytes = 2048): string {
  const head = b.subarray(0, bytes);
  const even = (x: Buffer) => x.subarray(0, x.length - (x.length % 2));
  if (bom === 'utf-16le') return even(head.subarray(2)).toString('utf16le');
  if (bom === 'utf-16be') return Buffer.from(even(head.subarray(2))).swap16().toString('utf16le');
  if (bom === 'utf-8') return head.subarray(3).toString('utf8');
  if (bom === 'none' && head.includes(0)) {
    // BOM-less UTF-16: keep the non-zero bytes (enough for an ASCII sniff).
    return Buffer.from(head.filter((x) => x !== 0)).toString('latin1');
  }
  return head.toString('latin1');
}

/** The WHATWG MIME-sniffing HTML signatures, after leading whitespace and comments. */
export function looksLikeHtml(text: string): boolean {
  let s = text.replace(/^\uFEFF/, '').trimStart();
  if (/^<\?xml[^>]*\?>/i.test(s)) s = s.replace(/^<\?xml[^>]*\?>/i, '').trimStart();
  while (s.startsWith('<!--')) {
    const end = s.indexOf('-->');
    if (end < 0) return false;
    s = s.slice(end + 3).trimStart();
  }
  return /^<(!doctype\s+html|html|head|body|script|iframe|h1|div|font|table|a|style|title|b|br|p)[\s/>]/i.test(s);
}

/** Fields in one line, delimiters inside double quotes not counted. */
function countFields(line: string, delim: string): number {
  let n = 1;
  let quoted = false;
  for (const ch of line) {
    if (ch === '"') quoted = !quoted;
    else if (ch === delim && !quoted) n++;
  }
  return n;
}

/**
 * Whether text without any type hint is a delimited table: the first lines (up to 20) split into
 * mostly the same number (>= 2, or >= 3 for commas, which prose uses freely) of fields by one
 * delimiter.
 */
export function looksLikeDelimited(text: string, complete = true): boolean {
  const lines = text.split(/\r?\n/).filter((l) => l.trim() !== '');
  // The last line of a sniff window that cut the file short may be partial; leave it out.
  const sample = lines.slice(0, Math.min(20, complete ? lines.length : lines.length - 1));
  if (sample.length < 3) return false;
  for (const [delim, minFields] of [['\t', 2], [';', 2], ['|', 2], [',', 3]] as const) {
    const counts = sample.map((l) => countFields(l, delim));
    const tally = new Map<number, number>();
    for (const c of counts) tally.set(c, (tally.get(c) ?? 0) + 1);
    const [mode, agreeing] = [...tally].sort((a, b) => b[1] - a[1])[0]!;
    // A header that differs from the body (a title line, a short header) is tolerated.
    if (mode >= minFields && agreeing / counts.length >= 0.75) return true;
  }
  return false;
}

/**
 * Decides the format. Throws UNSUPPORTED_FORMAT (or PROCESSING_ERROR for encrypted Office
 * files) when the bytes are none of the supported kinds.
 */
export function detectType(input: DetectInput): DetectedType {
  const b = input.bytes;
  const fromType = formatFromContentType(input.contentType);
  const fromName = formatFromFilename(input.filename);
  const hint = fromType ?? fromName;

  if (b.length === 0) return result('empty', 'magic');
  if (b.subarray(0, 1024).includes('%PDF-')) return result('pdf', 'magic');
  if (hasZipSignature(b)) return result(zipFormat(b, hint), 'magic');
  if (hasOle2Signature(b)) return result(oleFormat(b, hint), 'magic');
  const image = imageMagic(b);
  if (image) return result(image, 'magic');

  const bom: TextEncodingGuess = bomOf(b)?.encoding ?? 'none';
  if (bom === 'none' && !looksLikeText(b)) {
    const declared = hint ? ` (declared as ${FORMATS[hint].label}, but the bytes do not match)` : '';
    throw toolError('UNSUPPORTED_FORMAT', `Unsupported format: binary data of an unrecognised type${declared}`);
  }

  // Text: HTML, CSV or plain. An explicit HTML type wins; an explicit non-HTML text type
  // (a .csv or .txt file that happens to start with a tag) beats the sniff.
  if (fromType === 'html') return result('html', 'content-type');
  if (fromName === 'html' && (fromType === undefined || fromType === 'text')) return result('html', 'extension');
  const explicitText = fromType === 'csv' || (fromType === undefined && (fromName === 'csv' || fromName === 'text'));
  if (!explicitText && looksLikeHtml(sniffHead(b, bom))) return result('html', 'sniff');
  if (fromType === 'csv') return result('csv', 'content-type');
  if (fromName === 'csv' && (fromType === undefined || fromType === 'text' || fromType === 'xls')) return result('csv', 'extension');
  // Some servers label CSV as application/vnd.ms-excel; text bytes cannot be a real .xls.
  if (fromType === 'xls') return result('csv', 'content-type');
  if (fromName === undefined && (fromType === undefined || fromType === 'text') && looksLikeDelimited(sniffHead(b, bom, 65_536), b.length <= 65_536)) {
    return result('csv', 'sniff');
  }
  return result('text', fromType === 'text' ? 'content-type' : fromName === 'text' ? 'extension' : 'sniff');
}
