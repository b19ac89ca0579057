/** HTML extraction: decoding, main content, tables, links; then the real pages of the corpus. */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { decodeHtml, extractHtml } from '../../src/extractors/html.ts';
import { wordRecall } from './word-recall.ts';

const corpus = path.resolve(import.meta.dirname, '../../../shared/corpus/html');
const signal = new AbortController().signal;
const html = (s: string, contentType?: string) => extractHtml({ bytes: Buffer.from(s), contentType, signal });
const read = (name: string) => extractHtml({ bytes: fs.readFileSync(path.join(corpus, name)), filename: name, signal });

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

if (!fs.existsSync(corpus)) {
  t.comment(`corpus folder ${corpus} absent: corpus checks skipped`);
} else {
  const expectedJson = (f: string) =>
    JSON.parse(fs.readFileSync(path.join(corpus, `${f}.expected.json`), 'utf8')) as { must_include: string[]; must_not_include: string[] };

  t.test('test_wikipedia.html: article text in, boilerplate out', async (t) => {
    const doc = await read('test_wikipedia.html');
    const exp = expectedJson('test_wikipedia.html');
    // markitdown keeps Markdown links; we keep anchor text (targets go to urls[]): compare words.
    for (const s of exp.must_include) t.equal(wordRecall(s, doc.content).recall, 1, `includes the words of ${JSON.stringify(s.slice(0, 50))}`);
    t.match(doc.content, 'Microsoft entered the operating system (OS) business in 1980 with its own version of Unix');
    for (const s of exp.must_not_include) t.notOk(doc.content.includes(s), `excludes ${JSON.stringify(s)}`);
    t.equal(doc.metadata.extraction_method, 'readability');
    t.ok(doc.urls.some((u) => u.url === 'https://en.wikipedia.org/wiki/Bill_Gates'), 'relative links resolved against the canonical page URL');
  });

  t.test('test_blog.html: must-include sentences and byline', async (t) => {
    const doc = await read('test_blog.html');
    for (const s of expectedJson('test_blog.html').must_include) t.ok(doc.content.includes(s), `includes ${JSON.stringify(s.slice(0, 50))}`);
    t.equal(doc.metadata.author, 'Chi Wang');
  });

  t.test('fake-html-cp1252.html: decoded as windows-1252', async (t) => {
    const doc = await read('fake-html-cp1252.html');
    t.equal(doc.metadata.encoding, 'windows-1252');
    for (const s of ['très', 'niño', '€', 'schöne']) t.match(doc.content, s);
    t.notMatch(doc.content, '\uFFFD');
  });

  t.test('html_rich_table_cells.html: tables with lists and nested tables in cells', async (t) => {
    const doc = await read('html_rich_table_cells.html');
    t.equal(doc.tables.length, 4);
    t.match(doc.content, '| Teal | Pond; Marsh; Riverbank | Fly south in winter; Build nest on ground |');
    t.match(doc.content, '| Aythya (Diving ducks) | Hawser, Common Pochard |');
  });

  t.test('example-with-scripts.html: scripts and styles dropped', async (t) => {
    const doc = await read('example-with-scripts.html');
    t.notMatch(doc.content, /function\s*\(|var \w+ =|\{\s*[\w-]+\s*:/, 'no script or CSS text');
    t.ok(doc.content.length > 5000);
  });

  t.test('every corpus file yields content or a coded error; recall against ground truth', async (t) => {
    for (const f of fs.readdirSync(corpus).sort()) {
      if (f.includes('.expected.')) continue;
      const started = Date.now();
      try {
        const doc = await read(f);
        t.ok(doc.content.trim().length > 0, `${f}: content (${Date.now() - started} ms)`);
        const expected = path.join(corpus, `${f}.expected.md`);
        if (fs.existsSync(expected)) {
          const r = wordRecall(fs.readFileSync(expected, 'utf8'), doc.content);
          t.comment(`${f}: word recall ${r.recall.toFixed(3)} (${r.found}/${r.total})`);
          // wiki_duck's ground truth keeps the whole page (language list, navigation); we keep the article.
          t.ok(r.recall >= (f === 'wiki_duck.html' ? 0.8 : 0.95), `${f}: recall ${r.recall.toFixed(3)}`);
        }
      } catch (err) {
        t.ok((err as { code?: string }).code, `${f}: coded error ${(err as Error).message}`);
      }
    }
  });
}
