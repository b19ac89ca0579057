/**
 * Site crawl of a 1,000-page documentation site on 127.0.0.1 (src/kb/sources/site-crawler.ts):
 * a first crawl, then a no-change recrawl with the ETags the first one returned, where every page
 * should cost one 304 and no body. Prints the time and the requests the origin saw for each.
 *
 *   npx tsx scripts/bench/site-crawl.bench.ts                  # 1,000 pages, concurrency 2, no delay
 *   npx tsx scripts/bench/site-crawl.bench.ts --pages 5000 --delay 5
 *
 * The delay is 0 by default so the numbers measure the crawler, not the politeness setting; with a
 * delay of D ms and concurrency 2 a crawl of N pages takes at least N x D / 2 ms.
 */
import { crawlSite, type CrawlEvent, type PreviousPage } from '../../src/kb/sources/site-crawler.ts';
import { html, loopbackFetch, startSite } from '../../test/kb/site-crawler-fixtures.ts';

const args = process.argv.slice(2);
const arg = (name: string, dflt: number): number => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) : dflt);
const PAGES = arg('--pages', 1000);
const DELAY = arg('--delay', 0);
const SECTIONS = 10;

const site = await startSite();
site.robots = 'User-agent: *\nDisallow: /site/private/\n';
const perSection = Math.ceil(PAGES / SECTIONS);
const sectionLinks = Array.from({ length: SECTIONS }, (_, s) => `/site/s${s}/`);
site.pages.set('/site/', { body: html('Home', sectionLinks) });
let made = 1;
for (let s = 0; s < SECTIONS; s++) {
  const links = Array.from({ length: perSection }, (_, i) => `/site/s${s}/p${i}.html`);
  site.pages.set(`/site/s${s}/`, { body: html(`Section ${s}`, links) });
  made++;
  for (let i = 0; i < perSection && made < PAGES; i++, made++) {
    const body = html(`Page ${s}.${i}`, [`p${(i + 1) % perSection}.html`, `../s${(s + 1) % SECTIONS}/p${i}.html`, '/site/private/x.html']) + `<p>${'Lorem ipsum dolor sit amet. '.repeat(40)}</p>`;
    site.pages.set(`/site/s${s}/p${i}.html`, { body });
  }
}

async function run(previous: Map<string, PreviousPage>): Promise<{ events: CrawlEvent[]; ms: number; requests: number; r304: number; r200: number; other: number; disallowed: number; bytes: number }> {
  site.resetLog();
  const events: CrawlEvent[] = [];
  const t0 = performance.now();
  for await (const ev of crawlSite(
    { start_url: `${site.base}/site/`, scope: 'prefix', max_depth: 10, max_pages: PAGES * 2, max_bytes: 1e9 },
    { previous, fetch: loopbackFetch, signal: new AbortController().signal, userAgent: 'RagDocBot/1.0', delayMs: DELAY, concurrency: 2 },
  )) events.push(ev);
  const ms = performance.now() - t0;
  const bytes = events.reduce((n, e) => n + (e.kind === 'page' && e.body ? e.body.length : 0), 0);
  return { events, ms, requests: site.log.length, r304: site.log.filter((r) => r.status === 304).length, r200: site.log.filter((r) => r.status === 200).length, other: site.log.filter((r) => r.status !== 200 && r.status !== 304).length, disallowed: site.log.filter((r) => r.path.startsWith('/site/private/')).length, bytes };
}

const first = await run(new Map());
const previous = new Map<string, PreviousPage>();
for (const e of first.events) if (e.kind === 'page') previous.set(e.url, { url: e.url, etag: e.etag, last_modified: e.last_modified, depth: e.depth });
const again = await run(previous);
await site.close();

const row = (label: string, r: typeof first): string =>
  `| ${label} | ${r.events.filter((e) => e.kind === 'page').length} | ${(r.ms / 1000).toFixed(2)} | ${r.requests} | ${r.r200} | ${r.r304} | ${r.other} | ${r.disallowed} | ${(r.bytes / 1024).toFixed(0)} |`;
process.stdout.write(
  [
    `Site crawl: ${site.pages.size} pages on 127.0.0.1, concurrency 2, delay ${DELAY} ms, robots.txt disallowing one linked folder`,
    '',
    '| crawl | pages reported | s | requests | 200 | 304 | other (404) | robots-disallowed requested | body KiB |',
    '|---|---|---|---|---|---|---|---|---|',
    row('first', first),
    row('no-change recrawl', again),
    '',
    `The recrawl took ${((again.ms / first.ms) * 100).toFixed(0)}% of the first crawl's time and moved ${((again.bytes / Math.max(1, first.bytes)) * 100).toFixed(1)}% of its body bytes.`,
    'Requests include robots.txt (once per crawl, a 200 both times) and links to pages that do not exist (404).',
    '',
  ].join('\n'),
);
const ok = first.disallowed === 0 && again.r304 === previous.size && again.r200 <= 1 && first.r200 >= PAGES - 1;
if (!ok) {
  process.stderr.write(`unexpected: recrawl 304s ${again.r304} of ${previous.size}, 200s ${again.r200}\n`);
  process.exit(1);
}
