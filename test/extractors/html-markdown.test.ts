/** The DOM -> Markdown walk and the pipe-table renderer shared by the HTML and DOCX extractors. */
import t from 'tap';
import { JSDOM } from 'jsdom';
import { sectionsByHeadings, walkToMarkdown } from '../../src/extractors/shared/html-markdown.ts';
import { escapeCell, toPipeTable } from '../../src/extractors/shared/markdown-table.ts';

const walk = (html: string, opts = {}) => {
  const dom = new JSDOM(`<body>${html}</body>`);
  try {
    return walkToMarkdown(dom.window.document.body, opts);
  } finally {
    dom.window.close();
  }
};

t.test('toPipeTable: header, padding of ragged rows, escaping, limits', async (t) => {
  t.equal(toPipeTable([]), '');
  t.equal(toPipeTable([['a', 'b'], ['1']]), '| a | b |\n| --- | --- |\n| 1 |  |');
  t.equal(escapeCell('x | y\nz \\ w'), 'x \\| y z \\\\ w');
  t.equal(escapeCell(null), '');
  t.equal(toPipeTable([['1', '2']], { header: ['A', 'B'] }), '| A | B |\n| --- | --- |\n| 1 | 2 |');
  const rows = [['h'], ...Array.from({ length: 30 }, (_, i) => [`r${i}`])];
  t.match(toPipeTable(rows, { maxRows: 20 }), /\| r19 \|\n… 10 more rows$/);
  const capped = toPipeTable(rows, { maxChars: 60 });
  t.ok(capped.split('\n').slice(0, -1).join('\n').length <= 60);
  t.match(capped, /more rows$/);
});

t.test('walk: headings, paragraphs, breaks, ordered lists with start, code, quotes', async (t) => {
  const r = walk(
    '<h3>Title</h3><p>One<br>two</p><ol start="4"><li>four<ol><li>nested</li></ol></li><li>five</li></ol>' +
      '<pre>  code\n  block</pre><blockquote><p>quoted</p></blockquote><p>use <code>x()</code> now</p><hr>',
  );
  t.equal(
    r.markdown,
    '### Title\n\nOne\ntwo\n\n4. four\n   1. nested\n5. five\n\n```\n  code\n  block\n```\n\n> quoted\n\nuse `x()` now\n\n---',
  );
  t.equal(r.headings, 1);
});

t.test('walk: colspan and rowspan spread; empty columns dropped; captions kept', async (t) => {
  const r = walk(
    '<table><caption>Birds</caption><tr><th>A</th><th colspan="2">B</th><th></th></tr>' +
      '<tr><td rowspan="2">x</td><td>1</td><td>2</td><td></td></tr><tr><td>3</td><td>4</td><td></td></tr></table>',
  );
  t.same(r.tables[0].rows, [['A', 'B', 'B'], ['x', '1', '2'], ['x', '3', '4']]);
  t.equal(r.markdown, 'Birds\n\n| A | B | B |\n| --- | --- | --- |\n| x | 1 | 2 |\n| x | 3 | 4 |');
});

t.test('walk: links collected (absolute only) and optionally inlined', async (t) => {
  const html = '<p><a href="https://a.example/x">A</a> <a href="/rel">R</a> <a href="#top">T</a> <a href="javascript:alert(1)">J</a></p>';
  const plain = walk(html, { collectLinks: true });
  t.equal(plain.markdown, 'A R T J');
  t.same(plain.links.map((l) => l.href), ['https://a.example/x']);
  const based = walk(html, { collectLinks: true, baseUrl: 'https://b.example/dir/' });
  t.same(based.links.map((l) => l.href), ['https://a.example/x', 'https://b.example/rel']);
  const inline = walk(html, { inlineLinks: true, baseUrl: 'https://b.example/' });
  t.equal(inline.markdown, '[A](https://a.example/x) [R](https://b.example/rel) T J');
});

t.test('sectionsByHeadings splits before headings up to the level', async (t) => {
  const md = 'intro\n\n# A\n\ntext\n\n### deep\n\n## B\n\nmore';
  const s = sectionsByHeadings(md, 2);
  t.same(s.map((x) => [x.label, md.slice(x.start, x.end)]), [
    [undefined, 'intro\n\n'],
    ['A', '# A\n\ntext\n\n### deep\n\n'],
    ['B', '## B\n\nmore'],
  ]);
  t.same(sectionsByHeadings('', 2), []);
});
