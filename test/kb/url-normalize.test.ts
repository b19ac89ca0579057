/**
 * Crawl keys (src/kb/sources/url-normalize.ts): links a server answers with the same page become
 * one URL, so a page is fetched once and session-id or tracking-parameter traps collapse.
 */
import t from 'tap';
import { globPath, normalizeUrl } from '../../src/kb/sources/url-normalize.ts';

t.test('fragments, credentials, case of scheme and host, default ports', async (t) => {
  t.equal(normalizeUrl('HTTP://Docs.Example.COM:80/a/b#section'), 'http://docs.example.com/a/b');
  t.equal(normalizeUrl('https://docs.example.com:443/a'), 'https://docs.example.com/a');
  t.equal(normalizeUrl('https://docs.example.com:8443/a'), 'https://docs.example.com:8443/a');
  t.equal(normalizeUrl('https://user:pw@docs.example.com/a'), 'https://docs.example.com/a');
  t.equal(normalizeUrl('https://docs.example.com'), 'https://docs.example.com/');
  t.equal(normalizeUrl('https://docs.example.com/A/B'), 'https://docs.example.com/A/B', 'path case is the server\'s');
});

t.test('tracking and session parameters go, the rest is sorted', async (t) => {
  t.equal(
    normalizeUrl('https://x.org/p?utm_source=a&b=2&utm_medium=mail&a=1&gclid=zz&fbclid=q&UTM_Campaign=c'),
    'https://x.org/p?a=1&b=2',
  );
  t.equal(normalizeUrl('https://x.org/p?PHPSESSID=abc&sid=1&jsessionid=9&page=2'), 'https://x.org/p?page=2');
  t.equal(normalizeUrl('https://x.org/p?utm_source=a'), 'https://x.org/p', 'no empty `?` left');
  t.equal(normalizeUrl('https://x.org/p;jsessionid=ABC123?x=1'), 'https://x.org/p?x=1', 'path session parameter');
  t.equal(normalizeUrl('https://x.org/p?z=1&a=2&z=0'), 'https://x.org/p?a=2&z=1&z=0', 'repeated names keep their order');
  t.equal(normalizeUrl('https://x.org/p?q=a%20b&r=c+d'), 'https://x.org/p?q=a%20b&r=c+d', 'the server\'s own encoding is kept');
  t.equal(normalizeUrl('https://x.org/p?&&a=1&'), 'https://x.org/p?a=1');
});

t.test('percent escapes and trailing index files', async (t) => {
  t.equal(normalizeUrl('https://x.org/%7euser/a%2fb'), 'https://x.org/~user/a%2Fb');
  t.equal(normalizeUrl('https://x.org/docs/index.html'), 'https://x.org/docs/');
  t.equal(normalizeUrl('https://x.org/docs/INDEX.HTM'), 'https://x.org/docs/');
  t.equal(normalizeUrl('https://x.org/index.php?a=1'), 'https://x.org/?a=1');
  t.equal(normalizeUrl('https://x.org/docs/reindex.html'), 'https://x.org/docs/reindex.html');
  t.equal(normalizeUrl('https://x.org/docs/'), 'https://x.org/docs/', 'a trailing slash is kept');
  t.equal(normalizeUrl('https://x.org/docs'), 'https://x.org/docs', 'and not added');
});

t.test('relative links and what is not crawlable', async (t) => {
  t.equal(normalizeUrl('../b/c.html#top', 'https://x.org/docs/a/page.html'), 'https://x.org/docs/b/c.html');
  t.equal(normalizeUrl('?page=2&utm_source=x', 'https://x.org/list'), 'https://x.org/list?page=2');
  t.equal(normalizeUrl('//cdn.x.org/a', 'https://x.org/'), 'https://cdn.x.org/a');
  t.equal(normalizeUrl('mailto:a@x.org', 'https://x.org/'), null);
  t.equal(normalizeUrl('javascript:void(0)', 'https://x.org/'), null);
  t.equal(normalizeUrl('ftp://x.org/file'), null);
  t.equal(normalizeUrl('http://[bad'), null);
});

t.test('the same page spelled many ways is one key', async (t) => {
  const spellings = [
    'https://x.org/docs/index.html',
    'https://X.org:443/docs/#intro',
    'https://x.org/docs/?utm_source=newsletter',
    'https://x.org/docs/;jsessionid=1234',
    'https://x.org/docs/index.html?fbclid=abc&gclid=def',
  ];
  t.same(new Set(spellings.map((s) => normalizeUrl(s))), new Set(['https://x.org/docs/']));
});

t.test('globPath: decoded, without the leading slash', async (t) => {
  t.equal(globPath('https://x.org/docs/a%20b.html'), 'docs/a b.html');
  t.equal(globPath('https://x.org/'), '');
  t.equal(globPath('https://x.org/%E0%A4'), '%E0%A4', 'a broken escape stays as written');
});
