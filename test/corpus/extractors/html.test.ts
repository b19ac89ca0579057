/**
 * HTML extraction on the real corpus pages (CORPUS_DIR/html): markitdown and docling ground truth,
 * boilerplate removal, bylines, legacy encodings, rich table cells, script-heavy pages. The
 * self-contained test/extractors/html.test.ts checks the same behaviours on generated pages.
 */
import fs from 'node:fs';
import t from 'tap';
import { extractHtml } from '../../../src/extractors/html/html.ts';
import { wordRecall } from '../../extractors/word-recall.ts';
import { corpusPath, readCorpus, readCorpusText } from '../data-dirs.ts';

const signal = new AbortController().signal;
const read = (name: string) => extractHtml({ bytes: readCorpus(`html/${name}`), filename: name, signal });

const expectedJson = (f: string) =>
  JSON.parse(readCorpusText(`html/${f}.expected.json`)) as { must_include: string[]; must_not_include: string[] };

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

/** Corpus files that must fail, with the code they fail with. Every HTML page in the corpus is valid. */
const EXPECTED_FAILURES: Record<string, string> = {};

t.test('every corpus file yields content (or its listed error); recall against ground truth', async (t) => {
  // wiki_duck's ground truth keeps the whole page (language list, navigation); we keep the article.
  const floors: Record<string, number> = { 'html_rich_table_cells.html': 0.95, 'wiki_duck.html': 0.8 };
  const files = fs.readdirSync(corpusPath('html')).filter((f) => !f.includes('.expected.')).sort();
  t.ok(files.length >= 7, `${files.length} files`);
  for (const f of files) {
    if (f in EXPECTED_FAILURES) {
      await t.rejects(read(f), { code: EXPECTED_FAILURES[f] }, `${f}: ${EXPECTED_FAILURES[f]}`);
      continue;
    }
    const started = Date.now();
    const doc = await read(f);
    t.ok(doc.content.trim().length > 0, `${f}: content (${Date.now() - started} ms)`);
    t.notMatch(doc.content, /<script|<style/i, `${f}: no markup left`);
    if (fs.existsSync(corpusPath(`html/${f}.expected.md`))) {
      t.ok(f in floors, `${f}: has a recall floor`);
      const r = wordRecall(readCorpusText(`html/${f}.expected.md`), doc.content);
      t.ok(r.recall >= floors[f], `${f}: recall ${r.recall.toFixed(3)} (${r.found}/${r.total}) >= ${floors[f]}`);
    }
  }
});
