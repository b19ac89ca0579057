/**
 * What every format gets after its extractor: the URL list, the language and source metadata.
 * Shared by the inline path and the extraction child, so both give the same document. URL
 * extraction and language detection scale with the content, which is why the child runs them.
 */
import type { ProcessedDocument } from '../extractors/shared/types.ts';
import { extractUrls, MAX_URLS, type UrlStats } from '../extractors/shared/urls.ts';
import type { FinishInfo } from './protocol.ts';

/** Characters of content the language detector looks at (enough for a stable answer). */
export const LANGUAGE_SAMPLE_CHARS = 20_000;

export type DetectLanguage = (text: string) => { language_code: string; language_name: string; confidence?: number };

export async function defaultDetectLanguage(): Promise<DetectLanguage> {
  return (await import('../language/detect.ts')).detectLanguage;
}

export function completeDocument(doc: ProcessedDocument, info: FinishInfo, detect: DetectLanguage): ProcessedDocument {
  const content = typeof doc.content === 'string' ? doc.content : '';
  const urlStats: UrlStats = { total: 0, truncated: false };
  const urls = extractUrls({ content, pages: doc.pages ?? [], urls: doc.urls ?? [] }, MAX_URLS, urlStats);
  const out: ProcessedDocument = {
    ...doc,
    kind: info.kind,
    content,
    tables: doc.tables ?? [],
    images: doc.images ?? [],
    pages: doc.pages ?? [],
    urls,
    metadata: {
      ...doc.metadata,
      document_type: info.kind,
      format: info.format,
      mime_type: info.mime,
      detected_by: info.by,
      file_size: info.fileSize,
      content_sha256: info.sha256,
      ...(info.filename ? { filename: info.filename } : {}),
      ...(info.contentType ? { content_type: info.contentType } : {}),
      // urls[] keeps the first MAX_URLS; say so, with the count found, rather than cut silently.
      ...(urlStats.truncated ? { url_total: urlStats.total, urls_truncated: true } : {}),
    },
  };
  applyLanguage(out, detect);
  return out;
}

export function applyLanguage(doc: ProcessedDocument, detect: DetectLanguage): void {
  try {
    const lang = detect(doc.content.slice(0, LANGUAGE_SAMPLE_CHARS));
    doc.detected_language = lang.language_code;
    doc.detected_language_name = lang.language_name;
  } catch {
    // Language is a nicety; a detector failure must not lose the document.
    doc.detected_language = doc.detected_language ?? 'unknown';
    doc.detected_language_name = doc.detected_language_name ?? 'Unknown';
  }
}
