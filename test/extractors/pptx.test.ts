/** PPTX extraction: an exact-content generated deck, then the real files of the corpus. */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { extractPptx } from '../../src/extractors/pptx.ts';
import { PPTX_FACTS as F, makeSamplePptx } from '../../scripts/fixtures/make-office-fixtures.ts';
import { wordRecall } from './word-recall.ts';

const corpus = path.resolve(import.meta.dirname, '../../../shared/corpus/pptx');
const signal = new AbortController().signal;
const read = (name: string) => extractPptx({ bytes: fs.readFileSync(path.join(corpus, name)), filename: name, signal });

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
  const { buildZip } = await import('../../scripts/fixtures/make-office-fixtures.ts');
  const zip = buildZip([{ name: 'ppt/slides/slide1.xml', data: Buffer.from('<p:sld/>') }]);
  await t.rejects(extractPptx({ bytes: zip, signal }), { code: 'PROCESSING_ERROR' });
});

if (!fs.existsSync(corpus)) {
  t.comment(`corpus folder ${corpus} absent: corpus checks skipped`);
} else {
  t.test('test.pptx: markitdown must-include strings, 6 slides, table, chart, alt text', async (t) => {
    const doc = await read('test.pptx');
    const exp = JSON.parse(fs.readFileSync(path.join(corpus, 'test.pptx.expected.json'), 'utf8')) as { must_include: string[]; must_not_include: string[] };
    for (const s of exp.must_include) {
      // markitdown names pictures after the shape; we name them after the media part.
      const probe = s.startsWith('![') ? s.slice(0, s.indexOf('](') + 2) : s;
      t.ok(doc.content.includes(probe), `includes ${JSON.stringify(probe)}`);
    }
    for (const s of exp.must_not_include) t.notOk(doc.content.includes(s));
    t.equal(doc.metadata.slide_count, 6);
    t.equal(doc.pages.length, 6);
    t.equal(doc.tables.length, 1);
    t.match(doc.tables[0], { location: 'slide:3', metadata: { rows: 4, columns: 6 } });
    t.equal(doc.metadata.chart_count, 1);
    t.equal(doc.metadata.image_count, 2);
    t.match(doc.content, /--- Slide 5 ---\n\n# A Nested Shape parsing/, 'grouped shapes are walked');
  });

  t.test('powerpoint_sample.pptx: merged table cells, lists, speaker notes', async (t) => {
    const doc = await read('powerpoint_sample.pptx');
    t.equal(doc.metadata.slide_count, 3);
    t.match(doc.content, '|  | Class1 | Class1 | Class1 | Class2 | Class2 | Class2 |');
    t.match(doc.content, '|  | A merged with B | A merged with B | C | A | B | C |');
    t.match(doc.content, '- With foo\n- Bar\n- And baz things');
    t.match(doc.content, '1. List item4\n2. List item5\n3. List item6');
    t.match(doc.content, 'Notes:\nSome notes on the second slide.');
    t.match(doc.content, 'Notes:\nFinal notes on the third slide.\nSecond line of notes.');
    t.equal(doc.metadata.slides_with_notes, 2);
    t.same(doc.tables[0].metadata, { rows: 9, columns: 7, slide: 1, index_on_slide: 1, has_header: true });
  });

  t.test('pptx_chart.pptx: chart title and data from the chart part', async (t) => {
    const doc = await read('pptx_chart.pptx');
    t.match(doc.content, 'Chart (bar): Wild Duck Observations by Year');
    t.match(doc.content, '|  | Freshwater Ducks | Saltwater Ducks |');
    t.match(doc.content, '| 2022 | 175 | 130 |');
    t.equal(doc.metadata.chart_count, 2);
  });

  t.test('fake-power-point-malformed.pptx: text recovered, title first', async (t) => {
    const doc = await read('fake-power-point-malformed.pptx');
    t.match(doc.content, /^--- Slide 1 ---\n\n# Test Slide\n\nProblem Date Placeholder$/);
  });

  t.test('eng_spa_mult.pptx: six slides with English and Spanish text', async (t) => {
    const doc = await read('eng_spa_mult.pptx');
    t.equal(doc.metadata.slide_count, 6);
    t.equal(doc.pages.length, 6);
  });

  t.test('every corpus file yields content or a coded error; recall against ground truth', async (t) => {
    const floors: Record<string, number> = { 'powerpoint_sample.pptx': 0.98, 'pptx_chart.pptx': 0.95 };
    for (const f of fs.readdirSync(corpus).sort()) {
      if (f.includes('.expected.')) continue;
      try {
        const doc = await read(f);
        t.ok(doc.content.trim().length > 0, `${f}: content`);
        const expected = path.join(corpus, `${f}.expected.md`);
        if (fs.existsSync(expected)) {
          const r = wordRecall(fs.readFileSync(expected, 'utf8'), doc.content);
          t.comment(`${f}: word recall ${r.recall.toFixed(3)} (${r.found}/${r.total})`);
          if (f in floors) t.ok(r.recall >= floors[f], `${f}: recall ${r.recall.toFixed(3)} >= ${floors[f]}`);
        }
      } catch (err) {
        t.ok((err as { code?: string }).code, `${f}: coded error ${(err as Error).message}`);
      }
    }
  });
}
