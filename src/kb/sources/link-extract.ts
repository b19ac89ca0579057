/**
 * The links a crawler follows in one HTML page, read with the project's linear HTML lexer
 * (src/extractors/html/html-scan.ts: no tree, quoted `>` and raw-text elements handled, so links
 * inside <script> or comments are not links): `<a href>` and `<area href>`, `<link rel=canonical>`,
 * `<base href>` for resolving, and the page's `<meta name="robots">` directives.
 *
 * nofollow is honoured: a link with rel="nofollow" is not followed and a page whose meta robots
 * says nofollow (or none) gives no links; a site owner who wrote it asked for exactly that.
 */
import { decodeEntities } from '../../extractors/html/html-text.ts';
import { scanHtml } from '../../extractors/html/html-scan.ts';
import { normalizeUrl } from './url-normalize.ts';

/** Links kept from one page; a page with more is cut (a crawl has page limits anyway). */
export const MAX_LINKS_PER_PAGE = 5_000;

export interface PageLinks {
  /** Normalized absolute URLs, first occurrence order, without duplicates. */
  links: string[];
  /** The page's canonical URL (normalized), when it names one. */
  canonical?: string;
  /** meta robots noindex: the page asks not to be indexed. */
  noindex: boolean;
  /** meta robots nofollow: `links` is empty because the page asked for it. */
  nofollow: boolean;
}

const ATTR_RE = /([^\s"'>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+)))?/g;

function attributes(src: string): Map<string, string> {
  const out = new Map<string, string>();
  ATTR_RE.lastIndex = 0;
  for (let m = ATTR_RE.exec(src); m; m = ATTR_RE.exec(src)) {
    const name = m[1].toLowerCase();
    if (!out.has(name)) out.set(name, decodeEntities(m[2] ?? m[3] ?? m[4] ?? ''));
  }
  return out;
}

const relHas = (rel: string | undefined, word: string): boolean => !!rel && rel.toLowerCase().split(/\s+/).includes(word);

export function extractLinks(html: string, pageUrl: string): PageLinks {
  let base = pageUrl;
  let baseSeen = false;
  let canonical: string | undefined;
  let noindex = false;
  let nofollow = false;
  const seen = new Set<string>();
  const links: string[] = [];
  scanHtml(html, {
    text() {},
    endTag() {},
    startTag(name, _start, nameEnd, end) {
      if (name !== 'a' && name !== 'area' && name !== 'link' && name !== 'base' && name !== 'meta') return;
      const attrs = attributes(html.slice(nameEnd, end - 1));
      if (name === 'base') {
        if (baseSeen) return;
        baseSeen = true;
        const href = attrs.get('href');
        if (href) {
          try {
            base = new URL(href.trim(), pageUrl).href;
          } catch {
            // An unparsable <base> is ignored, as browsers do.
          }
        }
        return;
      }
      if (name === 'meta') {
        if ((attrs.get('name') ?? '').toLowerCase() !== 'robots') return;
        const content = (attrs.get('content') ?? '').toLowerCase();
        if (/\b(noindex|none)\b/.test(content)) noindex = true;
        if (/\b(nofollow|none)\b/.test(content)) nofollow = true;
        return;
      }
      const href = attrs.get('href');
      if (!href) return;
      if (name === 'link') {
        if (canonical === undefined && relHas(attrs.get('rel'), 'canonical')) canonical = normalizeUrl(href, base) ?? undefined;
        return;
      }
      if (relHas(attrs.get('rel'), 'nofollow') || links.length >= MAX_LINKS_PER_PAGE) return;
      const url = normalizeUrl(href, base);
      if (url && !seen.has(url)) {
        seen.add(url);
        links.push(url);
      }
    },
  });
  return { links: nofollow ? [] : links, canonical, noindex, nofollow };
}
