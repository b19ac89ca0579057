/**
 * The site crawler's interface as the sync calls it (helper "crawl" implements it in
 * site-crawler.ts). Declared here too so the sync builds and its folder and URL-list paths run
 * while the crawler is not there; site-crawler.ts must stay assignable to CrawlerModule.
 */
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
}

export type CrawlEvent =
  | { kind: 'page'; url: string; status: 'fetched' | 'not-modified'; content_type?: string; body?: Buffer; etag?: string; last_modified?: string; final_url: string }
  | { kind: 'gone'; url: string; http_status: number }
  | { kind: 'error'; url: string; transient: boolean; code: string; message: string }
  | { kind: 'limit'; note: string };

export type CrawlFetch = (
  url: string,
  headers: Record<string, string>,
  signal: AbortSignal,
) => Promise<{ status: number; headers: Record<string, string>; body: Buffer; final_url: string }>;

export interface CrawlOptions {
  previous: Map<string, PreviousPage>;
  fetch: CrawlFetch;
  signal: AbortSignal;
  userAgent: string;
  delayMs: number;
  concurrency: number;
}

export interface CrawlerModule {
  crawlSite(settings: CrawlSettings, opts: CrawlOptions): AsyncIterable<CrawlEvent>;
}

/** Loads site-crawler.ts (or its build output); null while it is not there. */
export async function loadCrawler(): Promise<CrawlerModule | null> {
  // A computed specifier: this builds and runs whether or not the crawler exists yet.
  for (const file of ['./site-crawler.ts', './site-crawler.js']) {
    try {
      const mod = (await import(new URL(file, import.meta.url).href)) as Partial<CrawlerModule>;
      if (typeof mod.crawlSite === 'function') return mod as CrawlerModule;
    } catch {
      // try the next
    }
  }
  return null;
}
