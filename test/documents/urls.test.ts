import t from 'tap';
import { classifyUrl, extractUrls, findUrls, locationAt, trimUrl, urlKey } from '../../src/extractors/shared/urls.ts';
import type { PageSpan } from '../../src/extractors/shared/types.ts';

t.test('finds http(s) and www. URLs with context, trimmed of sentence punctuation', async (t) => {
  const text =
    'See https://example.com/docs/intro.html. Also visit www.example.org, or (https://en.wikipedia.org/wiki/Duck_(disambiguation)). ' +
    'The API lives at https://api.example.com/v2/users?id=7 and the logo at https://cdn.example.com/img/logo.png; ' +
    'a [markdown link](https://example.com/guide/) and "https://example.com/report.pdf".';
  const urls = findUrls(text);
  t.same(
    urls.map((u) => [u.url, u.type]),
    [
      ['https://example.com/docs/intro.html', 'navigation'],
      ['www.example.org', 'navigation'],
      ['https://en.wikipedia.org/wiki/Duck_(disambiguation)', 'navigation'],
      ['https://api.example.com/v2/users?id=7', 'api_endpoint'],
      ['https://cdn.example.com/img/logo.png', 'image'],
      ['https://example.com/guide/', 'navigation'],
      ['https://example.com/report.pdf', 'general'],
    ],
  );
  const first = urls[0]!;
  t.ok(first.context.startsWith('See https://example.com/docs/intro.html. Also visit'));
  t.ok(first.context.length <= 100 + first.url.length + 100);
  const mid = urls[3]!;
  const at = text.indexOf(mid.url);
  t.equal(mid.context, text.slice(at - 100, at + mid.url.length + 100), 'exactly 100 characters either side');
});

t.test('de-duplicates by host case, scheme and trailing slash', async (t) => {
  const urls = findUrls('https://Example.com/a/ then http://example.com/a and https://example.com/A and www.x.io then https://www.x.io');
  t.same(
    urls.map((u) => u.url),
    ['https://Example.com/a/', 'https://example.com/A', 'www.x.io'],
  );
  t.equal(urlKey('HTTPS://WWW.X.IO/'), 'www.x.io');
});

t.test('types', async (t) => {
  t.equal(classifyUrl('https://example.com/'), 'navigation');
  t.equal(classifyUrl('https://example.com/about'), 'navigation');
  t.equal(classifyUrl('https://example.com/api/items'), 'api_endpoint');
  t.equal(classifyUrl('https://example.com/graphql'), 'api_endpoint');
  t.equal(classifyUrl('https://example.com/data/feed.json'), 'api_endpoint');
  t.equal(classifyUrl('https://api.github.com/repos'), 'api_endpoint');
  t.equal(classifyUrl('https://example.com/a/photo.JPG'), 'image');
  t.equal(classifyUrl('https://example.com/files/archive.zip'), 'general');
});

t.test('locations from page, slide and sheet spans', async (t) => {
  const pages: PageSpan[] = [
    { number: 1, unit: 'page', start: 0, end: 50 },
    { number: 2, unit: 'page', start: 50, end: 120 },
  ];
  t.equal(locationAt(pages, 0), 'page 1');
  t.equal(locationAt(pages, 60), 'page 2');
  t.equal(locationAt(pages, 500), undefined);
  t.equal(locationAt([{ number: 3, unit: 'slide', start: 0, end: 10 }], 5), 'slide 3');
  t.equal(locationAt([{ number: 1, unit: 'sheet', label: 'Sales', start: 0, end: 10 }], 5), 'sheet Sales');
  const content = `${'x'.repeat(60)} https://example.com/p2 `;
  t.equal(findUrls(content, pages)[0]!.location, 'page 2');
});

t.test('hyperlinks from the extractor are merged first, filled from the text', async (t) => {
  const content = '--- Slide 1 ---\nVisit https://example.com/shown for details.';
  const merged = extractUrls({
    content,
    pages: [{ number: 1, unit: 'slide', start: 0, end: content.length }],
    urls: [
      { url: 'https://hidden.example.com/target', type: 'navigation', context: 'Click here', location: 'slide 1' },
      { url: 'https://example.com/shown/', type: 'navigation', context: '' },
      { url: 'mailto:someone@example.com', type: 'general', context: '' },
    ],
  });
  t.same(
    merged.map((u) => [u.url, u.location]),
    [
      ['https://hidden.example.com/target', 'slide 1'],
      ['https://example.com/shown/', 'slide 1'],
    ],
  );
  t.match(merged[1]!.context, /Visit https:\/\/example\.com\/shown for details/);
});

t.test('bounded', async (t) => {
  const many = Array.from({ length: 800 }, (_, i) => `https://example.com/p${i}`).join(' ');
  t.equal(findUrls(many).length, 500);
  t.equal(trimUrl('https://x.io/a).'), 'https://x.io/a');
  t.equal(trimUrl('https://x.io/a_(b)'), 'https://x.io/a_(b)');
});
