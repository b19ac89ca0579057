/**
 * The URL extractor run over every format's content: http(s) and www. URLs with 100 characters of
 * context either side, the page/slide/sheet they sit on, and a coarse type. Merged with the
 * hyperlinks the format extractors found (DOCX/PPTX relationships, HTML anchors), de-duplicated.
 */
import type { ExtractedUrl, PageSpan, ProcessedDocument } from './types.ts';
import { URL_MAX_CHARS } from './limits.ts';

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
  let end = raw.length;
  // Bracket counts are taken once and updated as closers are cut (a recount per cut character
  // is quadratic on a URL followed by a long run of `)`).
  let counted = false;
  let parenOpen = 0;
  let parenClose = 0;
  let squareOpen = 0;
  let squareClose = 0;
  while (end > 0) {
    const last = raw[end - 1];
    if ('.,;:!?*\'"'.includes(last)) {
      end--;
      continue;
    }
    if (last !== ')' && last !== ']') break;
    if (!counted) {
      for (let i = 0; i < end; i++) {
        const c = raw[i];
        if (c === '(') parenOpen++;
        else if (c === ')') parenClose++;
        else if (c === '[') squareOpen++;
        else if (c === ']') squareClose++;
      }
      counted = true;
    }
    if (last === ')' && parenClose > parenOpen) parenClose--;
    else if (last === ']' && squareClose > squareOpen) squareClose--;
    else break;
    end--;
  }
  return end === raw.length ? raw : raw.slice(0, end);
}

function parseLoose(url: string): URL | null {
  const full = /^www\./i.test(url) ? `http://${url}` : url;
  if (!URL.canParse(full)) return null;
  try {
    return new URL(full);
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

/** How many distinct URLs a document holds, when urls[] keeps only the first ones. */
export interface UrlStats {
  total: number;
  truncated: boolean;
}

/**
 * URLs found in text, in order of first appearance, de-duplicated, at most `limit`. With `seen`
 * the scan goes on past the limit and collects the keys of every distinct URL (for the count).
 */
export function findUrls(text: string, pages: readonly PageSpan[] = [], limit = MAX_URLS, keys?: Set<string>): ExtractedUrl[] {
  const out: ExtractedUrl[] = [];
  const counting = keys !== undefined;
  const seen = keys ?? new Set<string>();
  // Spans are usually sorted; sort a copy once so the binary search holds regardless.
  const spans = [...pages].sort((a, b) => a.start - b.start);
  for (const m of text.matchAll(URL_RE)) {
    if (out.length >= limit && !counting) break;
    // A run of tens of kilobytes without a space is not a link anyone follows.
    if (m[0].length > URL_MAX_CHARS) continue;
    const url = trimUrl(m[0]);
    if (url.length < 8 || !parseLoose(url)) continue;
    const key = urlKey(url);
    if (seen.has(key)) continue;
    seen.add(key);
    if (out.length >= limit) continue;
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
export function extractUrls(
  doc: Pick<ProcessedDocument, 'content' | 'pages' | 'urls'>,
  limit = MAX_URLS,
  stats?: UrlStats,
): ExtractedUrl[] {
  const textKeys = new Set<string>();
  const found = stats ? findUrls(doc.content, doc.pages, limit, textKeys) : findUrls(doc.content, doc.pages, limit);
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
  if (stats) {
    const all = new Set(textKeys);
    for (const link of doc.urls ?? []) if (link?.url && /^(https?:\/\/|www\.)/i.test(link.url)) all.add(urlKey(link.url));
    stats.total = all.size;
    stats.truncated = all.size > out.length;
  }
  return out;
}
