/**
 * What a format folder exports (its index.ts): how its bytes are recognised, which kinds it reads
 * and how (a lazy import of the heavy code), how each kind is chunked, and the names (extensions,
 * media types) it answers to. src/extractors/registry.ts lists the descriptors; detection,
 * dispatch, chunking and the advertised formats are derived from that list.
 *
 * A descriptor module must stay cheap to import (the server and every extraction child load all of
 * them): it may import small sniffing helpers, never a parser library; extraction code is reached
 * only through `import()` inside `extract`.
 */
import type { OcrPool } from '../ocr/ocr-pool.ts';
import type { ChunkProfile } from './chunk-profile.ts';
import type { ExtractInput, ProcessedDocument } from './types.ts';

export interface ExtractorDeps {
  ocr: OcrPool;
}

export type Extractor = (input: ExtractInput, deps: ExtractorDeps) => Promise<ProcessedDocument> | ProcessedDocument;

/** One name detection can give the bytes (a PNG is a format of the image kind). */
export interface FormatSpec<K extends string = string> {
  /** The kind whose extractor reads it. */
  kind: K;
  /** For messages: "the file is a PNG image". */
  label: string;
  /** Canonical media type (reported as mime_type). */
  mime: string;
  /** Media types that name this format (lower case, without parameters); the canonical one first. */
  mediaTypes: readonly string[];
  /** File name extensions that name this format (lower case, without the dot). */
  extensions: readonly string[];
}

/** One document kind: what reads it, how it is chunked, how it is described. */
export interface KindSpec {
  /** For "expected ..." messages. */
  expected: string;
  /** For the advertised list of formats. */
  description: string;
  chunking: ChunkProfile;
  /** Loads the extraction code on first use (the heavy parsers cost nothing until a file of this kind arrives). */
  extract: Extractor;
}

/** What detection knows before any format claims the bytes. Format names are those of the registry. */
export interface Evidence {
  bytes: Buffer;
  /** The format named by the Content-Type, if any. */
  fromType?: string;
  /** The format named by the file name's extension, if any. */
  fromName?: string;
  /** fromType, else fromName. */
  hint?: string;
  /** The OOXML format of a readable zip ('docx', 'pptx', 'xlsx'; read once, shared by the OOXML formats), null otherwise. */
  ooxml(): string | null;
}

/** Evidence about bytes that are text (a byte-order mark, or no binary bytes). */
export interface TextEvidence extends Evidence {
  /** No declared type, or the generic plain-text one. */
  genericType: boolean;
  /** Whether the type (other than plain text) or, without a type, the file name explicitly names a text format other than `format`. */
  namesOtherText(format: string): boolean;
  /** The first `bytes` (default 2048) decoded just enough to sniff. */
  head(bytes?: number): string;
  /** Whether head(bytes) holds the whole input. */
  complete(bytes: number): boolean;
}

export interface TextClaim<F extends string> {
  format: F;
  by: 'content-type' | 'extension' | 'sniff';
}

export interface FormatDescriptor<K extends string = string, F extends string = string> {
  /** The folder's name. */
  id: string;
  kinds: Readonly<Record<K, KindSpec>>;
  formats: Readonly<Record<F, FormatSpec<K>>>;
  /** Binary signatures: the format when the bytes are this folder's. Tried in table order before any text sniff. */
  magic?: (e: Evidence) => F | undefined;
  /**
   * Text formats: claims text bytes from the declared type, the name or a sniff. Claims are tried
   * by ascending rank (HTML's markup sniff must come before CSV's declared names); unclaimed text
   * is plain text.
   */
  text?: { rank: number; claim: (e: TextEvidence) => TextClaim<F> | undefined };
}

/** Keeps the literal kind and format names, so the registry can derive its unions from the table. */
export const defineFormat = <const K extends string, const F extends string>(d: FormatDescriptor<K, F>): FormatDescriptor<K, F> => d;
