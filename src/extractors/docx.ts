/**
 * DOCX -> Markdown. mammoth turns the document into semantic HTML (headings, lists, tables with
 * spans, footnotes); our own walk turns that into Markdown and collects tables, links and images.
 * The zip guard runs first because mammoth unzips on its own without limits.
 */
import mammoth from 'mammoth';
import { JSDOM } from 'jsdom';
import { toolError } from '../errors.ts';
import type { ExtractInput, ExtractedTable, ExtractedUrl, PageSpan, ProcessedDocument } from './types.ts';
import { assertSafeZip } from './zip.ts';
import { readAppProps, readCoreProps } from './office-props.ts';
import { sectionsByHeadings, walkToMarkdown } from './html-markdown.ts';
import { toPipeTable } from './markdown-table.ts';

/** Largest table rendering kept in tables[].content. */
const TABLE_CONTENT_MAX = 5000;

// Word's built-in title styles are not in mammoth's default map.
const STYLE_MAP = [
  "p[style-name='Title'] => h1:fresh",
  "p[style-name='Subtitle'] => h2:fresh",
  "p[style-name='heading 1'] => h1:fresh",
  "p[style-name='heading 2'] => h2:fresh",
  "p[style-name='heading 3'] => h3:fresh",
  "p[style-name='heading 4'] => h4:fresh",
  "p[style-name='heading 5'] => h5:fresh",
  "p[style-name='heading 6'] => h6:fresh",
];

export async function extractDocx(input: ExtractInput): Promise<ProcessedDocument> {
  const { bytes, signal } = input;
  signal.throwIfAborted();
  const entries = assertSafeZip(bytes);
  if (!entries.some((e) => e.name === 'word/document.xml')) {
    throw toolError('PROCESSING_ERROR', 'Not a Word document: word/document.xml is missing');
  }

  const imageTypes: string[] = [];
  let html: string;
  let warnings: number;
  try {
    const result = await mammoth.convertToHtml(
      { buffer: bytes },
      {
        styleMap: STYLE_MAP,
        externalFileAccess: false,
        // Count images without inlining them as base64: content is for retrieval, not display.
        convertImage: mammoth.images.imgElement(async (image) => {
          imageTypes.push(image.contentType);
          return { src: `image:${imageTypes.length}` };
        }),
      },
    );
    html = result.value;
    warnings = result.messages.length;
  } catch (err) {
    throw toolError('PROCESSING_ERROR', `Could not read the Word document: ${(err as Error).message}`, err);
  }
  signal.throwIfAborted();

  const dom = new JSDOM(`<!DOCTYPE html><html><body>${html}</body></html>`);
  try {
    const doc = dom.window.document;
    const notes = doc.querySelectorAll('li[id^="footnote-"], li[id^="endnote-"]');
    // Label the notes list that mammoth appends so it reads as notes, not as a body list.
    const notesList = notes[0]?.parentElement;
    if (notesList) {
      const label = doc.createElement('p');
      label.textContent = 'Notes:';
      notesList.parentElement?.insertBefore(label, notesList);
    }
    const walked = walkToMarkdown(doc.body, { collectLinks: true });
    const content = walked.markdown;

    const tables: ExtractedTable[] = walked.tables.map((t) => ({
      content: toPipeTable(t.rows, { maxChars: TABLE_CONTENT_MAX }),
      table_type: 'docx',
      location: `table:${t.index}`,
      metadata: { rows: t.rows.length, columns: t.rows[0]?.length ?? 0, has_header: true },
      headers: t.rows[0],
      rows: t.rows.slice(1),
    }));

    const urls: ExtractedUrl[] = [];
    const seen = new Set<string>();
    for (const l of walked.links) {
      if (seen.has(l.href)) continue;
      seen.add(l.href);
      urls.push({ url: l.href, type: 'general', context: l.text });
    }

    const images = imageTypes.map((contentType, i) => ({
      index: i + 1,
      content_type: contentType,
      alt_text: walked.images.find((im) => im.src === `image:${i + 1}`)?.alt || undefined,
    }));

    const pages: PageSpan[] = sectionsByHeadings(content, 2);
    const core = readCoreProps(bytes, entries);
    const metadata: Record<string, unknown> = {
      format: 'docx',
      ...core,
      ...readAppProps(bytes, entries),
      heading_count: walked.headings,
      table_count: tables.length,
      image_count: imageTypes.length,
      footnote_count: doc.querySelectorAll('li[id^="footnote-"]').length,
      endnote_count: doc.querySelectorAll('li[id^="endnote-"]').length,
      link_count: urls.length,
      conversion_warnings: warnings,
    };
    return { kind: 'docx', content, metadata, tables, images, urls, pages };
  } finally {
    dom.window.close();
  }
}
