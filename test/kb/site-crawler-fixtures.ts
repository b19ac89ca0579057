/**
 * A documentation site served on 127.0.0.1 for the crawler tests and benchmark: pages are a
 * mutable map (tests change, remove and add them between crawls), every static page carries an
 * ETag and answers 304 to a matching If-None-Match, and every request is logged (path, headers,
 * the number in flight) so a test can count what the crawler sent.
 *
 * Routes beyond the page map: 301/302 redirects (`redirects`), a calendar trap (/docs/calendar?month=..
 * always links to the next month, no ETag), fixed statuses (`statuses`, e.g. 503), robots.txt from
 * `robots` (or `robotsStatus`), and sitemaps (`sitemaps`, path -> XML).
 */
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CrawlFetchResult } from '../../src/kb/sources/site-crawler.ts';

export interface LoggedRequest {
  path: string;
  headers: http.IncomingHttpHeaders;
  status: number;
  at: number;
}

export interface Page {
  body: string | Buffer;
  type?: string;
  /** No ETag / Last-Modified: every request is a 200. */
  noValidators?: boolean;
}

export interface SiteOrigin {
  base: string;
  pages: Map<string, Page>;
  redirects: Map<string, { to: string; status?: number }>;
  statuses: Map<string, number>;
  sitemaps: Map<string, string>;
  robots: string | null;
  robotsStatus: number;
  log: LoggedRequest[];
  maxInFlight: number;
  /** Milliseconds each response is held (to see concurrency at the origin). */
  holdMs: number;
  requestsTo(path: string): LoggedRequest[];
  resetLog(): void;
  close(): Promise<void>;
}

const etagOf = (body: string | Buffer): string => `"${crypto.createHash('sha1').update(body).digest('hex').slice(0, 16)}"`;

export function html(title: string, links: string[], extra = ''): string {
  return `<!doctype html><html><head><title>${title}</title>${extra}</head><body><nav><a href="/docs/">Home</a></nav><main><h1>${title}</h1><p>Text of ${title}.</p>${links
    .map((l) => `<a href="${l}">${l}</a>`)
    .join(' ')}</main></body></html>`;
}

export async function startSite(): Promise<SiteOrigin> {
  let inFlight = 0;
  const origin: SiteOrigin = {
    base: '',
    pages: new Map(),
    redirects: new Map(),
    statuses: new Map(),
    sitemaps: new Map(),
    robots: null,
    robotsStatus: 404,
    log: [],
    maxInFlight: 0,
    holdMs: 0,
    requestsTo: (p) => origin.log.filter((r) => r.path === p),
    resetLog: () => {
      origin.log.length = 0;
      origin.maxInFlight = 0;
    },
    close: () =>
      new Promise((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
  const server = http.createServer((req, res) => {
    inFlight++;
    origin.maxInFlight = Math.max(origin.maxInFlight, inFlight);
    const path = req.url ?? '/';
    const send = (status: number, headers: Record<string, string>, body: string | Buffer = ''): void => {
      origin.log.push({ path, headers: req.headers, status, at: Date.now() });
      const finish = (): void => {
        inFlight--;
        res.writeHead(status, headers).end(body);
      };
      if (origin.holdMs > 0) setTimeout(finish, origin.holdMs);
      else finish();
    };
    const pathname = path.split('?')[0];
    if (pathname === '/robots.txt') {
      if (origin.robots !== null) return send(200, { 'content-type': 'text/plain' }, origin.robots);
      return send(origin.robotsStatus, { 'content-type': 'text/plain' }, 'no robots');
    }
    const sitemap = origin.sitemaps.get(pathname);
    if (sitemap !== undefined) return send(200, { 'content-type': 'application/xml' }, sitemap);
    const status = origin.statuses.get(path) ?? origin.statuses.get(pathname);
    if (status !== undefined) return send(status, { 'content-type': 'text/html' }, `<p>${status}</p>`);
    const redirect = origin.redirects.get(path);
    if (redirect) return send(redirect.status ?? 301, { location: redirect.to }, '');
    if (pathname === '/docs/calendar') {
      const month = new URL(path, 'http://x').searchParams.get('month') ?? '2026-01';
      const [y, m] = month.split('-').map(Number);
      const next = m === 12 ? `${y + 1}-01` : `${y}-${String(m + 1).padStart(2, '0')}`;
      return send(200, { 'content-type': 'text/html; charset=utf-8' }, html(`Calendar ${month}`, [`/docs/calendar?month=${next}`]));
    }
    const page = origin.pages.get(path) ?? origin.pages.get(pathname);
    if (!page) return send(404, { 'content-type': 'text/html' }, 'not found');
    const type = page.type ?? 'text/html; charset=utf-8';
    if (page.noValidators) return send(200, { 'content-type': type }, page.body);
    const etag = etagOf(page.body);
    if (req.headers['if-none-match'] === etag) return send(304, { etag }, '');
    return send(200, { 'content-type': type, etag, 'last-modified': 'Tue, 01 Dec 2026 10:00:00 GMT' }, page.body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  origin.base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return origin;
}

/** The fetch a sync would pass, minus the SSRF guard: Node's fetch, redirects followed, final URL kept. */
export async function loopbackFetch(url: string, headers: Record<string, string>, signal: AbortSignal): Promise<CrawlFetchResult> {
  const res = await fetch(url, { headers, signal, redirect: 'follow' });
  const body = Buffer.from(await res.arrayBuffer());
  const out: Record<string, string> = {};
  res.headers.forEach((v, k) => (out[k] = v));
  return { status: res.status, headers: out, body, final_url: res.url || url };
}
