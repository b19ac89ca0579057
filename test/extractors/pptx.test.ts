/**
 * PPTX extraction on generated decks with exact content: presentation order, titles, bullets,
 * tables (merged cells too), notes, hyperlinks, charts, grouped shapes, pictures and a malformed
 * placeholder. The real corpus decks are in test/corpus/extractors/pptx.test.ts.
 */
import t from 'tap';
import { extractPptx } from '../../src/extractors/pptx/pptx.ts';
import { buildZip, PPTX_FACTS as F, PPTX_SHAPES as SH, makeSamplePptx, makeShapesPptx } from '../fixtures-gen/make-office-fixtures.ts';

const signal = new AbortController().signal;

t.test('generated deck: presentation order, titles, bullets, table, notes, hyperlink', async (t) => {
  const doc = await extractPptx({ bytes: await makeSamplePptx(), signal });
  const [s1, s2, s3] = F.slides;
  t.equal(
    doc.content,
    [
      '--- Slide 1 ---',
      `# ${s1.title}`,
      `- ${s1.bullets![0].text}\n  - ${s1.bullets![1].text}\n- ${s1.bullets![2].text}`,
      `Notes:\n${s1.notes}`,
      '--- Slide 2 ---',
      `# ${s2.title}`,
      '| Site | Herons |\n| --- | --- |\n| North marsh | 42 |\n| South lagoon | 13 |',
      '--- Slide 3 ---',
      `# ${s3.title}`,
      s3.text,
      `Notes:\n${s3.notes}`,
    ].join('\n\n'),
    'exact content; slide parts are numbered in reverse, so order comes from presentation.xml',
  );
  t.same(
    doc.pages.map((p) => [p.number, p.unit, p.label]),
    [[1, 'slide', s1.title], [2, 'slide', s2.title], [3, 'slide', s3.title]],
  );
  for (const p of doc.pages) t.match(doc.content.slice(p.start, p.end), new RegExp(`^--- Slide ${p.number} ---`));
  t.equal(doc.pages.at(-1)!.end, doc.content.length);
  t.equal(doc.tables.length, 1);
  t.match(doc.tables[0], { table_type: 'pptx', location: 'slide:2', metadata: { rows: 3, columns: 2 } });
  t.same(doc.tables[0].rows, s2.table!.slice(1));
  t.same(doc.urls, [{ url: s3.link, type: 'general', context: s3.text, location: 'slide:3' }]);
  t.match(doc.metadata, { slide_count: 3, title: F.title, author: F.author, slides_with_notes: 2, table_count: 1 });
});

t.test('a package without presentation.xml is a coded error', async (t) => {
  const zip = buildZip([{ name: 'ppt/slides/slide1.xml', data: Buffer.from('<p:sld/>') }]);
  await t.rejects(extractPptx({ bytes: zip, signal }), { code: 'PROCESSING_ERROR' });
});

t.test('generated shapes deck: merged cells, chart data, nested groups, alt text, malformed placeholder', async (t) => {
  const doc = await extractPptx({ bytes: await makeShapesPptx(), signal });
  const m = SH.merged;
  const c = SH.chart;
  t.equal(
    doc.content,
    [
      '--- Slide 1 ---',
      `# ${m.title}`,
      [
        `| ${m.header[0]} | ${m.header[1]} | ${m.header[1]} | ${m.header[2]} |`,
        '| --- | --- | --- | --- |',
        `| ${m.header[0]} | ${m.sub[0]} | ${m.sub[1]} | ${m.header[2]} |`,
        `| ${m.site} | ${m.rows[0].join(' | ')} |`,
        `| ${m.site} | ${m.rows[1].join(' | ')} |`,
      ].join('\n'),
      '--- Slide 2 ---',
      `# ${c.title}`,
      [
        `Chart (bar): ${c.title}`,
        `|  | ${c.series[0].name} | ${c.series[1].name} |`,
        '| --- | --- | --- |',
        ...c.categories.map((cat, i) => `| ${cat} | ${c.series[0].values[i]} | ${c.series[1].values[i]} |`),
      ].join('\n'),
      '--- Slide 3 ---',
      `# ${SH.grouped.title}`,
      SH.grouped.outer,
      SH.grouped.inner,
      '--- Slide 4 ---',
      `# ${SH.picture.title}`,
      `![${SH.picture.alt}](image-4-1.png)`,
      SH.picture.steps.map((step, i) => `${i + 1}. ${step}`).join('\n'),
      '--- Slide 5 ---',
      `# ${SH.malformed.title}`,
      SH.malformed.date,
    ].join('\n\n'),
    'spans spread to every covered cell; groups walked; numbered paragraphs numbered; the title leads its slide',
  );
  t.equal(doc.tables.length, 1, 'the chart is not a table');
  t.same(doc.tables[0].rows, [
    [m.header[0], m.sub[0], m.sub[1], m.header[2]],
    [m.site, ...m.rows[0]],
    [m.site, ...m.rows[1]],
  ]);
  t.match(doc.tables[0].metadata, { rows: 4, columns: 4, slide: 1 });
  t.same(doc.images, [{ slide: 4, name: 'Image 0', alt_text: SH.picture.alt, part: 'ppt/media/image-4-1.png' }]);
  t.match(doc.metadata, { slide_count: 5, chart_count: 1, image_count: 1, table_count: 1, title: 'Shapes fixture' });
  t.same(doc.pages.map((p) => p.label), [m.title, c.title, SH.grouped.title, SH.picture.title, SH.malformed.title]);
});
