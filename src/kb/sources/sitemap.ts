/**
 * sitemap.xml and sitemap index files (sitemaps.org protocol): the `<loc>` of each `<url>` or, in
 * an index, of each `<sitemap>`. Gzipped sitemaps (`.xml.gz`, or bytes starting with the gzip
 * magic) are inflated with a bound. No XML parser: the format is flat, and one linear regex over
 * `<loc>` elements (CDATA allowed, any namespace prefix) reads every real sitemap and cannot be
 * made to backtrack. Limits as the protocol sets them: 50,000 URLs and 50 MB a file.
 */
import zlib from 'node:zlib';
import { decodeXmlEntities } from '../../extractors/shared/xml.ts';

export const MAX_SITEMAP_BYTES = 50 * 1024 * 1024;
export const MAX_SITEMAP_URLS = 50_000;

export interface ParsedSitemap {
  /** True for a sitemap index: `locs` are further sitemaps. */
  index: boolean;
  locs: string[];
}

const LOC_RE = /<(?:[A-Za-z_][\w.-]*:)?loc\s*>\s*(?:<!\[CDATA\[([^\]]*)\]\]>|([^<]*))\s*<\/(?:[A-Za-z_][\w.-]*:)?loc\s*>/g;

/** The XML text of a sitemap body, inflated when gzipped; null when it cannot be (or is too big). */
export function sitemapText(body: Buffer): string | null {
  if (body.length >= 2 && body[0] === 0x1f && body[1] === 0x8b) {
    try {
      return zlib.gunzipSync(body, { maxOutputLength: MAX_SITEMAP_BYTES }).toString('utf8');
    } catch {
      return null;
    }
  }
  if (body.length > MAX_SITEMAP_BYTES) return null;
  return body.toString('utf8');
}

export function parseSitemap(xml: string): ParsedSitemap {
  const index = /<(?:[A-Za-z_][\w.-]*:)?sitemapindex[\s>]/.test(xml);
  const locs: string[] = [];
  LOC_RE.lastIndex = 0;
  for (let m = LOC_RE.exec(xml); m && locs.length < MAX_SITEMAP_URLS; m = LOC_RE.exec(xml)) {
    const loc = decodeXmlEntities((m[1] ?? m[2] ?? '').trim());
    if (loc) locs.push(loc);
  }
  return { index, locs };
}
