/**
 * HTML extraction on generated pages: decoding, main content without boilerplate, bylines, tables
 * with rich cells, links. The real corpus pages are in test/corpus/extractors/html.test.ts.
 */
import t from 'tap';
import iconv from 'iconv-lite';
import { decodeHtml, extractHtml } from '../../src/extractors/html/html.ts';

const signal = new AbortController().signal;
const html = (s: string, contentType?: string) => extractHtml({ bytes: Buffer.from(s), contentType, signal });

const ARTICLE = `<!DOCTYPE html><html lang="en"><head><title>Herons of the North Marsh</title>
<meta name="author" content="Ada Fieldworker">
<style>body { color: red } .x::before { content: "STYLE TEXT" }</style>
<script>document.title = "SCRIPT RAN"; window.ranScript = true;</script></head>
<body><nav><a href="/home">Home</a> <a href="https://example.org/about">About us</a></nav>
<article><h1>Herons of the North Marsh</h1>
${'<p>The grey heron stands motionless in the shallows, waiting for fish to come within reach of its bill. Observers counted forty-two birds this spring, more than in any year since the survey began.</p>'.repeat(3)}
<h2>Counts by site</h2>
<table><thead><tr><th>Site</th><th>Herons</th></tr></thead>
<tbody><tr><td>North marsh</td><td>42</td></tr><tr><td>South | lagoon</td><td>13</td></tr></tbody></table>
<h2>Notes</h2><ul><li>Dawn counts<ul><li>With binoculars</li></ul></li><li>Dusk counts</li></ul>
<p>Read the <a href="protocols/heron.html">survey protocol</a> or mail <a href="mailto:team@example.org">the team</a>.</p>
<p hidden>HIDDEN TEXT</p>
</article><footer>Copyright footer</footer></body></html>`;

t.test('main content as Markdown: headings, table, nested list; scripts never run', async (t) => {
  const doc = await html(ARTICLE);
  const c = doc.content;
  t.match(c, /^# Herons of the North Marsh\n/);
  t.match(c, '\n## Counts by site\n');
  t.match(c, '| Site | Herons |\n| --- | --- |\n| North marsh | 42 |\n| South \\| lagoon | 13 |', 'pipe escaped in cells');
  t.match(c, '- Dawn counts\n  - With binoculars\n- Dusk counts');
  t.match(c, 'Read the survey protocol or mail the team.');
  t.notMatch(c, /SCRIPT RAN|STYLE TEXT|HIDDEN TEXT|color: red/);
  t.equal(doc.metadata.title, 'Herons of the North Marsh');
  t.equal(doc.metadata.author, 'Ada Fieldworker');
  t.equal(doc.metadata.lang, 'en');
  t.equal(doc.metadata.extraction_method, 'readability');
  t.equal(doc.tables.length, 1);
  t.match(doc.tables[0], { table_type: 'html', location: 'table:1', metadata: { rows: 3, columns: 2 } });
  t.same(doc.tables[0].rows, [['North marsh', '42'], ['South | lagoon', '13']]);
});

t.test('links are collected over the whole page, resolved against <base> or the page URL', async (t) => {
  const noBase = await html(ARTICLE);
  t.same(
    noBase.urls.map((u) => [u.url, u.type, u.context]),
    [
      ['https://example.org/about', 'navigation', 'About us'],
      ['mailto:team@example.org', 'general', 'the team'],
    ],
    'relative links cannot be resolved without a page URL, <base> or canonical link: left out',
  );
  const withBase = await extractHtml({ bytes: Buffer.from(ARTICLE), signal }, { baseUrl: 'https://birds.example/reports/2024/' });
  t.same(
    withBase.urls.map((u) => u.url),
    [
      'https://birds.example/home',
      'https://example.org/about',
      'https://birds.example/reports/2024/protocols/heron.html',
      'mailto:team@example.org',
    ],
  );
  const tagged = await html('<html><head><base href="https://cdn.example/docs/"></head><body><p><a href="a.html">A</a></p></body></html>');
  t.same(tagged.urls.map((u) => u.url), ['https://cdn.example/docs/a.html']);
  const canonical = await html('<html><head><link rel="canonical" href="https://site.example/a/b"></head><body><p><a href="c">C</a></p></body></html>');
  t.same(canonical.urls.map((u) => u.url), ['https://site.example/a/c'], 'canonical link as the base of a saved page');
});

t.test('charset: BOM, HTTP header, meta tag, cp1252 fallback', async (t) => {
  const cafe = Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x20, 0x80]); // "café €" in cp1252
  const page = (head: string) => Buffer.concat([Buffer.from(`<html><head>${head}</head><body><p>`), cafe, Buffer.from('</p></body></html>')]);
  t.match(decodeHtml(page('')).text, 'café €', 'invalid UTF-8 falls back to cp1252');
  t.match(decodeHtml(page('<meta charset="iso-8859-1">')).text, 'café €', 'latin-1 label read as windows-1252');
  t.match(decodeHtml(page('<meta http-equiv="Content-Type" content="text/html; charset=windows-1252">')).text, 'café €');
  const utf8 = Buffer.from('<html><head><meta charset="utf-8"></head><body><p>naïve</p></body></html>');
  t.match(decodeHtml(utf8).text, 'naïve');
  const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('<p>Grüße</p>')]);
  t.match(decodeHtml(bom, 'text/html; charset=iso-8859-1').text, 'Grüße', 'BOM wins over the header');
  const koi = Buffer.from([0x3c, 0x70, 0x3e, 0xf0, 0xd2, 0xc9, 0xd7, 0xc5, 0xd4]); // "<p>Привет" in KOI8-R
  t.match(decodeHtml(koi, 'text/html; charset=koi8-r').text, 'Привет', 'HTTP charset honoured');
});

t.test('body fallback when readability finds no article; empty and odd input never crash', async (t) => {
  const short = await html('<html><body><div>Just a short note.</div><div>Second line.</div></body></html>');
  t.match(short.content, 'Just a short note.\n\nSecond line.');
  const empty = await html('');
  t.equal(empty.content, '');
  const garbage = await html('<<<>>> <table><tr><td>unclosed');
  t.match(garbage.content, 'unclosed');
  const layout = await html('<table><tr><td><h2>Menu</h2><p>Layout cell text.</p></td></tr></table>');
  t.equal(layout.tables.length, 0, 'one-cell layout tables are not data tables');
  t.match(layout.content, '## Menu\n\nLayout cell text.');
});

t.test('a legacy page without any charset declaration is read as windows-1252 end to end', async (t) => {
  const page = '<html><head><title>Menu</title></head><body><h2>My First Heading</h2><p>My first paragraph.</p>' +
    '<p>Some text with CP1252: très, niño, schöne Grüße, 5 €, “quotes”.</p></body></html>';
  const doc = await extractHtml({ bytes: iconv.encode(page, 'win1252'), filename: 'legacy.html', signal });
  t.equal(doc.metadata.encoding, 'windows-1252');
  t.equal(doc.content, '# Menu\n\n## My First Heading\n\nMy first paragraph.\n\nSome text with CP1252: très, niño, schöne Grüße, 5 €, “quotes”.');
  t.notMatch(doc.content, '\uFFFD');
});

t.test('a blog page: byline from schema.org author markup; nav, header, footer and scripts dropped', async (t) => {
  const para = 'Counting herons at dawn gives higher numbers than counting at noon, because the birds feed in the shallows before the heat drives them into the reeds.';
  const page = `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Does Temperature Matter? | Field Blog</title>
<script>var config = { theme: "dark" };</script><style>.menu { color: red }</style></head><body>
<nav><a href="/">Home</a> <a href="/blog">Blog</a> <a href="/docs">Docs</a></nav>
<header><div class="site-name">Field Blog site header</div></header>
<main><article><header><h1>Does Temperature Matter?</h1>
<div itemprop="author" itemscope itemtype="https://schema.org/Person"><a href="https://example.org/ada"><span itemprop="name">Ada Fieldworker</span></a></div></header>
${[1, 2, 3, 4].map((n) => `<p>${para} Season ${n} confirmed it.</p>`).join('\n')}
</article></main>
<footer>Copyright 2024 Field Blog. Built with a static site generator.</footer><script>console.log("footer script")</script></body></html>`;
  const doc = await html(page);
  t.equal(
    doc.content,
    ['# Does Temperature Matter? | Field Blog', ...[1, 2, 3, 4].map((n) => `${para} Season ${n} confirmed it.`)].join('\n\n'),
    'the page title leads; the article header that repeats it goes with the byline',
  );
  t.match(doc.metadata, { author: 'Ada Fieldworker', extraction_method: 'readability', lang: 'en' });
  t.notMatch(doc.content, /Home|Docs|site header|Copyright|static site|config|footer script|color: red/);
});

t.test('rich table cells: lists joined, line breaks as spaces, empty cells kept, colspan spread, nested table flattened', async (t) => {
  const page = `<!DOCTYPE html><html lang="en"><head><meta charset="UTF-8"><title>Rich cells</title></head><body>
<h1>Rich Table Cells</h1>
<table><caption>Basic duck facts</caption><thead><tr><th>Name</th><th>Habitat</th><th>Comment</th></tr></thead><tbody>
<tr><td>Wood Duck</td><td>&nbsp;</td><td>Often seen near ponds.</td></tr>
<tr><td>Goose</td><td>Water &amp; wetlands</td><td><strong>Large</strong>, <em>loud</em></td></tr>
<tr><td>Teal</td><td><ul><li>Pond</li><li>Marsh</li><li>Riverbank</li></ul></td><td><ol><li>Fly south in winter</li><li>Build nest on ground</li></ol></td></tr>
</tbody></table>
<table><thead><tr><th>Genus</th><th>Species</th></tr></thead><tbody>
<tr><td>Aythya<br><small>(Diving ducks)</small></td><td>Hawser, Common Pochard</td></tr></tbody></table>
<table><thead><tr><th colspan="2">Action</th></tr></thead><tbody>
<tr><td><strong>Swim</strong></td><td>Glide on H<sub>2</sub>O.</td></tr>
<tr><td>Quack</td><td><table><thead><tr><th>Type</th><th>Sound</th></tr></thead><tbody><tr><td>Short</td><td>quak</td></tr><tr><td>Long</td><td>quaaack</td></tr></tbody></table></td></tr>
</tbody></table></body></html>`;
  const doc = await html(page);
  t.equal(
    doc.content,
    [
      '# Rich cells',
      '# Rich Table Cells',
      'Basic duck facts',
      '| Name | Habitat | Comment |\n| --- | --- | --- |\n| Wood Duck |  | Often seen near ponds. |\n| Goose | Water & wetlands | Large, loud |\n| Teal | Pond; Marsh; Riverbank | Fly south in winter; Build nest on ground |',
      '| Genus | Species |\n| --- | --- |\n| Aythya (Diving ducks) | Hawser, Common Pochard |',
      '| Action | Action |\n| --- | --- |\n| Swim | Glide on H2O. |\n| Quack | Type Sound Short quak Long quaaack |',
    ].join('\n\n'),
  );
  t.equal(doc.tables.length, 3, 'a table nested in a cell is part of that cell, not a table of its own');
  t.same(doc.tables[0].rows?.[2], ['Teal', 'Pond; Marsh; Riverbank', 'Fly south in winter; Build nest on ground']);
  t.same(doc.tables[2].headers, ['Action', 'Action']);
});
