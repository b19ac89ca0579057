/**
 * DOCX extraction on generated documents with exact content: headings, lists, tables with merged
 * cells, footnotes, links, images, comments, text boxes, Strict OOXML and a long document. The
 * real corpus files are in test/corpus/extractors/docx.test.ts.
 */
import t from 'tap';
import { extractDocx } from '../../src/extractors/docx/docx.ts';
import {
  DOCX_FACTS as F,
  DOCX_STRUCTURES as S,
  DOCX_TEXTBOX as TB,
  makeLongDocx,
  makeOneParagraphDocx,
  makeSampleDocx,
  makeStructuresDocx,
  makeTextboxDocx,
  toStrictOoxml,
} from '../fixtures-gen/make-office-fixtures.ts';
import { within } from '../poll.ts';

const signal = new AbortController().signal;
// Generated once per file: the sample is also the source of the Strict copy.
const sample = makeSampleDocx();

t.test('generated document: headings, lists, table, footnote, link, image, properties', async (t) => {
  const doc = await extractDocx({ bytes: await sample, signal });
  const c = doc.content;
  t.equal(doc.kind, 'docx');
  t.match(c, new RegExp(`^# ${F.heading1}\n`), 'Heading 1 as #');
  t.match(c, `\n## ${F.heading2}\n`);
  t.match(c, `\n### ${F.heading3}\n`);
  t.match(c, F.paragraph);
  t.match(c, `- ${F.bullets[0]}\n  - ${F.nestedBullet}\n- ${F.bullets[1]}`, 'nested bullets');
  t.match(c, `1. ${F.numbered[0]}\n2. ${F.numbered[1]}\n3. ${F.numbered[2]}`, 'numbered list');
  t.match(c, '| Site | Herons | Egrets |\n| --- | --- | --- |\n| North marsh | 42 | 7 |\n| South lagoon | 13 | 21 |');
  t.match(c, /Notes:\n\n1\. Counts were made at dawn with binoculars\./, 'footnote text under a Notes label');
  t.match(c, `Details are in the ${F.link.text}.`, 'link text stays in the prose');
  t.notMatch(c, /base64|data:image/, 'images are never inlined');

  t.equal(doc.tables.length, 1);
  t.match(doc.tables[0], { table_type: 'docx', location: 'table:1', metadata: { rows: 3, columns: 3 } });
  t.same(doc.tables[0].headers, F.table[0]);
  t.same(doc.tables[0].rows, F.table.slice(1));
  t.same(doc.urls, [{ url: F.link.url, type: 'general', context: F.link.text }]);
  t.equal(doc.images.length, 1);
  t.match(doc.images[0], { content_type: 'image/png', alt_text: F.imageAlt });
  t.match(doc.metadata, { title: F.title, author: F.author, image_count: 1, footnote_count: 1, table_count: 1, heading_count: 3 });
  t.equal(doc.pages[0].unit, 'section');
  t.equal(doc.pages.at(-1)!.end, c.length, 'sections cover the content');
});

t.test('Title style as a heading, three-level bullets, merged cells spread, a list starting at q., comments left out', async (t) => {
  const doc = await extractDocx({ bytes: await makeStructuresDocx(), signal });
  const m = S.mergedTable;
  t.equal(
    doc.content,
    [
      `# ${S.title}`,
      S.intro,
      `- ${S.bullets[0].text}\n  - ${S.bullets[1].text}\n    - ${S.bullets[2].text}\n- ${S.bullets[3].text}`,
      [
        `| ${m.header.join(' | ')} |`,
        '| --- | --- | --- |',
        `| ${m.spanAcross.first} | ${m.spanAcross.merged} | ${m.spanAcross.merged} |`,
        `| ${m.spanDown[0].first} | ${m.mergedDown} | ${m.spanDown[0].last} |`,
        `| ${m.spanDown[1].first} | ${m.mergedDown} | ${m.spanDown[1].last} |`,
      ].join('\n'),
      `- q. ${S.lettered[0]}\n- r. ${S.lettered[1]}`,
      S.commentedText,
    ].join('\n\n'),
    'exact content; the review comment is not part of the text',
  );
  t.same(doc.tables[0].rows, [
    [m.spanAcross.first, m.spanAcross.merged, m.spanAcross.merged],
    [m.spanDown[0].first, m.mergedDown, m.spanDown[0].last],
    [m.spanDown[1].first, m.mergedDown, m.spanDown[1].last],
  ]);
  t.match(doc.metadata, { heading_count: 1, table_count: 1, numbered_paragraph_count: 2 });
});

t.test('a numbered list inside a text box (DrawingML with VML fallback) is read and numbered once', async (t) => {
  const doc = await extractDocx({ bytes: await makeTextboxDocx(), signal });
  t.equal(doc.content, [TB.before, TB.heading, `1. ${TB.steps[0]}\n2. ${TB.steps[1]}`, TB.after].join('\n\n'));
  t.equal(doc.metadata.numbered_paragraph_count, 2);
});

t.test('Strict OOXML (purl.oclc.org namespaces) reads like its Transitional original', async (t) => {
  t.equal((await extractDocx({ bytes: await toStrictOoxml(await makeOneParagraphDocx('Some text')), signal })).content, 'Some text');
  const original = await extractDocx({ bytes: await sample, signal });
  const strict = await extractDocx({ bytes: await toStrictOoxml(await sample), signal });
  t.equal(strict.content, original.content);
  t.same(strict.tables, original.tables);
  t.same(strict.urls, original.urls);
  t.same(strict.images, original.images);
  t.match(strict.metadata, { title: F.title, author: F.author, heading_count: 3, footnote_count: 1, numbered_paragraph_count: 3 });
});

t.test('a long document: every heading a section, footnotes counted, read in bounded time', async (t) => {
  const bytes = await makeLongDocx(120, 4);
  const doc = await within(extractDocx({ bytes, signal }), 'reading a 120-chapter document');
  t.equal(doc.metadata.heading_count, 120);
  t.equal(doc.metadata.footnote_count, 12);
  t.equal(doc.pages.length, 120);
  t.same(doc.pages.slice(0, 2).map((p) => [p.unit, p.label]), [['section', 'Chapter 1'], ['section', 'Chapter 2']]);
  t.equal(doc.pages.at(-1)!.end, doc.content.length);
  t.match(doc.content.slice(doc.pages[119].start, doc.pages[119].end), /^# Chapter 120\n\nChapter 120 paragraph 1 describes/);
  t.match(doc.content, 'Notes:\n\n1. Footnote for chapter 10.');
});
