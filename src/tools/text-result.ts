/**
 * The shared shape of extract_pdf_text, extract_docx_text and extract_pptx_text: one kind of
 * document in, a page of its text out (offset, max_chars, next_offset), a wrong kind refused with
 * UNSUPPORTED_FORMAT.
 */
import type { Static, TObject } from 'typebox';
import type { ToolContext } from './define-tool.ts';
import type { DocumentKind, ProcessedDocument } from '../extractors/shared/types.ts';
import type { TextResultFields } from './schemas/documents.ts';
import { contentBudget, pageText, sourceFrom } from './tool-output.ts';
import { ocrRequestOf } from './schemas/documents.ts';

export type TextResult = Static<TObject<typeof TextResultFields>>;

export async function extractTextResult(
  input: { document_url?: string; max_chars?: number; offset?: number; ocr?: 'auto' | 'always' | 'never'; ocr_languages?: string[] },
  ctx: ToolContext,
  kinds: readonly DocumentKind[],
): Promise<{ result: TextResult; doc: ProcessedDocument }> {
  const ocr = ocrRequestOf(input);
  const { doc, source } = await ctx.services.documents.load(sourceFrom(input.document_url, ctx), ctx, { expect: kinds, ...(ocr ? { ocr } : {}) });
  const text = pageText(doc.content, input.offset, contentBudget(input.max_chars));
  return {
    doc,
    result: {
      text: text.text,
      char_count: text.length,
      truncated: text.truncated,
      offset: text.offset,
      next_offset: text.next_offset,
      source,
      metadata: doc.metadata,
      detected_language: doc.detected_language ?? 'unknown',
      detected_language_name: doc.detected_language_name ?? 'Unknown',
    },
  };
}
