/**
 * The URL extractor run over every format's content: http(s) and www. URLs with 100 characters of
 * context either side, the page/slide/sheet they sit on, and a coarse type. Merged with the
 * hyperlinks the format extractors found (DOCX/PPTX relationships, HTML anchors), de-duplicated.
 */
import type { ExtractedUrl, PageSpan, ProcessedDocument } from './types.ts';

export const URL_CONTEXT_CHARS = 100;
/** Keeps the urls[] of a link-heavy document bounded. */
export const MAX_URLS = 500;

// Stops at whitespace, quotes, angle brackets and characters that never appear unescaped in URLs.
const URL_RE = /\b(?:https?:\/\/|www\.)[^\s<>"'`|\\^{}\u00a0\u2000-\u200b\u2028\u2029\u3000]+/gi;

const IMAGE_EXT = /\.(png|jpe?g|gif|svg|webp|bmp|ico|tiff?|avif|heic)$/i;
const NAV_EXT = /\.(html?|xhtml|php\d?|aspx?|jsp|cfm|shtml)$/i;
const API_PATH = /(^|\/)(api|apis|graphql|rest|rpc|oauth2?|swagger|openapi)(\/|$|\.)|\/v\d+(\.\d+)?(\/|$)|\.(json|xml|ya?ml|wsdl)$/i;

/** Trims punctuation that ends the sentence rather than the URL, keeping balanced brackets. */
export function trimUrl(raw: string): string {
  let url = raw;
  for (;;) {
    const last = url.at(-1);
    if (last === undefined) return url;
    if ('.,;:!?*\'"'.includes(last)) {
      url = url.slice(0, -1);
      continue;
    }
    const pairs: Record<string, string> = { ')': '(', ']': '[' };
    const open = pairs[last];
    if (open !== undefined) {
      const opens = url.split(open).length - 1;
      const closes = url.split(last).length - 1;
      if (closes > opens) {
        url = url.slice(0, -1);
        continue;
      }
    }
    return url;
  }
}

function parseLoose(url: string): URL | null {
  try {
    return new URL(/^www\./i.test(url) ? `http://${url}` : url);
  } catch {
    return null;
  }
}

export function classifyUrl(url: string): ExtractedUrl['type'] {
  const u = parseLoose(url);
  if (!u) return 'general';
  const path = u.pathname;
  if (IMAGE_EXT.test(path)) return 'image';
  if (/^api\./i.test(u.hostname) || API_PATH.test(path)) return 'api_endpoint';
  const last = path.split('/').pop() ?? '';
  if (path === '' || path === '/' || NAV_EXT.test(path) || !last.includes('.')) return 'navigation';
  return 'general';
}

/** Identity for de-duplication: no scheme, lower-case host, no trailing slash. */
export function urlKey(url: string): string {
  const bare = url.replace(/^https?:\/\//i, '');
  const cut = bare.search(/[/?#]/);
  const host = (cut < 0 ? bare : bare.slice(0, cut)).toLowerCase();
  const rest = cut < 0 ? '' : bare.slice(cut);
  return (host + rest).replace(/\/+$/, '');
}

/** "page 3", "slide 2", "sheet Sales" for a char offset, from the document's page spans. */
export function locationAt(pages: readonly PageSpan[], offset: number): string | undefined {
  let lo = 0;
  let hi = pages.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const p = pages[mid]!;
    if (offset < p.start) hi = mid - 1;
    else if (offset >= p.end) lo = mid + 1;
    else {
      if (p.unit === 'sheet') return `sheet ${p.label ?? p.number}`;
      if (p.unit === 'section') return p.label ? `section ${p.label}` : undefined;
      return `${p.unit} ${p.number}`;
    }
  }
  return undefined;
}

const squash = (s: string) => s.replace(/\s+/g, ' ');

/** URLs found in text, in order of first appearance, de-duplicated, at most `limit`. */
export function findUrls(text: string, pages: readonly PageSpan[] = [], limit = MAX_URLS): ExtractedUrl[] {
  const out: ExtractedUrl[] = [];
  const seen = new Set<string>();
  // Spans are usually sorted; sort a copy once so the binary search holds regardless.
  const spans = [...pages].sort((a, b) => a.start - b.start);
  for (const m of text.matchAll(URL_RE)) {
    if (out.length >= limit) break;
    const url = trimUrl(m[0]);
    if (url.length < 8 || !parseLoose(url)) continue;
    const key = urlKey(url);
    if (seen.has(key)) continue;
    seen.add(key);
    const start = m.index;
    const end = start + url.length;
    const location = locationAt(spans, start);
    out.push({
      url,
      type: classifyUrl(url),
      context: squash(text.slice(Math.max(0, start - URL_CONTEXT_CHARS), Math.min(text.length, end + URL_CONTEXT_CHARS))).trim(),
      ...(location ? { location } : {}),
    });
  }
  return out;
}

/**
 * The document's final urls[]: hyperlinks from the format extractor first (they carry targets
 * that the visible text may not show), then URLs found in the content; one entry per URL.
 */
export function extractUrls(doc: Pick<ProcessedDocument, 'content' | 'pages' | 'urls'>, limit = MAX_URLS): ExtractedUrl[] {
  const found = findUrls(doc.content, doc.pages, limit);
  const byKey = new Map(found.map((u) => [urlKey(u.url), u]));
  const out: ExtractedUrl[] = [];
  const seen = new Set<string>();
  for (const link of doc.urls ?? []) {
    if (out.length >= limit) break;
    if (!link?.url || !/^(https?:\/\/|www\.)/i.test(link.url)) continue;
    const key = urlKey(link.url);
    if (seen.has(key)) continue;
    seen.add(key);
    const inText = byKey.get(key);
    out.push({
      url: link.url,
      type: link.type ?? classifyUrl(link.url),
      context: link.context || inText?.context || '',
      ...((link.location ?? inText?.location) ? { location: link.location ?? inText!.location } : {}),
    });
  }
  for (const u of found) {
    if (out.length >= limit) break;
    const key = urlKey(u.url);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(u);
  }
  return out;
}
