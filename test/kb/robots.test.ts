/**
 * robots.txt rules (src/kb/sources/robots.ts) as RFC 9309 reads them: group choice by user agent,
 * longest match with Allow winning ties, `*` and `$`, Crawl-delay and Sitemap lines, and hostile
 * patterns answered in linear time. The crawler's handling of a missing or failing robots.txt is
 * tested against a loopback origin in site-crawler-robots.test.ts.
 */
import t from 'tap';
import { parseRobots } from '../../src/kb/sources/robots.ts';

const UA = 'RagDocBot/1.0 (+https://example.org/bot)';

t.test('the group of the most specific matching user agent is obeyed, else *', async (t) => {
  const txt = [
    'User-agent: *',
    'Disallow: /private/',
    '',
    'User-agent: ragdoc',
    'Disallow: /short-prefix-group/',
    '',
    'User-agent: RagDocBot',
    'Disallow: /bot-only/',
    '',
    'User-agent: OtherBot',
    'Disallow: /',
  ].join('\n');
  const r = parseRobots(txt, UA);
  t.notOk(r.allowed('/bot-only/page.html'));
  t.ok(r.allowed('/private/page.html'), 'the * group does not apply once a named group matches');
  t.ok(r.allowed('/short-prefix-group/x'), 'the longer agent name wins over a shorter prefix');
  const other = parseRobots(txt, 'SomeCrawler/2');
  t.notOk(other.allowed('/private/a'), 'no named group: *');
  t.ok(other.allowed('/bot-only/a'));
  t.ok(parseRobots('User-agent: OtherBot\nDisallow: /\n', UA).allowed('/anything'), 'no group at all: allowed');
});

t.test('several user-agent lines share a group; groups naming the same agent merge', async (t) => {
  const r = parseRobots('User-agent: a\nUser-agent: ragdocbot\nDisallow: /x/\n\nUser-agent: RAGDOCBOT\nDisallow: /y/\n', UA);
  t.notOk(r.allowed('/x/1'));
  t.notOk(r.allowed('/y/1'));
  t.ok(r.allowed('/z/1'));
});

t.test('longest match wins; Allow wins a tie; empty Disallow allows', async (t) => {
  const r = parseRobots(
    ['User-agent: *', 'Disallow: /docs/private/', 'Allow: /docs/private/open.html', 'Disallow: /tie', 'Allow: /tie', 'Disallow:'].join('\n'),
    UA,
  );
  t.notOk(r.allowed('/docs/private/secret.html'));
  t.ok(r.allowed('/docs/private/open.html'));
  t.ok(r.allowed('/tie/x'));
  t.ok(r.allowed('/docs/public.html'));
  const all = parseRobots('User-agent: *\nDisallow: /\nAllow: /docs/\n', UA);
  t.ok(all.allowed('/docs/a'));
  t.notOk(all.allowed('/blog/a'));
});

t.test('wildcards * and the end anchor $', async (t) => {
  const r = parseRobots(['User-agent: *', 'Disallow: /*.cgi$', 'Disallow: /*?session=', 'Disallow: /a*/b*/c', 'Allow: /ok$'].join('\n'), UA);
  t.notOk(r.allowed('/docs/run.cgi'));
  t.ok(r.allowed('/docs/run.cgi?x=1'), '$ anchors the end');
  t.ok(r.allowed('/docs/run.cgix'));
  t.notOk(r.allowed('/list?session=1'));
  t.notOk(r.allowed('/a1/b2/c3'));
  t.ok(r.allowed('/a1/c3/b2'));
  const exact = parseRobots('User-agent: *\nDisallow: /\nAllow: /ok$\n', UA);
  t.ok(exact.allowed('/ok'));
  t.notOk(exact.allowed('/ok/more'));
});

t.test('percent escapes compare equal however they are written', async (t) => {
  const r = parseRobots('User-agent: *\nDisallow: /%7euser/\nDisallow: /caf\u00e9/\n', UA);
  t.notOk(r.allowed('/~user/page'));
  t.notOk(r.allowed('/caf%C3%A9/menu'), 'a non-ASCII pattern matches its UTF-8 escapes');
});

t.test('Crawl-delay, Sitemap lines, comments, CRLF, rules outside any group', async (t) => {
  const r = parseRobots('Disallow: /ignored\r\nSitemap: https://x.org/sitemap.xml\r\nUser-agent: * # everyone\r\nCrawl-delay: 2.5\r\nDisallow: /tmp # scratch\r\n', UA);
  t.equal(r.crawlDelaySeconds, 2.5);
  t.same(r.sitemaps, ['https://x.org/sitemap.xml']);
  t.ok(r.allowed('/ignored'), 'a rule before any User-agent line belongs to no group');
  t.notOk(r.allowed('/tmp/x'));
});

t.test('a hostile pattern is matched without backtracking', async (t) => {
  const pattern = `/${'*a'.repeat(500)}b$`;
  const r = parseRobots(`User-agent: *\nDisallow: ${pattern}\n`, UA);
  // A backtracking RegExp of this pattern never finishes on this path; the piecewise match is linear.
  t.ok(r.allowed(`/${'a'.repeat(5000)}`));
  t.notOk(r.allowed(`/${'a'.repeat(600)}b`));
});
