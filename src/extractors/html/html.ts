/**
 * HTML -> Markdown. Decoding follows the browser's order (BOM, HTTP charset, <meta> charset, then
 * sniffing with a cp1252 fallback). jsdom parses without running scripts or loading anything;
 * Readability picks the main content, and when it fails or keeps too little of the page we fall
 * back to the whole body. Links are collected over the whole page, resolved to absolute URLs.
 */
import { JSDOM, VirtualConsole } from 'jsdom';
import { Readability } from '@mozilla/readability';
import { toolError } from '../../errors.ts';
import type { ExtractInput, ExtractedTable, ExtractedUrl, ProcessedDocument } from '../shared/types.ts';
import { decodeText } from '../shared/decode-text.ts';
import { resolveHref, sectionsByHeadings, walkToMarkdown } from '../shared/html-markdown.ts';
import { toPipeTable } from '../shared/markdown-table.ts';
import { boundHtml } from './html-bounds.ts';
import { stripScriptsAndStyles } from './html-scan.ts';
import { htmlToPlainText } from './html-text.ts';
import {
  HTML_DEPTH_PER_ELEMENT,
  HTML_MAX_LINKS,
  HTML_TAGS_PER_ELEMENT,
  READABILITY_MAX_CHILDREN,
  READABILITY_MAX_DEPTH,
  READABILITY_MAX_DEPTH_SUM,
  READABILITY_MAX_ELEMENTS,
  resolveLimits,
} from '../shared/limits.ts';

export interface HtmlOptions {
  /** URL the page came from: relative links resolve against it (and against <base href>). */
  baseUrl?: string;
}

const TABLE_CONTENT_MAX = 5000;
const MAX_IMAGES = 1000;
/** Readability's article must keep at least this share of the body text, else we use the body. */
const MIN_ARTICLE_SHARE = 0.2;
const MIN_ARTICLE_CHARS = 200;

/** Largest page we build a DOM for: jsdom needs roughly 50-100 bytes of heap per source byte. */
const MAX_HTML_CHARS = 20 * 1024 * 1024;

const LATIN1_ALIASES = /^(iso-?8859-1|latin-?1|us-ascii|ascii|l1|cp819|ibm819)$/i;

/** Charset named by a <meta> tag in the first 4 KB, as a browser's prescan would find it. */
export function metaCharset(bytes: Buffer): string | undefined {
  const head = bytes.subarray(0, 4096).toString('latin1');
  const m =
    /<meta[^>]+charset\s*=\s*["']?\s*([a-z0-9_.:-]+)/i.exec(head) ??
    /<meta[^>]+content\s*=\s*["'][^"']*charset\s*=\s*([a-z0-9_.:-]+)/i.exec(head);
  return m?.[1];
}

/** Decode HTML bytes: BOM > Content-Type charset > <meta> charset > UTF-8 validity > cp1252. */
export function decodeHtml(bytes: Buffer, contentType?: string): { text: string; encoding: string } {
  const hasHttpCharset = !!contentType && /charset\s*=/i.test(contentType);
  let declared = hasHttpCharset ? contentType : undefined;
  if (!declared) {
    let meta = metaCharset(bytes);
    // Browsers read Latin-1 and ASCII labels as windows-1252; UTF-16 labels in an ASCII-compatible
    // prescan are wrong by construction and ignored.
    if (meta && LATIN1_ALIASES.test(meta)) meta = 'windows-1252';
    if (meta && /^utf-?16/i.test(meta)) meta = undefined;
    if (meta) declared = `text/html; charset=${meta}`;
  }
  return decodeText(bytes, { contentType: declared });
}

function parseDom(html: string): JSDOM {
  try {
    // A silent console: jsdom would otherwise print parse errors, and stdout belongs to MCP stdio.
    return new JSDOM(html, { virtualConsole: new VirtualConsole() });
  } catch (err) {
    throw toolError('PROCESSING_ERROR', `Could not parse the HTML: ${(err as Error).message}`, err);
  }
}

function collapse(s: string | null | undefined): string {
  return (s ?? '').replace(/\s+/g, ' ').trim();
}

/**
 * Base for relative links: <base href> (resolved against the page URL), else the page URL, else
 * the page's own canonical/og:url (saved pages and uploads keep working links).
 */
function baseFor(doc: Document, baseUrl?: string): string | undefined {
  const absolute = (href: string | null | undefined, against?: string): string | undefined => {
    if (!href) return undefined;
    try {
      const u = new URL(href.trim(), against);
      return u.protocol === 'http:' || u.protocol === 'https:' ? u.href : undefined;
    } catch {
      return undefined;
    }
  };
  const page =
    absolute(baseUrl) ??
    absolute(doc.querySelector('link[rel~="canonical" i][href]')?.getAttribute('href')) ??
    absolute(doc.querySelector('meta[property="og:url" i][content]')?.getAttribute('content'));
  return absolute(doc.querySelector('base[href]')?.getAttribute('href'), page) ?? page;
}

/** Readability's byline guess, unless it is clearly a block of page furniture. */
function plausibleByline(raw: string | null | undefined): string | undefined {
  const b = collapse(raw);
  if (!b || b.length > 60 || b.split(' ').length > 8 || /^[a-z]+:\/\//i.test(b)) return undefined;
  return b;
}

function inNavigation(el: Element): boolean {
  return !!el.closest('nav, header, footer, [role="navigation"]');
}

export async function extractHtml(input: ExtractInput, opts: HtmlOptions = {}): Promise<ProcessedDocument> {
  const { bytes, signal } = input;
  signal.throwIfAborted();
  const decoded = decodeHtml(bytes, input.contentType);

  // Script and style bodies are dropped before parsing: they are never content, and jsdom would
  // otherwise parse every stylesheet.
  const stripped = stripScriptsAndStyles(decoded.text);
  if (stripped.length > MAX_HTML_CHARS) {
    throw toolError('PAYLOAD_TOO_LARGE', `HTML page too large to parse: ${stripped.length} characters (limit ${MAX_HTML_CHARS})`);
  }
  const limits = resolveLimits(input.limits);
  const { html, shape } = boundHtml(stripped);
  signal.throwIfAborted();
  const max = limits.htmlMaxElements;
  const overBudget =
    shape.elements > max
      ? `The page has about ${shape.elements} elements, more than HTML_MAX_ELEMENTS (${max})`
      : shape.tags > max * HTML_TAGS_PER_ELEMENT
        ? `The page has ${shape.tags} tags, more than ${HTML_TAGS_PER_ELEMENT} per element of HTML_MAX_ELEMENTS (${max})`
        : shape.depthSum > max * HTML_DEPTH_PER_ELEMENT
          ? `The page nests its ${shape.elements} elements ${Math.round(shape.depthSum / Math.max(1, shape.elements))} deep on average, past the DOM budget of HTML_MAX_ELEMENTS (${max}) x ${HTML_DEPTH_PER_ELEMENT} levels`
          : '';
  if (overBudget) return plainTextDocument(html, decoded.encoding, overBudget, opts.baseUrl);
  const bounding: Record<string, unknown> = {};
  if (shape.flattened > 0) bounding.flattened_elements = shape.flattened;
  if (shape.formattingDropped > 0) bounding.dropped_formatting_elements = shape.formattingDropped;
  let dom = parseDom(html);
  try {
    const doc = dom.window.document;
    for (const el of doc.querySelectorAll('script, style, noscript, template')) el.remove();
    const base = baseFor(doc, opts.baseUrl);

    const urls: ExtractedUrl[] = [];
    const seen = new Set<string>();
    for (const a of doc.querySelectorAll('a[href], area[href]')) {
      const url = resolveHref(a.getAttribute('href'), base);
      if (!url || seen.has(url)) continue;
      seen.add(url);
      // Past the cap only the count goes on (no context, no navigation lookup).
      if (urls.length >= HTML_MAX_LINKS) continue;
      urls.push({
        url,
        type: inNavigation(a) ? 'navigation' : 'general',
        context: collapse(a.textContent).slice(0, 200) || collapse(a.getAttribute('title')).slice(0, 200),
      });
    }
    const images: Array<Record<string, unknown>> = [];
    for (const img of doc.querySelectorAll('img')) {
      if (images.length >= MAX_IMAGES) break;
      const src = resolveHref(img.getAttribute('src'), base) ?? undefined;
      images.push({ src, alt_text: collapse(img.getAttribute('alt')) || undefined });
    }

    const pageTitle = collapse(doc.title);
    const lang = doc.documentElement.getAttribute('lang') ?? undefined;
    const metaAuthor = collapse(
      doc.querySelector('meta[name="author" i], meta[property="article:author" i]')?.getAttribute('content'),
    ).slice(0, 200);
    const description = doc.querySelector('meta[name="description" i]')?.getAttribute('content') ?? undefined;
    const bodyTextLength = collapse(doc.body?.textContent).length;
    signal.throwIfAborted();

    // Readability rewrites the document it reads; we let it (cheaper than a clone) and parse again
    // only in the rare case that we fall back to the body.
    let article: ReturnType<Readability<Node>['parse']> = null;
    let readabilityRan = false;
    if (
      bodyTextLength > 0 &&
      shape.maxChildren <= READABILITY_MAX_CHILDREN &&
      shape.maxDepth <= READABILITY_MAX_DEPTH &&
      shape.depthSum <= READABILITY_MAX_DEPTH_SUM &&
      doc.getElementsByTagName('*').length <= READABILITY_MAX_ELEMENTS
    ) {
      readabilityRan = true;
      try {
        article = new Readability<Node>(doc, { serializer: (n) => n, charThreshold: 300 }).parse();
      } catch {
        article = null;
      }
    }
    signal.throwIfAborted();

    const articleLength = collapse(article?.textContent).length;
    const useArticle =
      !!article?.content &&
      articleLength >= Math.min(MIN_ARTICLE_CHARS, bodyTextLength) &&
      articleLength >= MIN_ARTICLE_SHARE * bodyTextLength;
    let root: Element | null;
    if (useArticle) {
      root = article!.content as Element;
    } else if (!readabilityRan) {
      // Nothing rewrote the document: its body is what a fresh parse would give.
      root = doc.body;
    } else {
      dom.window.close();
      dom = parseDom(html);
      const fresh = dom.window.document;
      for (const el of fresh.querySelectorAll('noscript, template')) el.remove();
      root = fresh.body;
    }
    const walked = root ? walkToMarkdown(root, { baseUrl: base }) : { markdown: '', tables: [], headings: 0 };

    const title = collapse(article?.title) || pageTitle;
    let content = walked.markdown;
    // Readability lifts the title out of the article; put it back as the top heading.
    if (title && !content.slice(0, 500).includes(title)) content = content ? `# ${title}\n\n${content}` : `# ${title}`;

    const tables: ExtractedTable[] = walked.tables.map((t) => ({
      content: toPipeTable(t.rows, { maxChars: TABLE_CONTENT_MAX }),
      table_type: 'html',
      location: `table:${t.index}`,
      metadata: { rows: t.rows.length, columns: t.rows[0]?.length ?? 0, has_header: true },
      headers: t.rows[0],
      rows: t.rows.slice(1),
    }));

    const metadata: Record<string, unknown> = {
      format: 'html',
      encoding: decoded.encoding,
      extraction_method: useArticle ? 'readability' : 'body',
      table_count: tables.length,
      image_count: images.length,
      link_count: urls.length,
      ...(seen.size > urls.length ? { link_total: seen.size, links_truncated: true } : {}),
      ...bounding,
    };
    if (title) metadata.title = title;
    const byline = plausibleByline(article?.byline) ?? plausibleByline(metaAuthor);
    if (byline) {
      metadata.byline = byline;
      metadata.author = byline;
    }
    if (lang || article?.lang) metadata.lang = lang ?? article?.lang;
    if (article?.siteName) metadata.site_name = collapse(article.siteName);
    if (article?.publishedTime) metadata.published_time = article.publishedTime;
    const excerpt = collapse(article?.excerpt) || collapse(description);
    if (excerpt) metadata.description = excerpt.slice(0, 500);

    return {
      kind: 'html',
      content,
      metadata,
      tables,
      images,
      urls,
      pages: sectionsByHeadings(content, 2),
    };
  } finally {
    dom.window.close();
  }
}

/** A page past HTML_MAX_ELEMENTS: its text from a linear scan, flagged, with no DOM built. */
function plainTextDocument(html: string, encoding: string, reason: string, baseUrl?: string): ProcessedDocument {
  const plain = htmlToPlainText(html, { maxLinks: HTML_MAX_LINKS, ...(baseUrl ? { baseUrl } : {}) });
  const title = plain.title;
  let content = plain.content;
  if (title && !content.slice(0, 500).includes(title)) content = content ? `# ${title}\n\n${content}` : `# ${title}`;
  const metadata: Record<string, unknown> = {
    format: 'html',
    encoding,
    extraction_method: 'plain_text',
    table_count: 0,
    image_count: 0,
    link_count: plain.urls.length,
    ...(plain.linkTotal > plain.urls.length ? { link_total: plain.linkTotal, links_truncated: true } : {}),
    truncated: true,
    notes: [`${reason}: it was read as plain text, without tables, images or the main-content selection.`],
  };
  if (title) metadata.title = title;
  return { kind: 'html', content, metadata, tables: [], images: [], urls: plain.urls, pages: sectionsByHeadings(content, 2) };
}
