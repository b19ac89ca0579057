/**
 * The one table of document formats. Each format lives in its own folder (src/extractors/<id>/)
 * whose index.ts exports one descriptor (shared/descriptor.ts): magic bytes or text sniff, the
 * kinds it reads with their lazy extractor and chunking profile, and the extensions and media types
 * that name it. Detection (src/documents/detect-type.ts), dispatch (in the server and in
 * extraction children), chunking (src/retrieval/chunking.ts), messages and the advertised formats
 * (get_system_health, rag://supported-formats) are all derived from FORMAT_TABLE; adding a format
 * is a new folder and one line here.
 *
 * Where files go: code that one format uses lives in that format's folder; code used by two or
 * more formats, or by the server outside the extractors (types, limits, urls, table-pipeline),
 * lives in shared/. ocr/ holds the OCR engine that pdf and image share; it reads no format of its
 * own, so it has no descriptor.
 *
 * Cheap to import: descriptors hold only sniffing helpers and `import()`s of their extraction code.
 */
import { CSV_FORMAT } from './csv/index.ts';
import { DOCX_FORMAT } from './docx/index.ts';
import { HTML_FORMAT } from './html/index.ts';
import { IMAGE_FORMAT } from './image/index.ts';
import { PDF_FORMAT } from './pdf/index.ts';
import { PPTX_FORMAT } from './pptx/index.ts';
import { SPREADSHEET_FORMAT } from './spreadsheet/index.ts';
import { TEXT_FORMAT } from './text/index.ts';
import type { ChunkProfile } from './shared/chunk-profile.ts';
import type { Extractor, FormatDescriptor, FormatSpec, KindSpec } from './shared/descriptor.ts';
import type { DocumentKind } from './shared/types.ts';

/**
 * Every format, in the order the supported formats are listed and binary signatures are tried
 * (text sniffs go by their own rank).
 */
export const FORMAT_TABLE = [PDF_FORMAT, DOCX_FORMAT, PPTX_FORMAT, SPREADSHEET_FORMAT, CSV_FORMAT, IMAGE_FORMAT, HTML_FORMAT, TEXT_FORMAT] as const;

type Registered = (typeof FORMAT_TABLE)[number];
type KindsOf<D> = D extends FormatDescriptor<infer K, string> ? K : never;
type FormatsOf<D> = D extends FormatDescriptor<string, infer F> ? F : never;

/** Every name detection can give the bytes (pdf, png, jpeg, ..., empty). */
export type DetectedFormat = FormatsOf<Registered>;

// The kinds the folders declare (shared/types.ts DocumentKinds) are exactly the registered ones:
// a folder left out of the table, or a kind not declared, fails to compile here.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const kindsMatch: Same<KindsOf<Registered>, DocumentKind> = true;
void kindsMatch;

const descriptors: readonly FormatDescriptor[] = FORMAT_TABLE;

/** name -> value, refusing a name claimed twice (the table must be unambiguous). */
function merge<T>(what: string, parts: Array<Readonly<Record<string, T>>>): Record<string, T> {
  const out: Record<string, T> = {};
  for (const part of parts) {
    for (const [name, value] of Object.entries(part)) {
      if (name in out) throw new Error(`format table: ${what} "${name}" is registered twice`);
      out[name] = value;
    }
  }
  return out;
}

export const FORMATS = Object.freeze(merge('format', descriptors.map((d) => d.formats))) as Readonly<Record<DetectedFormat, FormatSpec<DocumentKind>>>;

/** Every kind, in table order. */
export const KINDS = Object.freeze(merge('kind', descriptors.map((d) => d.kinds))) as Readonly<Record<DocumentKind, KindSpec>>;

export const DOCUMENT_KINDS = Object.keys(KINDS) as DocumentKind[];

/** The extractor of each kind (each loads its code on first use). */
export const EXTRACTORS: Readonly<Record<DocumentKind, Extractor>> = Object.freeze(
  Object.fromEntries(DOCUMENT_KINDS.map((k) => [k, KINDS[k].extract])) as Record<DocumentKind, Extractor>,
);

/** The chunking profile of each kind. */
export const CHUNK_PROFILES: Readonly<Record<DocumentKind, ChunkProfile>> = Object.freeze(
  Object.fromEntries(DOCUMENT_KINDS.map((k) => [k, KINDS[k].chunking])) as Record<DocumentKind, ChunkProfile>,
);

/** The binary-signature checks, in table order. */
export const MAGIC = descriptors.flatMap((d) => (d.magic ? [d.magic] : [])) as Array<NonNullable<FormatDescriptor<DocumentKind, DetectedFormat>['magic']>>;

type TextSniff = NonNullable<FormatDescriptor<DocumentKind, DetectedFormat>['text']>;

/** The text claims, by rank. */
export const TEXT_SNIFFS: readonly TextSniff[] = descriptors
  .flatMap((d) => (d.text ? [d.text as TextSniff] : []))
  .sort((a, b) => a.rank - b.rank);

/** Formats that are text (they claim text bytes, or are the plain-text fallback). */
export const TEXT_FORMATS: ReadonlySet<string> = new Set(descriptors.filter((d) => d.text || d === TEXT_FORMAT).flatMap((d) => Object.keys(d.formats)));
