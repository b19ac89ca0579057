/**
 * How the crawler treats robots.txt itself, against a loopback origin: missing (404) = allow all;
 * failing (503) = nothing of the host fetched, one transient error, previous pages reported as
 * transient (so a sync keeps them); Crawl-delay raises the delay between requests.
 */
import t from 'tap';
import { crawlSite, type CrawlEvent, type CrawlSettings, type PreviousPage } from '../../src/kb/sources/site-crawler.ts';
import { html, loopbackFetch, startSite } from './site-crawler-fixtures.ts';

async function crawl(settings: CrawlSettings, previous = new Map<string, PreviousPage>(), delayMs = 0): Promise<CrawlEvent[]> {
  const out: CrawlEvent[] = [];
  for await (const ev of crawlSite(settings, { previous, fetch: loopbackFetch, signal: new AbortController().signal, userAgent: 'RagDocBot/1.0', delayMs, concurrency: 2 })) out.push(ev);
  return out;
}

t.test('robots.txt 404 allows everything; 503 fetches nothing and is transient', async (t) => {
  const site = await startSite();
  t.teardown(() => site.close());
  site.pages.set('/d/', { body: html('Index', ['a.html', 'b.html']) });
  site.pages.set('/d/a.html', { body: html('A', []) });
  site.pages.set('/d/b.html', { body: html('B', []) });
  const settings: CrawlSettings = { start_url: `${site.base}/d/`, scope: 'prefix', max_depth: 3, max_pages: 10, max_bytes: 1e6 };
  site.robotsStatus = 404;
  const open = await crawl(settings);
  t.equal(open.filter((e) => e.kind === 'page').length, 3);

  site.robotsStatus = 503;
  site.resetLog();
  const previous = new Map<string, PreviousPage>([[`${site.base}/d/a.html`, { url: `${site.base}/d/a.html`, etag: '"x"' }]]);
  const closed = await crawl(settings, previous);
  t.same(site.log.map((r) => r.path), ['/robots.txt'], 'only robots.txt was requested');
  t.match(closed.find((e) => e.kind === 'error' && e.url.endsWith('/robots.txt')), { transient: true, code: 'ROBOTS_UNAVAILABLE' });
  t.match(closed.find((e) => e.kind === 'error' && e.url === `${site.base}/d/a.html`), { transient: true, code: 'ROBOTS_UNAVAILABLE' }, 'a previous page is kept (transient)');
  t.notOk(closed.some((e) => e.kind === 'gone' || e.kind === 'page'));
});

t.test('Crawl-delay spaces the requests to the host', async (t) => {
  const site = await startSite();
  t.teardown(() => site.close());
  site.robots = 'User-agent: *\nCrawl-delay: 0.15\n';
  site.pages.set('/d/', { body: html('Index', ['a.html', 'b.html', 'c.html']) });
  for (const p of ['a', 'b', 'c']) site.pages.set(`/d/${p}.html`, { body: html(p, []) });
  await crawl({ start_url: `${site.base}/d/`, scope: 'prefix', max_depth: 3, max_pages: 10, max_bytes: 1e6 });
  const pages = site.log.filter((r) => r.path.startsWith('/d/'));
  t.equal(pages.length, 4);
  // A lower bound only: a loaded machine makes the gaps longer, never shorter.
  for (let i = 1; i < pages.length; i++) t.ok(pages[i].at - pages[i - 1].at >= 140, `gap ${i} is at least the Crawl-delay (${pages[i].at - pages[i - 1].at} ms)`);
});
