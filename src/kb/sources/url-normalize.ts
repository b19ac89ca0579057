/**
 * One spelling per page for the site crawler: two links that a server answers with the same page
 * should become the same key, so a page is fetched once and a crawl trap made of session ids or
 * tracking parameters collapses to one URL.
 *
 * What changes: the fragment and any credentials go; scheme and host are lower case and the
 * default port is dropped (WHATWG URL does both); percent escapes of unreserved characters are
 * decoded and the others upper-cased; path parameters and query parameters that carry a session
 * id (jsessionid, phpsessid, sid, ...) or a click/campaign tag (utm_*, gclid, fbclid, ...) are
 * removed; the remaining query parameters are sorted (byte order of the pair as written, so the
 * server's own encoding is kept); a trailing index file (index.html, index.htm, index.php) becomes
 * its folder. What does not: case of the path, duplicate slashes, a trailing slash otherwise
 * (servers differ on those, and a redirect tells the crawler which one is right).
 */

/** Query parameter names dropped wherever they appear (lower case). */
const DROPPED_PARAMS = new Set([
  // Click ids and mail-campaign tags.
  'gclid', 'gclsrc', 'dclid', 'gbraid', 'wbraid', 'fbclid', 'msclkid', 'yclid', 'igshid', 'twclid', 'ttclid', 'li_fat_id',
  'mc_cid', 'mc_eid', '_ga', '_gl', '_hsenc', '_hsmi', '__hstc', '__hssc', '__hsfp', 'mkt_tok', 'oly_anon_id', 'oly_enc_id',
  'vero_id', 'vero_conv', 'wickedid', 'rb_clickid', 's_cid', 'ref_src',
  // Session ids.
  'jsessionid', 'phpsessid', 'sid', 'sessionid', 'session_id', 'sessid', 'aspsessionid', 'cfid', 'cftoken', 'zenid', 'oscsid',
]);
/** Prefixes of dropped parameter names (utm_source, utm_medium, ..., pk_campaign, ASPSESSIONIDxxxx). */
const DROPPED_PREFIXES = ['utm_', 'pk_', 'mtm_', 'aspsessionid'];
/** Trailing index files read as their folder. */
const INDEX_FILE = /\/(?:index\.html?|index\.php|index\.shtml)$/i;
/** `;jsessionid=...`-style path parameters (Java, PHP, ColdFusion servers put the session in the path). */
const PATH_SESSION = /;(?:jsessionid|phpsessid|sid|sessionid|sessid)=[^/;?#]*/gi;

const UNRESERVED = /[A-Za-z0-9\-._~]/;

function droppedParam(rawName: string): boolean {
  let name: string;
  try {
    name = decodeURIComponent(rawName.replace(/\+/g, ' ')).toLowerCase();
  } catch {
    name = rawName.toLowerCase();
  }
  return DROPPED_PARAMS.has(name) || DROPPED_PREFIXES.some((p) => name.startsWith(p));
}

/** %7e -> ~, %2f stays %2F: unreserved characters decoded, the rest upper-cased. */
function normalizeEscapes(s: string): string {
  if (!s.includes('%')) return s;
  return s.replace(/%([0-9a-fA-F]{2})/g, (_all, hex: string) => {
    const ch = String.fromCharCode(Number.parseInt(hex, 16));
    return UNRESERVED.test(ch) ? ch : `%${hex.toUpperCase()}`;
  });
}

function normalizeQuery(search: string): string {
  if (search.length <= 1) return '';
  const pairs = search
    .slice(1)
    .split('&')
    .filter((p) => p !== '' && !droppedParam(p.split('=', 1)[0]))
    .map(normalizeEscapes);
  if (pairs.length === 0) return '';
  pairs.sort((a, b) => {
    const an = a.split('=', 1)[0];
    const bn = b.split('=', 1)[0];
    if (an !== bn) return an < bn ? -1 : 1;
    // Same name: keep the order as written (a repeated parameter's order can matter to the server).
    return 0;
  });
  return `?${pairs.join('&')}`;
}

/**
 * The crawl key of `raw` (resolved against `base` when given), or null when it is not an http(s)
 * URL or does not parse.
 */
export function normalizeUrl(raw: string, base?: string): string | null {
  let u: URL;
  try {
    u = base === undefined ? new URL(raw.trim()) : new URL(raw.trim(), base);
  } catch {
    return null;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return null;
  u.hash = '';
  u.username = '';
  u.password = '';
  let pathname = normalizeEscapes(u.pathname.replace(PATH_SESSION, ''));
  pathname = pathname.replace(INDEX_FILE, '/');
  if (pathname === '') pathname = '/';
  const query = normalizeQuery(u.search);
  return `${u.protocol}//${u.host}${pathname}${query}`;
}

/** The path of a normalized URL as the include/exclude globs see it: decoded, without the leading `/`. */
export function globPath(url: string): string {
  const p = new URL(url).pathname;
  let decoded: string;
  try {
    decoded = decodeURIComponent(p);
  } catch {
    decoded = p;
  }
  return decoded.replace(/^\/+/, '');
}
