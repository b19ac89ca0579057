/**
 * DOCX -> Markdown. mammoth turns the document into semantic HTML (headings, lists, tables with
 * spans, footnotes); our own walk turns that into Markdown and collects tables, links and images.
 * The zip guard runs first because mammoth unzips on its own without limits.
 * Two things mammoth leaves out are restored around it: Word's automatic numbering ("1.2 Scope",
 * "a)") and equations. document.xml is annotated before mammoth reads it (docx-annotate.ts) and
 * the number labels are applied to mammoth's HTML afterwards (docx-number-labels.ts).
 */
import mammoth from 'mammoth';
import { parseHTML } from 'linkedom';
import { toolError } from '../../errors.ts';
import type { ExtractInput, ExtractedTable, ExtractedUrl, PageSpan, ProcessedDocument } from '../shared/types.ts';
import { assertSafeZip, readZipEntries, type ZipEntryInfo } from '../shared/zip.ts';
import { rewriteZip } from './zip-rewrite.ts';
import { annotateDocumentXml, bulletLabelledLevels, type AnnotatedDocument } from './docx-annotate.ts';
import { readNumberingDefinitions } from './docx-numbering.ts';
import { applyNumberLabels } from './docx-number-labels.ts';
import { readAppProps, readCoreProps } from '../shared/office-props.ts';
import { sectionsByHeadings, walkToMarkdown } from '../shared/html-markdown.ts';
import { PAGE_MARK, pageSpans, pagesKnown, takePageMarks } from './docx-pages.ts';
import { toPipeTable } from '../shared/markdown-table.ts';

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

const ANNOTATED_PARTS = new Set(['word/document.xml', 'word/numbering.xml', 'word/styles.xml']);
/**
 * Largest document.xml we annotate. Beyond it the text copies annotation needs (string plus
 * rebuilt archive) would add hundreds of MB on top of mammoth's own tree; such a document is
 * converted without numbering labels and equations.
 */
const ANNOTATE_MAX_BYTES = 64 * 1024 * 1024;

/**
 * The bytes mammoth should read: the original, or a copy whose document.xml carries number
 * markers and equations as text. Annotation is an enhancement: if it fails on an odd document the
 * original is converted as before (limits still apply).
 */
function annotate(bytes: Buffer, entries: ZipEntryInfo[]): { bytes: Buffer; annotation: AnnotatedDocument | null } {
  try {
    const main = entries.find((e) => e.name === 'word/document.xml');
    if (!main || main.uncompressedSize > ANNOTATE_MAX_BYTES) return { bytes, annotation: null };
    const parts = readZipEntries(bytes, (name) => ANNOTATED_PARTS.has(name));
    const body = parts.get('word/document.xml');
    // UTF-16 parts (legal, rare) are left to mammoth as they are.
    if (!body || (body[0] === 0xff && body[1] === 0xfe) || (body[0] === 0xfe && body[1] === 0xff)) {
      return { bytes, annotation: null };
    }
    const xml = body.toString('utf8');
    const defs = parts.has('word/numbering.xml')
      ? readNumberingDefinitions(parts.get('word/numbering.xml'), parts.get('word/styles.xml'))
      : null;
    const annotation = annotateDocumentXml(xml, defs);
    if (!annotation.changed) return { bytes, annotation };
    const replace = new Map([['word/document.xml', Buffer.from(annotation.xml, 'utf8')]]);
    const numberingPart = parts.get('word/numbering.xml');
    if (defs && numberingPart && annotation.labels.length > 0) {
      const numberingXml = numberingPart.toString('utf8');
      const bulleted = bulletLabelledLevels(numberingXml, defs);
      if (bulleted !== numberingXml) replace.set('word/numbering.xml', Buffer.from(bulleted, 'utf8'));
    }
    return { bytes: rewriteZip(bytes, entries, replace), annotation };
  } catch (err) {
    if ((err as { code?: string }).code === 'PAYLOAD_TOO_LARGE') throw err;
    return { bytes, annotation: null };
  }
}

export async function extractDocx(input: ExtractInput): Promise<ProcessedDocument> {
  const { bytes, signal } = input;
  signal.throwIfAborted();
  const entries = assertSafeZip(bytes);
  if (!entries.some((e) => e.name === 'word/document.xml')) {
    throw toolError('PROCESSING_ERROR', 'Not a Word document: word/document.xml is missing');
  }

  let { bytes: annotatedBytes, annotation } = annotate(bytes, entries);
  signal.throwIfAborted();

  let imageTypes: string[] = [];
  const convert = (buffer: Buffer) => {
    imageTypes = [];
    return mammoth.convertToHtml(
      { buffer },
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
  };
  let html: string;
  let warnings: number;
  try {
    let result: Awaited<ReturnType<typeof convert>>;
    try {
      result = await convert(annotatedBytes);
    } catch (err) {
      // Should the annotated copy trip mammoth up, the document as written still converts.
      if (annotatedBytes === bytes) throw err;
      annotatedBytes = bytes;
      annotation = null;
      result = await convert(bytes);
    }
    html = annotation?.labels.length ? applyNumberLabels(result.value, annotation.labels) : result.value;
    warnings = result.messages.length;
  } catch (err) {
    throw toolError('PROCESSING_ERROR', `Could not read the Word document: ${(err as Error).message}`, err);
  }
  signal.throwIfAborted();

  // mammoth's HTML is well-formed and script-free, so a light DOM is enough: jsdom's parse was
  // most of DOCX extraction time (scripts/bench/extraction.bench.ts).
  const { document: doc } = parseHTML(`<!DOCTYPE html><html><body>${html}</body></html>`);
  const notes = doc.querySelectorAll('li[id^="footnote-"], li[id^="endnote-"]');
  // Label the notes list that mammoth appends so it reads as notes, not as a body list.
  const notesList = notes[0]?.parentElement;
  if (notesList) {
    const label = doc.createElement('p');
    label.textContent = 'Notes:';
    notesList.parentElement?.insertBefore(label, notesList);
  }
  const walked = walkToMarkdown(doc.body, { collectLinks: true, oneRowTables: true });
  const { text: content, breaks } = takePageMarks(walked.markdown);
  const unmark = (s: string): string => (s.includes(PAGE_MARK) ? s.split(PAGE_MARK).join('').trim() : s);
  for (const t of walked.tables) t.rows = t.rows.map((r) => r.map(unmark));
  for (const l of walked.links) l.text = unmark(l.text);
  for (const im of walked.images) im.alt = unmark(im.alt);

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

  const app = readAppProps(bytes, entries);
  const byBreaks = pageSpans(content.length, breaks);
  const known = pagesKnown(annotation?.pageBreaks ?? null, app.page_count, byBreaks.at(-1)?.number ?? 1);
  // Unknown pages: heading sections still locate URLs ("section Scope"); chunks get no page from them.
  const pages: PageSpan[] = known ? byBreaks : sectionsByHeadings(content, 2);
  const core = readCoreProps(bytes, entries);
  const metadata: Record<string, unknown> = {
    format: 'docx',
    ...core,
    ...app,
    pages_known: known,
    heading_count: walked.headings,
    table_count: tables.length,
    image_count: imageTypes.length,
    footnote_count: doc.querySelectorAll('li[id^="footnote-"]').length,
    endnote_count: doc.querySelectorAll('li[id^="endnote-"]').length,
    link_count: urls.length,
    numbered_paragraph_count: annotation?.labels.length ?? 0,
    equation_count: annotation?.equations ?? 0,
    conversion_warnings: warnings,
  };
  return { kind: 'docx', content, metadata, tables, images, urls, pages };
}
