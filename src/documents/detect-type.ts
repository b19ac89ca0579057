/**
 * Which extractor a file goes to: magic bytes first, then Content-Type, then the extension of the
 * file name (Content-Disposition or URL path). Binary data of no supported kind is refused with
 * UNSUPPORTED_FORMAT rather than decoded into mojibake; text of no particular kind is plain text.
 * The checks themselves belong to the formats (each folder's descriptor, in the order of
 * src/extractors/registry.ts); what is here is the order of evidence and the refusals.
 */
import { toolError } from '../errors.ts';
import { MAGIC, TEXT_FORMATS, TEXT_SNIFFS } from '../extractors/registry.ts';
import type { Evidence, TextEvidence } from '../extractors/shared/descriptor.ts';
import type { DocumentKind } from '../extractors/shared/types.ts';
import { bomOf, hasOle2Signature, hasZipSignature, oleHasEntry, type BomEncoding } from '../extractors/shared/signatures.ts';
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

/** Which OOXML format a readable zip holds, read once however many formats ask. */
function ooxmlOnce(b: Buffer): () => string | null {
  let kind: string | null | undefined;
  return () => (kind === undefined ? (kind = ooxmlKind(b)) : kind);
}

/** A zip no format claimed. */
function refuseZip(b: Buffer): never {
  const head = b.subarray(0, 256).toString('latin1');
  if (head.includes('mimetypeapplication/vnd.oasis.opendocument')) {
    throw toolError('UNSUPPORTED_FORMAT', 'OpenDocument files (ODT/ODS/ODP) are not supported; save as DOCX, XLSX, PPTX or PDF');
  }
  throw toolError('UNSUPPORTED_FORMAT', 'Unsupported format: a ZIP archive that is not a Word, PowerPoint or Excel document');
}

/** An OLE2 compound file no format claimed, named from its directory entries. */
function refuseOle(b: Buffer): never {
  if (oleHasEntry(b, 'WordDocument')) {
    throw toolError('UNSUPPORTED_FORMAT', 'Legacy Word .doc files are not supported; save the document as DOCX or PDF');
  }
  if (oleHasEntry(b, 'PowerPoint Document')) {
    throw toolError('UNSUPPORTED_FORMAT', 'Legacy PowerPoint .ppt files are not supported; save the presentation as PPTX or PDF');
  }
  throw toolError('UNSUPPORTED_FORMAT', 'Unsupported format: an OLE2 compound file that is not an Excel workbook');
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
  // Encrypted OOXML is an OLE2 file holding the package: refused before any format looks at it.
  if (hasOle2Signature(b) && oleHasEntry(b, 'EncryptedPackage')) {
    throw toolError('PROCESSING_ERROR', 'The document is password-protected (encrypted Office file); remove the password and try again');
  }
  const evidence: Evidence = { bytes: b, fromType, fromName, hint, ooxml: ooxmlOnce(b) };
  for (const magic of MAGIC) {
    const format = magic(evidence);
    if (format) return result(format, 'magic');
  }
  if (hasZipSignature(b)) refuseZip(b);
  if (hasOle2Signature(b)) refuseOle(b);

  const bom: TextEncodingGuess = bomOf(b)?.encoding ?? 'none';
  if (bom === 'none' && !looksLikeText(b)) {
    const declared = hint ? ` (declared as ${FORMATS[hint].label}, but the bytes do not match)` : '';
    throw toolError('UNSUPPORTED_FORMAT', `Unsupported format: binary data of an unrecognised type${declared}`);
  }

  // Text: the text formats claim it by rank (HTML, CSV); what none claims is plain text.
  const heads = new Map<number, string>();
  const text: TextEvidence = {
    ...evidence,
    genericType: fromType === undefined || fromType === 'text',
    namesOtherText: (format) =>
      fromType !== undefined ? fromType !== 'text' && fromType !== format && TEXT_FORMATS.has(fromType) : fromName !== undefined && fromName !== format && TEXT_FORMATS.has(fromName),
    head: (bytes = 2048) => heads.get(bytes) ?? heads.set(bytes, sniffHead(b, bom, bytes)).get(bytes)!,
    complete: (bytes) => b.length <= bytes,
  };
  for (const sniff of TEXT_SNIFFS) {
    const claim = sniff.claim(text);
    if (claim) return result(claim.format, claim.by);
  }
  return result('text', fromType === 'text' ? 'content-type' : fromName === 'text' ? 'extension' : 'sniff');
}
