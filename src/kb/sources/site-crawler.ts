/**
 * The crawl of one site source: walks a documentation site from its start URL (and optionally its
 * sitemap) within a scope, politely, and yields one event per URL it reaches. It fetches and
 * classifies; storing, extracting and deleting are the caller's (the sync), which passes in a fetch
 * that carries the project's SSRF and size guards on every hop.
 *
 * Politeness: robots.txt of every host is read before its first page (robots.ts; 4xx = allow all,
 * 5xx / 429 / network error = nothing of that host is fetched in this crawl and a transient error
 * is reported), at most `concurrency` (1-2) requests per host at a time, `delayMs` between
 * requests (raised to the host's Crawl-delay, at most 60 s), conditional requests for every page
 * in `previous` (If-None-Match / If-Modified-Since), so an unchanged page costs a 304.
 *
 * Event contract (what the sync may rely on):
 * - At most one page/gone/error event per URL, the URL as url-normalize.ts spells it.
 * - `page` fetched (2xx) or not-modified (304). HTML pages are read for links (link-extract.ts);
 *   other documents (PDF, Office, text) are yielded without being read.
 * - `gone`: 404 or 410.
 * - `error` transient:true: 5xx, 408, 429, timeouts and network errors, robots.txt unavailable;
 *   the caller keeps what it has.
 * - `error` transient:false: the page is no longer one the source should hold, with the reason in
 *   `code`: OUT_OF_SCOPE (redirected out of the scope, or a `previous` page outside the current
 *   scope), EXCLUDED (include/exclude patterns), ROBOTS_DISALLOWED, NOINDEX (meta robots),
 *   CANONICAL_ELSEWHERE (its rel=canonical names another page in scope, which is crawled instead),
 *   DUPLICATE (it redirects to a page yielded under its own URL, or a page redirected to it),
 *   UNSUPPORTED_TYPE, HTTP_<status> for other 4xx, and the code of a non-transient error the
 *   caller's fetch threw (URL_NOT_ALLOWED, PAYLOAD_TOO_LARGE, ...).
 * - Every `previous` page in scope is revalidated (queued at its recorded `depth`, else at
 *   max_depth so its links are not followed), so a complete crawl reports every previous URL.
 *   A 304 has no body and so no links: store `depth` from page events to keep link-following
 *   exact on recrawls.
 * - `limit`: the crawl stopped early (max_pages, max_bytes) or left links deeper than max_depth.
 *   After a pages/bytes limit, or a cancellation, previous pages without an event were simply
 *   not reached: keep them.
 * Cancellation (opts.signal) ends the iteration without further events.
 *
 * Why one class of about 400 lines (Crawl): the frontier, the per-host queues and delays, the
 * robots cache, the seen set and the limits (pages, bytes, depth) are one crawl's state that every
 * fetch reads and changes; the pure parts are already their own modules (robots.ts, sitemap.ts,
 * url-normalize.ts, link-extract.ts).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { isToolError, toolError } from '../../errors.ts';
import { decodeText } from '../../extractors/shared/decode-text.ts';
import { compileGlob, GlobError, type GlobMatcher } from '../glob-match.ts';
import { extractLinks } from './link-extract.ts';
import { ALLOW_ALL, DISALLOW_ALL, MAX_ROBOTS_BYTES, parseRobots, type RobotsRules } from './robots.ts';
import { parseSitemap, sitemapText } from './sitemap.ts';
import { globPath, normalizeUrl } from './url-normalize.ts';

export interface CrawlSettings {
  start_url: string;
  scope: 'host' | 'prefix' | { prefixes: string[] };
  max_depth: number;
  max_pages: number;
  max_bytes: number;
  include?: string[];
  exclude?: string[];
  sitemap?: boolean;
}

export interface PreviousPage {
  url: string;
  etag?: string;
  last_modified?: string;
  hash?: string;
  /** Link depth at which it was last reached (from its page event); unknown = max_depth. */
  depth?: number;
}

export type CrawlEvent =
  | {
      kind: 'page';
      url: string;
      status: 'fetched' | 'not-modified';
      content_type?: string;
      body?: Buffer;
      etag?: string;
      last_modified?: string;
      final_url: string;
      /** Link depth from the start URL (sitemap entries count as roots). */
      depth?: number;
    }
  | { kind: 'gone'; url: string; http_status: number }
  | { kind: 'error'; url: string; transient: boolean; code: string; message: string }
  | { kind: 'limit'; note: string };

export interface CrawlFetchResult {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  final_url: string;
}

export interface CrawlOptions {
  previous: Map<string, PreviousPage>;
  fetch: (url: string, headers: Record<string, string>, signal: AbortSignal) => Promise<CrawlFetchResult>;
  signal: AbortSignal;
  userAgent: string;
  delayMs: number;
  concurrency: number;
}

/** Crawl-delay honoured up to this (a larger one would turn a sync into a day-long job). */
export const MAX_CRAWL_DELAY_MS = 60_000;
/** Sitemap files read per crawl, index files included. */
export const MAX_SITEMAP_FILES = 20;
/** HTML read for links: the first this many characters of a page. */
const MAX_LINK_SCAN_CHARS = 5 * 1024 * 1024;
/** Events produced ahead of the consumer before the workers wait (bodies are held in memory). */
const EVENT_BUFFER = 4;

const HTML_TYPES = new Set(['text/html', 'application/xhtml+xml']);
const DOCUMENT_TYPES = new Set([
  'application/pdf',
  'application/msword',
  'application/vnd.ms-excel',
  'application/vnd.ms-powerpoint',
  'application/rtf',
  'text/csv',
  'text/plain',
  'text/markdown',
  'text/x-markdown',
]);
const DOCUMENT_TYPE_PREFIXES = ['application/vnd.openxmlformats-officedocument.', 'application/vnd.oasis.opendocument.'];
const DOCUMENT_EXTENSIONS = /\.(pdf|docx?|xlsx?|pptx?|odt|ods|odp|csv|txt|md|rtf)$/i;
/** Links to these are not requested at all: media, styles, scripts, fonts, archives, binaries. */
const SKIPPED_EXTENSIONS =
  /\.(png|jpe?g|gif|webp|avif|svg|ico|bmp|tiff?|css|js|mjs|map|json|woff2?|ttf|otf|eot|mp3|mp4|m4a|wav|ogg|webm|avi|mov|mkv|zip|gz|tgz|bz2|xz|7z|rar|tar|exe|dmg|iso|bin|apk|msi|deb|rpm|jar|wasm)$/i;

interface CompiledSettings {
  start: string;
  inScope: (url: string) => boolean;
  pathAllowed: (url: string) => boolean;
  maxDepth: number;
  maxPages: number;
  maxBytes: number;
  sitemap: boolean;
}

function compileGlobs(globs: string[] | undefined, field: string): GlobMatcher[] {
  return (globs ?? []).map((g) => {
    try {
      return compileGlob(g.replace(/^\/+/, ''));
    } catch (err) {
      if (err instanceof GlobError) throw toolError('VALIDATION_ERROR', `${field} pattern "${g}" ${err.message}`);
      throw err;
    }
  });
}

/** Scheme-less `host/path` for prefix comparisons: http and https of one host are one site. */
const schemeless = (url: string): string => url.replace(/^https?:\/\//, '');

/** Whether `url` lies under `prefix`, at a path-segment boundary unless the prefix ends with `/`. */
function underPrefix(url: string, prefix: string): boolean {
  const u = schemeless(url);
  const p = schemeless(prefix);
  if (!u.startsWith(p)) return false;
  if (p.endsWith('/') || u.length === p.length) return true;
  const next = u[p.length];
  return next === '/' || next === '?';
}

/** The folder a `prefix` scope covers: the start URL's path up to its last `/`, or the path itself when it names no file. */
function prefixOf(start: string): string {
  const u = new URL(start);
  let path = u.pathname;
  if (!path.endsWith('/')) {
    const last = path.slice(path.lastIndexOf('/') + 1);
    path = last.includes('.') ? path.slice(0, path.lastIndexOf('/') + 1) : path;
  }
  return `${u.protocol}//${u.host}${path}`;
}

const bounded = (n: unknown, field: string, min: number): number => {
  if (typeof n !== 'number' || !Number.isFinite(n) || n < min) throw toolError('VALIDATION_ERROR', `${field} must be a number >= ${min}`);
  return Math.floor(n);
};

/** Checks settings and compiles them; VALIDATION_ERROR naming the field when they are wrong. Call it when a source is added. */
export function compileCrawlSettings(settings: CrawlSettings): CompiledSettings {
  const start = normalizeUrl(settings.start_url);
  if (!start) throw toolError('VALIDATION_ERROR', `start_url must be an http(s) URL, got "${settings.start_url}"`);
  let inScope: (url: string) => boolean;
  if (settings.scope === 'host') {
    const host = new URL(start).host;
    inScope = (url) => new URL(url).host === host;
  } else if (settings.scope === 'prefix') {
    const prefix = prefixOf(start);
    inScope = (url) => underPrefix(url, prefix);
  } else if (settings.scope && typeof settings.scope === 'object' && Array.isArray(settings.scope.prefixes) && settings.scope.prefixes.length > 0) {
    const prefixes = settings.scope.prefixes.map((p) => {
      const n = normalizeUrl(p);
      if (!n) throw toolError('VALIDATION_ERROR', `scope prefix must be an http(s) URL, got "${p}"`);
      // normalizeUrl turns an empty path into `/`; keep the prefix as written otherwise.
      return n;
    });
    if (!prefixes.some((p) => underPrefix(start, p))) throw toolError('VALIDATION_ERROR', 'start_url must lie under one of the scope prefixes');
    inScope = (url) => prefixes.some((p) => underPrefix(url, p));
  } else {
    throw toolError('VALIDATION_ERROR', "scope must be 'host', 'prefix' or {prefixes: [...]} with at least one prefix");
  }
  const include = compileGlobs(settings.include, 'include');
  const exclude = compileGlobs(settings.exclude, 'exclude');
  const pathAllowed = (url: string): boolean => {
    if (include.length === 0 && exclude.length === 0) return true;
    const p = globPath(url);
    if (exclude.some((m) => m(p))) return false;
    return include.length === 0 || include.some((m) => m(p));
  };
  return {
    start,
    inScope,
    pathAllowed,
    maxDepth: bounded(settings.max_depth, 'max_depth', 0),
    maxPages: bounded(settings.max_pages, 'max_pages', 1),
    maxBytes: bounded(settings.max_bytes, 'max_bytes', 1),
    sitemap: settings.sitemap === true,
  };
}

/** A bounded queue of events between the workers and the consumer. */
class EventChannel {
  private readonly queue: CrawlEvent[] = [];
  private consumer: (() => void) | null = null;
  private producers: (() => void)[] = [];
  private closed = false;

  async push(ev: CrawlEvent): Promise<void> {
    if (this.closed) return;
    this.queue.push(ev);
    this.wakeConsumer();
    while (this.queue.length > EVENT_BUFFER && !this.closed) await new Promise<void>((r) => this.producers.push(r));
  }

  async next(): Promise<CrawlEvent | undefined> {
    while (this.queue.length === 0 && !this.closed) await new Promise<void>((r) => (this.consumer = r));
    const ev = this.queue.shift();
    const p = this.producers.shift();
    p?.();
    return ev;
  }

  close(): void {
    this.closed = true;
    this.wakeConsumer();
    for (const p of this.producers.splice(0)) p();
  }

  private wakeConsumer(): void {
    const c = this.consumer;
    this.consumer = null;
    c?.();
  }
}

/** Per-host politeness: at most `limit` requests in flight, starts spaced by the delay. */
class HostGate {
  private active = 0;
  private nextAt = 0;
  private readonly waiters: (() => void)[] = [];

  constructor(
    private readonly limit: number,
    public delayMs: number,
  ) {}

  async acquire(signal: AbortSignal): Promise<void> {
    while (this.active >= this.limit) {
      signal.throwIfAborted();
      await untilAborted(signal, (r) => this.waiters.push(r));
    }
    signal.throwIfAborted();
    this.active++;
    try {
      for (let wait = this.nextAt - Date.now(); wait > 0; wait = this.nextAt - Date.now()) await sleep(wait, undefined, { signal });
    } catch (err) {
      this.release();
      throw err;
    }
    this.nextAt = Date.now() + this.delayMs;
  }

  /** Wakes every waiter (they see the abort and leave). */
  abortAll(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  release(): void {
    this.active--;
    // The delay also runs from the end of a request, so a slow server is not sent the next one at once.
    this.nextAt = Math.max(this.nextAt, Date.now() + this.delayMs);
    this.waiters.shift()?.();
  }
}

/** Waits until `register`'s callback is called or `signal` aborts, whichever comes first. */
function untilAborted(signal: AbortSignal, register: (wake: () => void) => void): Promise<void> {
  return new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const onAbort = (): void => resolve();
    signal.addEventListener('abort', onAbort, { once: true });
    register(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    });
  });
}

interface RobotsState {
  rules: RobotsRules;
  /** Set when robots.txt could not be read (5xx, 429, network): nothing of the host is fetched. */
  unavailable?: string;
}

class Crawl {
  readonly events = new EventChannel();
  private readonly stopper = new AbortController();
  private readonly signal: AbortSignal;
  private readonly cfg: CompiledSettings;
  private readonly concurrency: number;
  /** Frontier: one list per depth, read shallowest first. */
  private readonly buckets: string[][] = [];
  /** Depth each URL is queued at (lowered when a shorter path to it is found before it is taken). */
  private readonly queuedDepth = new Map<string, number>();
  /** URLs taken from the frontier or settled otherwise (redirect targets): never fetched again. */
  private readonly done = new Set<string>();
  /** URLs that got an event. */
  private readonly reported = new Set<string>();
  private readonly robots = new Map<string, Promise<RobotsState>>();
  private readonly gates = new Map<string, HostGate>();
  private busy = 0;
  private wake: (() => void) | null = null;
  private stopped = false;
  private pages = 0;
  private bytes = 0;
  private deeper = 0;
  /** `previous`, keyed by the normalized URL. */
  private readonly prev = new Map<string, PreviousPage>();

  constructor(
    settings: CrawlSettings,
    private readonly opts: CrawlOptions,
  ) {
    this.cfg = compileCrawlSettings(settings);
    this.concurrency = Math.min(2, Math.max(1, Math.floor(opts.concurrency) || 1));
    this.signal = AbortSignal.any([opts.signal, this.stopper.signal]);
    for (const [key, p] of opts.previous) {
      const url = normalizeUrl(p.url ?? key);
      if (url) this.prev.set(url, { ...p, url: p.url ?? key });
    }
  }

  /** Stops the workers: the consumer is gone or cancelled. */
  stop(): void {
    this.stopped = true;
    this.stopper.abort();
    this.events.close();
    for (const g of this.gates.values()) g.abortAll();
    this.notify();
  }

  async run(): Promise<void> {
    try {
      await this.seed();
      // Enough workers for every host in play to use its concurrency; the gates keep each host polite.
      const workers = Array.from({ length: this.concurrency * 4 }, () => this.worker());
      await Promise.all(workers);
      if (!this.signal.aborted && this.deeper > 0) {
        await this.emit({ kind: 'limit', note: `${this.deeper} link(s) deeper than max_depth ${this.cfg.maxDepth} were not followed` });
      }
    } finally {
      this.events.close();
    }
  }

  private async emit(ev: CrawlEvent): Promise<void> {
    if (this.signal.aborted) return;
    if (ev.kind !== 'limit') {
      if (this.reported.has(ev.url)) return;
      this.reported.add(ev.url);
    }
    await this.events.push(ev);
  }

  private notify(): void {
    const w = this.wake;
    this.wake = null;
    w?.();
  }

  private enqueue(url: string, depth: number): void {
    if (this.done.has(url)) return;
    const queued = this.queuedDepth.get(url);
    if (queued !== undefined && queued <= depth) return;
    this.queuedDepth.set(url, depth);
    (this.buckets[depth] ??= []).push(url);
    this.notify();
  }

  /** A link found on a page at `depth`: queued when it could be a page of this source. */
  private discover(url: string, depth: number): void {
    if (!this.cfg.inScope(url) || !this.cfg.pathAllowed(url) || SKIPPED_EXTENSIONS.test(new URL(url).pathname)) return;
    if (depth > this.cfg.maxDepth) {
      if (!this.done.has(url) && !this.queuedDepth.has(url)) this.deeper++;
      return;
    }
    this.enqueue(url, depth);
  }

  private async seed(): Promise<void> {
    this.enqueue(this.cfg.start, 0);
    for (const [url, prev] of this.prev) {
      if (!this.cfg.inScope(url)) {
        await this.emit({ kind: 'error', url: prev.url, transient: false, code: 'OUT_OF_SCOPE', message: `${url} is outside the source's scope` });
      } else if (!this.cfg.pathAllowed(url) && url !== this.cfg.start) {
        await this.emit({ kind: 'error', url: prev.url, transient: false, code: 'EXCLUDED', message: `${url} is excluded by the source's include/exclude patterns` });
      } else {
        const d = prev.depth;
        this.enqueue(url, typeof d === 'number' && Number.isFinite(d) && d >= 0 ? Math.min(Math.floor(d), this.cfg.maxDepth) : this.cfg.maxDepth);
      }
    }
    if (this.cfg.sitemap) await this.readSitemaps();
  }

  /** Next URL to crawl, or null when the crawl is over (frontier empty and nobody busy, a limit, a stop). */
  private async take(): Promise<{ url: string; depth: number } | null> {
    for (;;) {
      if (this.stopped || this.signal.aborted) return null;
      for (let d = 0; d < this.buckets.length; d++) {
        const bucket = this.buckets[d];
        while (bucket && bucket.length > 0) {
          const url = bucket.shift()!;
          if (this.done.has(url) || this.queuedDepth.get(url) !== d) continue;
          this.done.add(url);
          this.queuedDepth.delete(url);
          return { url, depth: d };
        }
      }
      if (this.busy === 0) {
        this.notify();
        return null;
      }
      await new Promise<void>((r) => {
        const prev = this.wake;
        this.wake = () => {
          prev?.();
          r();
        };
      });
    }
  }

  private remaining(): number {
    let n = 0;
    for (const [url, d] of this.queuedDepth) if (!this.done.has(url) && d >= 0) n++;
    return n;
  }

  private async limit(note: string): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.notify();
    await this.emit({ kind: 'limit', note });
  }

  private async worker(): Promise<void> {
    for (;;) {
      const item = await this.take();
      if (!item) return;
      this.busy++;
      try {
        await this.visit(item.url, item.depth);
      } catch (err) {
        if (this.signal.aborted) return;
        throw err;
      } finally {
        this.busy--;
        this.notify();
      }
    }
  }

  private gate(host: string): HostGate {
    let g = this.gates.get(host);
    if (!g) {
      g = new HostGate(this.concurrency, Math.max(0, this.opts.delayMs));
      this.gates.set(host, g);
    }
    return g;
  }

  /** One request through the host's gate. Throws what the caller's fetch throws. */
  private async request(url: string, extra: Record<string, string> = {}): Promise<CrawlFetchResult> {
    const host = new URL(url).host;
    const g = this.gate(host);
    await g.acquire(this.signal);
    try {
      return await this.opts.fetch(url, { 'user-agent': this.opts.userAgent, ...extra }, this.signal);
    } finally {
      g.release();
    }
  }

  private robotsFor(url: string): Promise<RobotsState> {
    const u = new URL(url);
    const origin = `${u.protocol}//${u.host}`;
    let p = this.robots.get(origin);
    if (!p) {
      p = this.loadRobots(origin, u.host);
      this.robots.set(origin, p);
    }
    return p;
  }

  private async loadRobots(origin: string, host: string): Promise<RobotsState> {
    const robotsUrl = `${origin}/robots.txt`;
    let res: CrawlFetchResult;
    try {
      res = await this.request(robotsUrl, { accept: 'text/plain' });
    } catch (err) {
      if (this.signal.aborted) return { rules: DISALLOW_ALL, unavailable: 'cancelled' };
      return this.robotsUnavailable(robotsUrl, `could not be read: ${(err as Error).message}`);
    }
    if (res.status >= 200 && res.status < 300) {
      const rules = parseRobots(res.body.subarray(0, MAX_ROBOTS_BYTES).toString('utf8'), this.opts.userAgent);
      if (rules.crawlDelaySeconds !== undefined) {
        const g = this.gate(host);
        g.delayMs = Math.max(g.delayMs, Math.min(MAX_CRAWL_DELAY_MS, Math.round(rules.crawlDelaySeconds * 1000)));
      }
      return { rules };
    }
    // RFC 9309 2.3.1.3: 4xx (other than 429) means there are no rules.
    if (res.status >= 400 && res.status < 500 && res.status !== 429) return { rules: ALLOW_ALL };
    return this.robotsUnavailable(robotsUrl, `answered HTTP ${res.status}`);
  }

  private async robotsUnavailable(robotsUrl: string, why: string): Promise<RobotsState> {
    const message = `${robotsUrl} ${why}; nothing on this host is fetched until it can be read`;
    await this.emit({ kind: 'error', url: robotsUrl, transient: true, code: 'ROBOTS_UNAVAILABLE', message });
    return { rules: DISALLOW_ALL, unavailable: message };
  }

  private async readSitemaps(): Promise<void> {
    const startHost = new URL(this.cfg.start).host;
    const robots = await this.robotsFor(this.cfg.start);
    if (robots.unavailable) return;
    const listed = robots.rules.sitemaps.map((s) => normalizeUrl(s)).filter((s): s is string => !!s && new URL(s).host === startHost);
    const todo = listed.length ? listed : [`${new URL(this.cfg.start).origin}/sitemap.xml`];
    const seen = new Set<string>();
    let files = 0;
    while (todo.length > 0 && files < MAX_SITEMAP_FILES && !this.signal.aborted) {
      const url = todo.shift()!;
      if (seen.has(url) || !robots.rules.allowed(pathAndQuery(url))) continue;
      seen.add(url);
      files++;
      let res: CrawlFetchResult;
      try {
        res = await this.request(url, { accept: 'application/xml, text/xml' });
      } catch (err) {
        if (this.signal.aborted) return;
        await this.emit({ kind: 'error', url, transient: true, code: 'SITEMAP_UNAVAILABLE', message: `sitemap could not be read: ${(err as Error).message}` });
        continue;
      }
      if (res.status >= 500 || res.status === 429) {
        await this.emit({ kind: 'error', url, transient: true, code: 'SITEMAP_UNAVAILABLE', message: `sitemap answered HTTP ${res.status}` });
        continue;
      }
      if (res.status < 200 || res.status >= 300) continue; // no sitemap: the links are enough
      const text = sitemapText(res.body);
      if (text === null) continue;
      const parsed = parseSitemap(text);
      for (const loc of parsed.locs) {
        const n = normalizeUrl(loc, url);
        if (!n) continue;
        if (parsed.index) {
          if (new URL(n).host === startHost) todo.push(n);
        } else this.discover(n, 0);
      }
    }
  }

  private async visit(url: string, depth: number): Promise<void> {
    const prev = this.prev.get(url);
    const robots = await this.robotsFor(url);
    if (robots.unavailable) {
      await this.emit({ kind: 'error', url, transient: true, code: 'ROBOTS_UNAVAILABLE', message: robots.unavailable });
      return;
    }
    if (!robots.rules.allowed(pathAndQuery(url))) {
      // Only a page the source holds needs telling; a new disallowed link is simply not followed.
      if (prev) await this.emit({ kind: 'error', url, transient: false, code: 'ROBOTS_DISALLOWED', message: `robots.txt disallows ${url} for ${this.opts.userAgent}` });
      return;
    }
    // Checked and counted in one synchronous step, so parallel workers never overshoot the limit.
    if (this.pages >= this.cfg.maxPages) {
      await this.limit(`stopped at max_pages ${this.cfg.maxPages}; ${this.remaining() + 1} queued URL(s) not visited`);
      return;
    }
    this.pages++;
    const conditional: Record<string, string> = { accept: 'text/html,application/xhtml+xml,application/pdf;q=0.9,*/*;q=0.8' };
    if (prev?.etag) conditional['if-none-match'] = prev.etag;
    if (prev?.last_modified) conditional['if-modified-since'] = prev.last_modified;
    let res: CrawlFetchResult;
    try {
      res = await this.request(url, conditional);
    } catch (err) {
      if (this.signal.aborted) return;
      await this.emit(fetchError(url, err));
      return;
    }
    const status = res.status;
    const headers = lowerKeys(res.headers);
    if (status === 304) {
      if (prev && (prev.etag || prev.last_modified)) {
        await this.emit({
          kind: 'page',
          url,
          status: 'not-modified',
          etag: headers['etag'] ?? prev.etag,
          last_modified: headers['last-modified'] ?? prev.last_modified,
          content_type: headers['content-type'],
          final_url: url,
          depth,
        });
      } else {
        await this.emit({ kind: 'error', url, transient: true, code: 'HTTP_304', message: 'answered 304 to an unconditional request' });
      }
      return;
    }
    if (status === 404 || status === 410) {
      await this.emit({ kind: 'gone', url, http_status: status });
      return;
    }
    if (status < 200 || status >= 300) {
      const transient = status >= 500 || status === 408 || status === 429 || status < 200;
      await this.emit({ kind: 'error', url, transient, code: `HTTP_${status}`, message: `answered HTTP ${status}` });
      return;
    }

    const final = normalizeUrl(res.final_url || url) ?? url;
    if (final !== url && !(await this.acceptRedirect(url, final))) return;

    this.bytes += res.body.length;
    const contentType = headers['content-type'];
    const kind = classify(contentType, final, res.body);
    if (!kind) {
      await this.emit({ kind: 'error', url, transient: false, code: 'UNSUPPORTED_TYPE', message: `${contentType ?? 'no content type'} is not a document type the source ingests` });
    } else if (kind === 'html' && !(await this.readHtml(url, final, depth, res.body, contentType))) {
      // readHtml reported why the page is not yielded.
    } else {
      await this.emit({
        kind: 'page',
        url,
        status: 'fetched',
        content_type: contentType,
        body: res.body,
        etag: headers['etag'],
        last_modified: headers['last-modified'],
        final_url: final,
        depth,
      });
    }
    if (this.bytes >= this.cfg.maxBytes) await this.limit(`stopped at max_bytes ${this.cfg.maxBytes} (${this.bytes} bytes fetched); ${this.remaining()} queued URL(s) not visited`);
  }

  /** Whether a redirect from `url` to `final` may be yielded as `url`; reports why not otherwise. */
  private async acceptRedirect(url: string, final: string): Promise<boolean> {
    const refuse = async (code: string, message: string): Promise<false> => {
      await this.emit({ kind: 'error', url, transient: false, code, message });
      return false;
    };
    if (!this.cfg.inScope(final)) return refuse('OUT_OF_SCOPE', `redirects to ${final}, outside the source's scope`);
    if (!this.cfg.pathAllowed(final) && url !== this.cfg.start) return refuse('EXCLUDED', `redirects to ${final}, excluded by the source's patterns`);
    const robots = await this.robotsFor(final);
    if (robots.unavailable) {
      await this.emit({ kind: 'error', url, transient: true, code: 'ROBOTS_UNAVAILABLE', message: robots.unavailable });
      return false;
    }
    if (!robots.rules.allowed(pathAndQuery(final))) return refuse('ROBOTS_DISALLOWED', `redirects to ${final}, which robots.txt disallows`);
    if (this.reported.has(final) && this.done.has(final)) return refuse('DUPLICATE', `redirects to ${final}, crawled under its own URL`);
    // The target is settled by this page: not fetched again, and if the source held it under its
    // own URL, that copy is the duplicate now.
    this.done.add(final);
    this.queuedDepth.delete(final);
    if (this.prev.has(final) && !this.reported.has(final)) {
      await this.emit({ kind: 'error', url: final, transient: false, code: 'DUPLICATE', message: `${url} redirects here; the page is kept under ${url}` });
    }
    return true;
  }

  /** Follows an HTML page's links; false when the page itself is not to be yielded (reported). */
  private async readHtml(url: string, final: string, depth: number, body: Buffer, contentType: string | undefined): Promise<boolean> {
    const { text } = decodeText(body, { contentType, maxChars: MAX_LINK_SCAN_CHARS });
    const page = extractLinks(text, final);
    for (const link of page.links) this.discover(link, depth + 1);
    if (page.canonical && page.canonical !== final && page.canonical !== url && this.cfg.inScope(page.canonical) && this.cfg.pathAllowed(page.canonical)) {
      // The page says it is a copy of another: crawl that one instead (same depth).
      this.enqueue(page.canonical, depth);
      await this.emit({ kind: 'error', url, transient: false, code: 'CANONICAL_ELSEWHERE', message: `its canonical URL is ${page.canonical}` });
      return false;
    }
    if (page.noindex) {
      await this.emit({ kind: 'error', url, transient: false, code: 'NOINDEX', message: 'the page asks not to be indexed (meta robots noindex)' });
      return false;
    }
    return true;
  }
}

function pathAndQuery(url: string): string {
  const u = new URL(url);
  return `${u.pathname}${u.search}`;
}

function lowerKeys(h: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h ?? {})) out[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : String(v);
  return out;
}

function classify(contentType: string | undefined, url: string, body: Buffer): 'html' | 'document' | null {
  const type = (contentType ?? '').split(';', 1)[0].trim().toLowerCase();
  if (HTML_TYPES.has(type)) return 'html';
  if (DOCUMENT_TYPES.has(type) || DOCUMENT_TYPE_PREFIXES.some((p) => type.startsWith(p))) return 'document';
  const path = new URL(url).pathname;
  if (type === '' || type === 'application/octet-stream') {
    if (DOCUMENT_EXTENSIONS.test(path)) return 'document';
    if (/^\s*<(?:!doctype\s+html|html[\s>])/i.test(body.subarray(0, 512).toString('latin1'))) return 'html';
  }
  return null;
}

/** Errors the caller's fetch throws: network and timeouts are transient; guards (SSRF, size) are not. */
const PERMANENT_CODES = new Set(['URL_NOT_ALLOWED', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_FORMAT', 'VALIDATION_ERROR', 'FORBIDDEN', 'NOT_FOUND']);

function fetchError(url: string, err: unknown): CrawlEvent {
  const message = (err as Error)?.message ?? String(err);
  if (isToolError(err)) return { kind: 'error', url, transient: !PERMANENT_CODES.has(err.code), code: err.code, message };
  const name = (err as Error)?.name;
  const code = name === 'TimeoutError' || name === 'AbortError' ? 'TIMEOUT' : 'NETWORK_ERROR';
  return { kind: 'error', url, transient: true, code, message };
}

/**
 * Crawls one site source. Settings are checked first (VALIDATION_ERROR on the first next()).
 * Breaking out of the loop stops the workers.
 */
export async function* crawlSite(settings: CrawlSettings, opts: CrawlOptions): AsyncGenerator<CrawlEvent> {
  const crawl = new Crawl(settings, opts);
  const running = crawl.run();
  // Observed here so a failure is never an unhandled rejection; rethrown after the last event.
  running.catch(() => {});
  try {
    for (;;) {
      const ev = await crawl.events.next();
      if (ev === undefined || opts.signal.aborted) break;
      yield ev;
    }
    if (!opts.signal.aborted) await running;
  } finally {
    crawl.stop();
    await running.catch(() => {});
  }
}
