/**
 * PPTX extraction on the real corpus decks (CORPUS_DIR/pptx): markitdown and docling ground truth,
 * merged table cells, charts, grouped shapes, notes, a malformed placeholder. The self-contained
 * test/extractors/pptx.test.ts checks the same behaviours on generated decks.
 */
import fs from 'node:fs';
import t from 'tap';
import { extractPptx } from '../../../src/extractors/pptx/pptx.ts';
import { wordRecall } from '../../extractors/word-recall.ts';
import { corpusPath, readCorpus, readCorpusText } from '../data-dirs.ts';

const signal = new AbortController().signal;
const read = (name: string) => extractPptx({ bytes: readCorpus(`pptx/${name}`), filename: name, signal });

t.test('test.pptx: markitdown must-include strings, 6 slides, table, chart, alt text', async (t) => {
  const doc = await read('test.pptx');
  const exp = JSON.parse(readCorpusText('pptx/test.pptx.expected.json')) as { must_include: string[]; must_not_include: string[] };
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

/** Corpus files that must fail, with the code they fail with. Every PPTX in the corpus is valid. */
const EXPECTED_FAILURES: Record<string, string> = {};

t.test('every corpus file yields slides with content (or its listed error); recall against ground truth', async (t) => {
  const floors: Record<string, number> = { 'powerpoint_sample.pptx': 0.98, 'pptx_chart.pptx': 0.95 };
  const files = fs.readdirSync(corpusPath('pptx')).filter((f) => !f.includes('.expected.')).sort();
  t.ok(files.length >= 5, `${files.length} files`);
  for (const f of files) {
    if (f in EXPECTED_FAILURES) {
      await t.rejects(read(f), { code: EXPECTED_FAILURES[f] }, `${f}: ${EXPECTED_FAILURES[f]}`);
      continue;
    }
    const doc = await read(f);
    t.ok(doc.content.trim().length > 0, `${f}: content`);
    t.ok(doc.pages.length > 0 && doc.pages.length === doc.metadata.slide_count, `${f}: one span per slide`);
    if (fs.existsSync(corpusPath(`pptx/${f}.expected.md`))) {
      t.ok(f in floors, `${f}: has a recall floor`);
      const r = wordRecall(readCorpusText(`pptx/${f}.expected.md`), doc.content);
      t.ok(r.recall >= floors[f], `${f}: recall ${r.recall.toFixed(3)} (${r.found}/${r.total}) >= ${floors[f]}`);
    }
  }
});
