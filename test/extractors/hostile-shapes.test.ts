/**
 * Hostile shapes for the text-like extractors, each generated here at a size that shows the bound:
 * the answer, the flags and the content are asserted (timing lives in scripts/bench/linearity.bench.ts).
 */
import t from 'tap';
import { parseHTML } from 'linkedom';
import { extractHtml } from '../../src/extractors/html/html.ts';
import { boundHtml } from '../../src/extractors/html/html-bounds.ts';
import { stripScriptsAndStyles } from '../../src/extractors/html/html-scan.ts';
import { WALK_MAX_DEPTH, walkToMarkdown } from '../../src/extractors/shared/html-markdown.ts';
import { extractCsv } from '../../src/extractors/csv/csv.ts';
import { extractText } from '../../src/extractors/text/text.ts';
import { extractUrls, findUrls, trimUrl, type UrlStats } from '../../src/extractors/shared/urls.ts';
import { toPipeTable } from '../../src/extractors/shared/markdown-table.ts';
import { CSV_MAX_FIELD_CHARS, HTML_MAX_DEPTH, HTML_MAX_LINKS, HTML_MAX_OPEN_FORMATTING } from '../../src/extractors/shared/limits.ts';
import type { ExtractInput } from '../../src/extractors/shared/types.ts';
import { buildTestApp } from '../helper.ts';

const signal = new AbortController().signal;
const input = (s: string | Buffer, extra: Partial<ExtractInput> = {}): ExtractInput => ({
  bytes: Buffer.isBuffer(s) ? s : Buffer.from(s),
  signal,
  ...extra,
});
const page = (body: string) => `<!doctype html><html><head><title>T</title></head><body>${body}</body></html>`;

t.test('8,000 unclosed <a>: every link text kept, links capped with the full count', async (t) => {
  const body = Array.from({ length: 8000 }, (_, i) => `<a href="/p${i}">link ${i}`).join('');
  const doc = await extractHtml(input(page(body)), { baseUrl: 'https://example.com/' });
  t.match(doc.content, /link 0link 1link 2/);
  t.match(doc.content, /link 7999/);
  t.equal(doc.urls.length, HTML_MAX_LINKS);
  t.equal(doc.urls[0]!.url, 'https://example.com/p0');
  t.equal(doc.urls[0]!.context, 'link 0');
  t.equal(doc.metadata.link_total, 8000);
  t.equal(doc.metadata.links_truncated, true);
  // 8,000 children under <body> is past Readability's child budget: the plain body walk is used.
  t.equal(doc.metadata.extraction_method, 'body');
});

t.test('100,000-deep nesting is flattened at HTML_MAX_DEPTH, its text kept', async (t) => {
  const n = 100_000;
  const html = page('<div>'.repeat(n) + 'deep text' + '</div>'.repeat(n) + '<p>after</p>');
  const doc = await extractHtml(input(html));
  t.match(doc.content, /deep text/);
  t.match(doc.content, /after/);
  t.ok((doc.metadata.flattened_elements as number) >= n - HTML_MAX_DEPTH, 'the start tags past the depth are counted');

  // Past the depth each <li> closes the one before: thousands of items 512 deep. jsdom pays for
  // every ancestor on insertion, so such a page is read as plain text.
  const lists = page('<ul><li>'.repeat(20_000) + 'leaf item' + '</li></ul>'.repeat(20_000));
  const listDoc = await extractHtml(input(lists));
  t.equal(listDoc.metadata.extraction_method, 'plain_text');
  t.match((listDoc.metadata.notes as string[])[0], /deep on average, past the DOM budget of HTML_MAX_ELEMENTS \(100000\) x 32 levels/);
  t.match(listDoc.content, /- leaf item/);
  const shallow = await extractHtml(input(page('<ul><li>'.repeat(300) + 'leaf item' + '</li></ul>'.repeat(300))));
  t.not(shallow.metadata.extraction_method, 'plain_text');
  t.match(shallow.content, /- leaf item/);
});

t.test('the DOM walk reads a subtree past WALK_MAX_DEPTH flat (linkedom, as DOCX uses, has no depth cap)', async (t) => {
  const n = WALK_MAX_DEPTH * 3;
  const { document } = parseHTML(
    `<!doctype html><html><body><p>top</p>${'<div><span>'.repeat(n)}bottom<br>line two<ul><li>item</li></ul>${'</span></div>'.repeat(n)}</body></html>`,
  );
  const walked = walkToMarkdown(document.body as unknown as Element);
  t.equal(walked.markdown, 'top\n\nbottom\nline two item');
});

t.test('unclosed formatting elements are bounded before the parser re-opens them', async (t) => {
  const bomb = (n: number) => page(Array.from({ length: n }, (_, i) => `<b class="c${i}"><p>para ${i}`).join(''));
  const bounded = boundHtml(bomb(400));
  t.equal(bounded.shape.formattingDropped, 400 - HTML_MAX_OPEN_FORMATTING);
  t.ok(bounded.shape.elements <= 400 * (HTML_MAX_OPEN_FORMATTING + 2), 'clones bounded by the open-formatting cap');

  // The paragraphs sit inside the first <b> (an inline element), so the walk reads them inline.
  const small = await extractHtml(input(bomb(400)));
  t.match(small.content, /para 0 para 1 para 2 /);
  t.match(small.content, /para 399$/);
  t.equal(small.metadata.dropped_formatting_elements, 400 - HTML_MAX_OPEN_FORMATTING);

  // 12,000 paragraphs would re-open 10 elements each: past HTML_MAX_ELEMENTS, read as plain text.
  const big = await extractHtml(input(bomb(12_000)));
  t.equal(big.metadata.extraction_method, 'plain_text');
  t.equal(big.metadata.truncated, true);
  t.match((big.metadata.notes as string[])[0], /HTML_MAX_ELEMENTS \(100000\)/);
  t.match(big.content, /^# T\n\npara 0\n\npara 1\n\n/);
  t.match(big.content, /para 11999$/);
});

t.test('a link-heavy page past the element budget: plain text, links capped and counted', async (t) => {
  const body = Array.from({ length: 6000 }, (_, i) => `<p><a href="https://example.com/p${i}">link &amp; ${i}</a></p>`).join('');
  const html = page(`<nav><a href="/home">Home</a></nav><h2>Links</h2>${body}`);
  // A budget of 10,000 elements (HTML_MAX_ELEMENTS) stands in for 300,000 links at the default.
  const doc = await extractHtml(input(html, { limits: { htmlMaxElements: 10_000 } }), { baseUrl: 'https://example.com/' });
  t.equal(doc.metadata.extraction_method, 'plain_text');
  t.equal(doc.urls.length, HTML_MAX_LINKS);
  t.same(doc.urls[0], { url: 'https://example.com/home', type: 'navigation', context: 'Home' });
  t.same(doc.urls[1], { url: 'https://example.com/p0', type: 'general', context: 'link & 0' });
  t.equal(doc.metadata.link_total, 6001);
  t.equal(doc.metadata.links_truncated, true);
  t.match((doc.metadata.notes as string[])[0], /more than HTML_MAX_ELEMENTS \(10000\)/);
  t.match(doc.content, /Home\n\n## Links\n\nlink & 0\n\nlink & 1\n\n/);
  t.match(doc.content, /link & 5999$/);

  // At the default budget the same page gets a DOM; its links are capped and counted the same way.
  const dom = await extractHtml(input(html), { baseUrl: 'https://example.com/' });
  t.not(dom.metadata.extraction_method, 'plain_text');
  t.notOk(dom.metadata.truncated);
  t.equal(dom.urls.length, HTML_MAX_LINKS);
  t.equal(dom.metadata.link_total, 6001);
  t.match(dom.content, /link & 5999$/);
});

t.test('unclosed <script> tags are stripped exactly like the regex, without its quadratic retries', async (t) => {
  const STRIP_RE = /<(script|style)\b[^>]*>[\s\S]*?<\/\1\s*>/gi;
  const mixed =
    '<p>a</p><script>x</script><SCRIPT type=x>y</script ><style>s</STYLE><scripts>keep</scripts><script>open' +
    '<style>inner</style><p>b</p><script-x>z</script><style>unclosed';
  t.equal(stripScriptsAndStyles(mixed), mixed.replace(STRIP_RE, ''));
  const hostile = '<p>text</p>' + '<script>'.repeat(50_000) + '<style>'.repeat(50_000);
  t.equal(stripScriptsAndStyles(hostile), hostile);
  const doc = await extractHtml(input(page(hostile)));
  t.match(doc.content, /text/);
});

t.test('ordinary pages pass the pre-pass unchanged (implied end tags modelled, not flattened)', async (t) => {
  const rows = Array.from({ length: 600 }, (_, i) => `<tr><td>${i}<td><font>cell ${i}`).join('');
  const items = '<ul>' + Array.from({ length: 700 }, (_, i) => `<li>item ${i}`).join('') + '</ul>';
  const paras = Array.from({ length: 700 }, (_, i) => `<p>para <b>${i}</b>`).join('');
  const defs = '<dl>' + Array.from({ length: 600 }, (_, i) => `<dt>t${i}<dd>d${i}`).join('') + '</dl>';
  const html = page(`<table>${rows}</table>${items}${paras}${defs}<select>${'<option>o'.repeat(600)}</select>`);
  const bounded = boundHtml(html);
  t.equal(bounded.html, html);
  t.equal(bounded.shape.flattened, 0);
  t.equal(bounded.shape.formattingDropped, 0);
  t.ok(bounded.shape.maxDepth < 12, `depth ${bounded.shape.maxDepth}`);
});

t.test('a colspan/rowspan bomb is capped to a bounded grid', async (t) => {
  const cells = '<td colspan="1000" rowspan="1000">x</td>'.repeat(50);
  const doc = await extractHtml(input(page(`<table>${'<tr><td>h1</td><td>h2</td></tr>'}${`<tr>${cells}</tr>`.repeat(20)}</table>`)));
  const table = doc.tables[0]!;
  t.ok((table.metadata.columns as number) <= 1000);
  t.ok(table.rows!.length <= 21);
});

t.test('toPipeTable renders 200,000 rows (no argument spread over rows)', async (t) => {
  const rows = Array.from({ length: 200_000 }, (_, i) => [`r${i}`]);
  const md = toPipeTable(rows, { maxRows: 1 });
  t.equal(md, '| r0 |\n| --- |\n| r1 |\n… 199998 more rows');
});

t.test('CSV: one 200 KB line is cut to CSV_MAX_COLUMNS columns and flagged', async (t) => {
  const doc = await extractCsv(input('abc,def,'.repeat(25_000), { filename: 'line.csv' }));
  const table = doc.tables[0]!;
  t.equal(doc.metadata.columns, 2000);
  t.equal(table.headers!.length, 2000);
  t.same(table.headers!.slice(0, 4), ['abc', 'def', 'abc (2)', 'def (2)']);
  t.equal(doc.metadata.columns_truncated, true);
  t.equal(doc.metadata.widest_row_columns, 50_001);
  t.equal(doc.metadata.truncated, true);
  t.match((doc.metadata.notes as string[]).join(' '), /first 2000 columns \(CSV_MAX_COLUMNS\); the widest row has 50001/);
  t.equal(table.metadata.columns_truncated, true);
});

t.test('CSV: 100,000 columns keep the first 2,000 with their values; the limit is configurable', async (t) => {
  const n = 100_000;
  const csv = Array.from({ length: n }, (_, i) => `c${i}`).join(',') + '\n' + Array.from({ length: n }, (_, i) => `${i}`).join(',') + '\n';
  const doc = await extractCsv(input(csv, { filename: 'wide.csv' }));
  const table = doc.tables[0]!;
  t.equal(table.headers![1999], 'c1999');
  t.equal(table.rows![0]![1999], '1999');
  t.equal(doc.metadata.widest_row_columns, n);
  const raised = await extractCsv(input(csv, { filename: 'wide.csv', limits: { csvMaxColumns: 5000 } }));
  t.equal(raised.tables[0]!.headers!.length, 5000);
});

t.test('CSV: an unterminated quote is one field, cut to CSV_MAX_FIELD_CHARS and flagged', async (t) => {
  const doc = await extractCsv(input('name,notes\nada,"' + 'x,y\n'.repeat(100_000), { filename: 'q.csv' }));
  const table = doc.tables[0]!;
  t.same(table.headers, ['name', 'notes']);
  t.equal(table.rows!.length, 1);
  t.equal(table.rows![0]![0], 'ada');
  t.equal(String(table.rows![0]![1]).length, CSV_MAX_FIELD_CHARS);
  t.equal(doc.metadata.fields_truncated, 1);
  t.equal(doc.metadata.truncated, true);
});

t.test('text: TEXT_MAX_CHARS cuts by characters in any encoding, before decoding the rest', async (t) => {
  for (const [label, unit] of [['ascii', 'abcd'], ['latin', 'é'], ['cjk', '日本'], ['emoji', '😀']] as const) {
    const doc = await extractText(input(unit.repeat(5000), { filename: 'a.txt', limits: { textMaxChars: 1000 } }));
    t.equal(doc.content.length, 1000, label);
    t.equal(doc.metadata.encoding, 'utf-8', label);
    t.equal(doc.metadata.truncated, true, label);
    t.match((doc.metadata.notes as string[])[0], /first 1000 characters were read \(TEXT_MAX_CHARS\)/);
  }
  const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('hello world '.repeat(500), 'utf16le')]);
  const doc16 = await extractText(input(utf16, { filename: 'u.txt', limits: { textMaxChars: 1000 } }));
  t.equal(doc16.metadata.encoding, 'utf-16le');
  t.equal(doc16.content, 'hello world '.repeat(500).slice(0, 1000).trimEnd());
  const under = await extractText(input('short text', { filename: 'a.txt', limits: { textMaxChars: 1000 } }));
  t.notOk(under.metadata.truncated);
  t.equal(under.metadata.line_count, 1);
  t.equal(under.metadata.word_count, 2);
});

t.test('URLs: a long run of closers trims in linear time; the full count is reported', async (t) => {
  t.equal(trimUrl('https://x.io/a' + ')'.repeat(200_000)), 'https://x.io/a');
  t.equal(trimUrl('https://x.io/a_(b))).'), 'https://x.io/a_(b)');
  const text = Array.from({ length: 100_000 }, (_, i) => `see https://e.com/${i} `).join('');
  t.equal(findUrls(text).length, 500);
  const stats: UrlStats = { total: 0, truncated: false };
  const urls = extractUrls({ content: text, pages: [], urls: [{ url: 'https://other.org/x', type: 'general', context: '' }] }, 500, stats);
  t.equal(urls.length, 500);
  t.equal(urls[0]!.url, 'https://other.org/x');
  t.same(stats, { total: 100_001, truncated: true });
  t.equal(findUrls('https://e.com/' + 'a'.repeat(10_000) + ' https://ok.io/b').map((u) => u.url).join(), 'https://ok.io/b');
});

t.test('process_document answers 8,000 unclosed <a> uploaded raw', async (t) => {
  const app = await buildTestApp(t);
  const body = page('<a href="https://example.com/x">'.repeat(8000) + 'end');
  const res = await app.inject({ method: 'POST', url: '/v1/documents/process', headers: { 'content-type': 'text/html' }, payload: body });
  t.equal(res.statusCode, 200, res.body.slice(0, 300));
  const json = res.json();
  t.match(json.content, /end/);
  t.same(json.urls.map((u: { url: string }) => u.url), ['https://example.com/x']);
});
