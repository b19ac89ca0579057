/**
 * The supported formats as clients see them, generated from the registry (each tool's `formats`),
 * so a format shows up exactly when a registered tool reads it. Extensions and media types come
 * from the format table (src/documents/formats.ts) that detection uses: every name the server
 * accepts is listed, and nothing else.
 */
import { DOCUMENT_KINDS, kindFormats, type KindFormats } from '../documents/formats.ts';
import type { AnyTool } from './define-tool.ts';

export type FormatInfo = KindFormats;

export interface SupportedFormat extends FormatInfo {
  /** Registered tools that read this format. */
  tools: string[];
}

/** The formats read by at least one registered tool, in the format table's kind order. */
export function supportedFormats(tools: readonly AnyTool[]): SupportedFormat[] {
  const out: SupportedFormat[] = [];
  for (const kind of DOCUMENT_KINDS) {
    const readers = tools.filter((t) => t.formats?.includes(kind)).map((t) => t.name);
    if (readers.length > 0) out.push({ ...kindFormats(kind), tools: readers });
  }
  return out;
}
