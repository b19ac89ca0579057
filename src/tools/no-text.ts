/**
 * A document with no text is PROCESSING_ERROR (422) from the tools that need its text, instead of
 * a success with nothing in it that reads like "no match":
 * - chunk_document and retrieve_chunks: any document that gives no chunk (an empty file,
 *   whitespace only, an image in which OCR finds nothing). retrieve_chunks over several
 *   documents fails only when none of them has any; an empty one among others adds no chunks.
 * - process_document: text and HTML documents with no text. A PDF, Office file or image without
 *   text still has pages, slides, sheets or image metadata to report, so it is answered.
 * CSV and spreadsheet tools say the same in their own words ("no rows"); the extract_* tools
 * report what they found, empty text included.
 */
import { toolError } from '../errors.ts';

export const NO_TEXT_MESSAGE = 'The document has no text (it is empty or whitespace only, or no text could be extracted)';

/** Document kinds whose only content is their text. */
const TEXT_ONLY_KINDS: ReadonlySet<string> = new Set(['text', 'html']);

function noText(): never {
  throw toolError('PROCESSING_ERROR', NO_TEXT_MESSAGE);
}

/** process_document: a text or HTML document without text (and without tables). */
export function assertHasText(kind: string, content: string, tableCount: number): void {
  if (TEXT_ONLY_KINDS.has(kind) && content.trim() === '' && tableCount === 0) noText();
}

/** chunk_document and retrieve_chunks: at least one chunk to return or search. */
export function assertHasChunks(chunkCount: number): void {
  if (chunkCount === 0) noText();
}
