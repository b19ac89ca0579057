/**
 * The site crawler (src/kb/sources/site-crawler.ts) against a documentation site on 127.0.0.1:
 * scope, robots.txt, redirects in and out of scope, canonical links, normalization of tracking
 * and session parameters, a sitemap index, a calendar trap ending at the limits, PDFs yielded
 * unread, 404/410/503, and a recrawl where every unchanged page costs one 304 (counted at the origin).
 */
import t from 'tap';
import { crawlSite, type CrawlEvent, type CrawlSettings, type PreviousPage } from '../../src/kb/sources/site-crawler.ts';
import { html, loopbackFetch, startSite, type SiteOrigin } from './site-crawler-fixtures.ts';

const UA = 'RagDocBot/1.0';
const h = (title: string, links: string[], extra = '') => ({ body: html(title, links, extra) });

async function crawl(settings: CrawlSettings, previous = new Map<string, PreviousPage>(), extra: { signal?: AbortSignal; concurrency?: number; delayMs?: number } = {}): Promise<CrawlEvent[]> {
  const out: CrawlEvent[] = [];
  for await (const ev of crawlSite(settings, {
    previous,
    fetch: loopbackFetch,
    signal: extra.signal ?? new AbortController().signal,
    userAgent: UA,
    delayMs: extra.delayMs ?? 0,
    concurrency: extra.concurrency ?? 2,
  })) out.push(ev);
  return out;
}

function docsSite(site: SiteOrigin): void {
  const b = site.base;
  site.robots = ['User-agent: *', 'Disallow: /', '', 'User-agent: ragdocbot', 'Disallow: /docs/private/', 'Allow: /docs/private/open.html', 'Disallow: /*.cgi$', `Sitemap: ${b}/sitemap.xml`].join('\n');
  site.pages.set('/docs/', {
    body: html('Home', [
      '/docs/guide/',
      'guide/intro.html#part-2',
      `${b}/docs/guide/intro.html?utm_source=mail&utm_medium=x`,
      '/docs/guide/;jsessionid=ABC',
      '/docs/private/secret.html',
      '/docs/private/open.html',
      '/docs/run.cgi',
      '/docs/manual.pdf',
      '/docs/old',
      '/docs/leave',
      '/docs/dup.html',
      '/docs/gone.html',
      '/docs/removed.html',
      '/docs/flaky.html',
      '/docs/calendar?month=2026-01',
      '/blog/outside.html',
      'https://elsewhere.invalid/x',
      '/docs/logo.png',
    ]) + '<a rel="nofollow" href="/docs/nofollow.html">x</a><script>var s = "<a href=\'/docs/in-script.html\'>";</script>',
  });
  site.pages.set('/docs/guide/', h('Guide', ['intro.html', 'deep/a.html']));
  site.pages.set('/docs/guide/intro.html', h('Intro', ['../guide/']));
  site.pages.set('/docs/guide/deep/a.html', h('Deep A', ['b.html']));
  site.pages.set('/docs/guide/deep/b.html', h('Deep B', []));
  site.pages.set('/docs/private/secret.html', h('Secret', []));
  site.pages.set('/docs/private/open.html', h('Open', []));
  site.pages.set('/docs/run.cgi', h('CGI', []));
  site.pages.set('/docs/nofollow.html', h('Nofollow', []));
  site.pages.set('/docs/in-script.html', h('In script', []));
  site.pages.set('/docs/manual.pdf', { body: Buffer.from(`%PDF-1.4\n(see ${b}/docs/from-pdf.html)\n%%EOF`), type: 'application/pdf' });
  site.pages.set('/docs/from-pdf.html', h('From PDF', []));
  site.pages.set('/docs/new-home.html', h('Moved here', []));
  site.pages.set('/blog/outside.html', h('Blog', []));
  site.pages.set('/docs/dup.html', h('Dup', [], '<link rel="canonical" href="/docs/guide/intro.html">'));
  site.pages.set('/docs/orphan.html', h('Only in the sitemap', []));
  site.pages.set('/docs/removed.html', h('Soon removed', []));
  site.redirects.set('/docs/old', { to: '/docs/new-home.html' });
  site.redirects.set('/docs/leave', { to: '/blog/outside.html', status: 302 });
  site.statuses.set('/docs/gone.html', 410);
  site.statuses.set('/docs/flaky.html', 503);
  site.sitemaps.set('/sitemap.xml', `<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>${b}/sitemap-docs.xml</loc></sitemap></sitemapindex>`);
  site.sitemaps.set('/sitemap-docs.xml', `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>${b}/docs/orphan.html</loc></url><url><loc><![CDATA[${b}/docs/guide/]]></loc></url></urlset>`);
}

const byUrl = (events: CrawlEvent[]): Map<string, CrawlEvent> => new Map(events.filter((e) => e.kind !== 'limit').map((e) => [(e as { url: string }).url, e]));

t.test('first crawl, then a recrawl that costs a 304 per unchanged page, then changes', async (t) => {
  const site = await startSite();
  t.teardown(() => site.close());
  docsSite(site);
  const b = site.base;
  const settings: CrawlSettings = { start_url: `${b}/docs/`, scope: 'prefix', max_depth: 100, max_pages: 40, max_bytes: 10_000_000, sitemap: true };
  const events = await crawl(settings);
  const ev = byUrl(events);
  const pages = events.filter((e) => e.kind === 'page').map((e) => e.url).sort();
  t.same(pages, [
    `${b}/docs/`,
    `${b}/docs/calendar?month=2026-01`,
    `${b}/docs/guide/`,
    `${b}/docs/guide/deep/a.html`,
    `${b}/docs/guide/deep/b.html`,
    `${b}/docs/guide/intro.html`,
    `${b}/docs/manual.pdf`,
    `${b}/docs/old`,
    `${b}/docs/orphan.html`,
    `${b}/docs/private/open.html`,
    `${b}/docs/removed.html`,
  ].concat(pages.filter((p) => p.includes('calendar?month=') && !p.endsWith('2026-01'))).sort(), 'the pages of the scope, once each');
  // Normalization: the fragment, utm and jsessionid spellings were one page each, fetched once.
  t.equal(site.requestsTo('/docs/guide/intro.html').length, 1);
  t.equal(site.requestsTo('/docs/guide/').length, 1);
  // robots.txt: the ragdocbot group (not *) applies; disallowed pages never requested.
  t.equal(site.requestsTo('/robots.txt').length, 1);
  for (const p of ['/docs/private/secret.html', '/docs/run.cgi']) t.equal(site.requestsTo(p).length, 0, `${p} never requested`);
  // nofollow and links inside <script> are not followed; a PDF is not read for links; media skipped.
  for (const p of ['/docs/nofollow.html', '/docs/in-script.html', '/docs/from-pdf.html', '/docs/logo.png'])
    t.equal(site.requestsTo(p).length, 0, `${p} not requested`);
  t.equal(site.requestsTo('/blog/outside.html').length, 1, 'outside the scope: only reached through the redirect the fetch followed');
  const pdf = ev.get(`${b}/docs/manual.pdf`);
  t.match(pdf, { kind: 'page', status: 'fetched', content_type: 'application/pdf' });
  // Redirect within scope: yielded with its final URL; out of scope: an error, not gone.
  t.match(ev.get(`${b}/docs/old`), { kind: 'page', final_url: `${b}/docs/new-home.html` });
  t.match(ev.get(`${b}/docs/leave`), { kind: 'error', code: 'OUT_OF_SCOPE', transient: false });
  t.match(ev.get(`${b}/docs/dup.html`), { kind: 'error', code: 'CANONICAL_ELSEWHERE', transient: false });
  t.match(ev.get(`${b}/docs/gone.html`), { kind: 'gone', http_status: 410 });
  t.match(ev.get(`${b}/docs/flaky.html`), { kind: 'error', code: 'HTTP_503', transient: true });
  // The calendar trap ends at the page limit, with a note.
  const limit = events.find((e) => e.kind === 'limit');
  t.match(limit, { kind: 'limit', note: /max_pages 40/ });
  t.ok(site.requestsTo('/docs/calendar?month=2026-03').length === 1, 'the trap was followed until the limit');

  // Recrawl with what the first crawl returned: unchanged pages answer 304 and nothing is re-sent.
  const calendarFree: CrawlSettings = { ...settings, exclude: ['docs/calendar'] };
  const first = await crawl(calendarFree);
  const previous = new Map<string, PreviousPage>();
  for (const e of first) if (e.kind === 'page') previous.set(e.url, { url: e.url, etag: e.etag, last_modified: e.last_modified, depth: e.depth });
  t.notOk(first.some((e) => e.kind === 'limit' && /max_pages/.test(e.note)), 'without the trap the crawl completes');
  site.resetLog();
  const again = await crawl(calendarFree, previous);
  const pageEvents = again.filter((e) => e.kind === 'page');
  t.equal(pageEvents.length, previous.size, 'every previous page reported');
  t.ok(pageEvents.every((e) => e.kind === 'page' && e.status === 'not-modified'), 'all not-modified');
  const pageRequests = site.log.filter((r) => r.path.startsWith('/docs/'));
  const with304 = pageRequests.filter((r) => r.status === 304).length;
  t.equal(with304, previous.size, 'one 304 per unchanged page');
  for (const url of previous.keys()) {
    const sent = site.requestsTo(new URL(url).pathname + new URL(url).search);
    t.ok(sent.length === 1 && sent[0].headers['if-none-match'], `one conditional request for ${url}`);
  }

  // A page changes, one vanishes, one comes back as 503: fetched / gone / transient error.
  site.pages.set('/docs/guide/deep/b.html', h('Deep B, edited', ['c.html']));
  site.pages.set('/docs/guide/deep/c.html', h('Deep C, new', []));
  site.pages.delete('/docs/orphan.html');
  site.statuses.set('/docs/private/open.html', 503);
  site.resetLog();
  const changed = byUrl(await crawl(calendarFree, previous));
  t.match(changed.get(`${b}/docs/guide/deep/b.html`), { kind: 'page', status: 'fetched' });
  t.match(changed.get(`${b}/docs/guide/deep/c.html`), { kind: 'page', status: 'fetched' }, 'a link on a changed page is followed');
  t.match(changed.get(`${b}/docs/orphan.html`), { kind: 'gone', http_status: 404 });
  t.match(changed.get(`${b}/docs/private/open.html`), { kind: 'error', transient: true, code: 'HTTP_503' });
  t.match(changed.get(`${b}/docs/guide/intro.html`), { kind: 'page', status: 'not-modified' });

  // A previous page the scope no longer covers, or that robots.txt now disallows, is reported as such.
  const narrowed = byUrl(await crawl({ ...calendarFree, scope: { prefixes: [`${b}/docs/guide/`] }, start_url: `${b}/docs/guide/` }, previous));
  t.match(narrowed.get(`${b}/docs/manual.pdf`), { kind: 'error', code: 'OUT_OF_SCOPE', transient: false });
  site.robots += '\nDisallow: /docs/guide/deep/\n';
  site.resetLog();
  const disallowed = byUrl(await crawl(calendarFree, previous));
  t.match(disallowed.get(`${b}/docs/guide/deep/a.html`), { kind: 'error', code: 'ROBOTS_DISALLOWED', transient: false });
  t.equal(site.requestsTo('/docs/guide/deep/a.html').length, 0);
});

t.test('depth, byte limits, include/exclude, host scope', async (t) => {
  const site = await startSite();
  t.teardown(() => site.close());
  docsSite(site);
  const b = site.base;
  const shallow = await crawl({ start_url: `${b}/docs/guide/`, scope: 'prefix', max_depth: 1, max_pages: 100, max_bytes: 1e7 });
  t.same(shallow.filter((e) => e.kind === 'page').map((e) => e.url).sort(), [`${b}/docs/guide/`, `${b}/docs/guide/deep/a.html`, `${b}/docs/guide/intro.html`]);
  t.match(shallow.find((e) => e.kind === 'limit'), { note: /deeper than max_depth 1/ });
  t.equal(site.requestsTo('/docs/guide/deep/b.html').length, 0);

  const bytes = await crawl({ start_url: `${b}/docs/`, scope: 'prefix', max_depth: 5, max_pages: 100, max_bytes: 1 }, undefined, { concurrency: 1 });
  t.equal(bytes.filter((e) => e.kind === 'page').length, 1);
  t.match(bytes.at(-1), { kind: 'limit', note: /max_bytes 1/ });

  const only = await crawl({ start_url: `${b}/docs/`, scope: 'prefix', max_depth: 5, max_pages: 100, max_bytes: 1e7, include: ['/docs/guide/**'], exclude: ['**/deep/b.html'] });
  const got = only.filter((e) => e.kind === 'page').map((e) => e.url).sort();
  t.same(got, [`${b}/docs/`, `${b}/docs/guide/`, `${b}/docs/guide/deep/a.html`, `${b}/docs/guide/intro.html`], 'the start page is read for links even outside include');

  const host = await crawl({ start_url: `${b}/docs/`, scope: 'host', max_depth: 2, max_pages: 100, max_bytes: 1e7, exclude: ['docs/calendar'] });
  t.match(byUrl(host).get(`${b}/docs/leave`), { kind: 'page', final_url: `${b}/blog/outside.html` }, 'host scope: the redirect stays in scope');

  await t.rejects(crawl({ start_url: 'ftp://x', scope: 'host', max_depth: 1, max_pages: 1, max_bytes: 1 }), { code: 'VALIDATION_ERROR' });
  await t.rejects(crawl({ start_url: `${b}/`, scope: 'host', max_depth: 1, max_pages: 1, max_bytes: 1, include: ['{'.repeat(300)] }), { code: 'VALIDATION_ERROR' });
});

t.test('per-host concurrency and cancellation', async (t) => {
  const site = await startSite();
  t.teardown(() => site.close());
  const links = Array.from({ length: 30 }, (_, i) => `/p/${i}.html`);
  site.pages.set('/p/', h('Index', links));
  for (const l of links) site.pages.set(l, h(l, []));
  site.holdMs = 20;
  await crawl({ start_url: `${site.base}/p/`, scope: 'prefix', max_depth: 1, max_pages: 100, max_bytes: 1e7 }, undefined, { concurrency: 2 });
  t.ok(site.maxInFlight <= 2, `at most 2 requests in flight (saw ${site.maxInFlight})`);
  site.resetLog();
  await crawl({ start_url: `${site.base}/p/`, scope: 'prefix', max_depth: 1, max_pages: 100, max_bytes: 1e7 }, undefined, { concurrency: 5 });
  t.ok(site.maxInFlight <= 2, 'a larger concurrency is clamped to 2');

  site.resetLog();
  const ac = new AbortController();
  const seen: CrawlEvent[] = [];
  for await (const ev of crawlSite({ start_url: `${site.base}/p/`, scope: 'prefix', max_depth: 1, max_pages: 100, max_bytes: 1e7 }, { previous: new Map(), fetch: loopbackFetch, signal: ac.signal, userAgent: UA, delayMs: 0, concurrency: 1 })) {
    seen.push(ev);
    if (seen.length === 3) ac.abort();
  }
  t.equal(seen.length, 3, 'no events after the abort');
  const sent = site.log.length;
  t.ok(sent < 20, `the crawl stopped (requests sent: ${sent})`);
});
