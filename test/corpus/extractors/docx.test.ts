/**
 * DOCX extraction on the real corpus files (CORPUS_DIR/docx): markitdown and docling ground truth,
 * merged cells, lists, numbering, equations, text boxes, Strict OOXML and an 872-page handbook.
 * test/extractors/docx.test.ts checks the same behaviours on generated documents.
 */
import fs from 'node:fs';
import t from 'tap';
import { extractDocx } from '../../../src/extractors/docx/docx.ts';
import { wordRecall } from '../../extractors/word-recall.ts';
import { corpusPath, readCorpus, readCorpusText } from '../data-dirs.ts';

const signal = new AbortController().signal;
// Each corpus file is extracted once and shared by the tests below (the handbook takes seconds).
const results = new Map<string, ReturnType<typeof extractDocx>>();
const read = (name: string) => {
  if (!results.has(name)) results.set(name, extractDocx({ bytes: readCorpus(`docx/${name}`), filename: name, signal }));
  return results.get(name)!;
};

t.test('test.docx: markitdown must-include strings, table, image', async (t) => {
  const doc = await read('test.docx');
  const exp = JSON.parse(readCorpusText('docx/test.docx.expected.json')) as { must_include: string[]; must_not_include: string[] };
  for (const s of exp.must_include) {
    if (s.startsWith('data:image')) continue; // markitdown's image placeholder; we report images in images[]
    t.ok(doc.content.includes(s), `includes ${JSON.stringify(s)}`);
  }
  for (const s of exp.must_not_include) t.notOk(doc.content.includes(s), `excludes ${JSON.stringify(s)}`);
  t.equal(doc.tables.length, 1);
  t.match(doc.tables[0].metadata, { rows: 5, columns: 6 });
  t.equal(doc.metadata.image_count, 1);
  t.match(doc.content, /^# AutoGen: Enabling Next-Gen LLM Applications via Multi-Agent Conversation$/m, 'Title style as heading');
});

t.test('word_tables.docx: 7 tables, merged cells spread like the ground truth', async (t) => {
  const doc = await read('word_tables.docx');
  t.equal(doc.tables.length, 7);
  t.match(doc.content, '| Cell 1.0 | Merged Cell 1.1 1.2 | Merged Cell 1.1 1.2 |', 'horizontal span');
  t.match(doc.content, '| Cell 2.0 | Merged Cell 1.1 2.1 | Cell 2.2 |', 'vertical span');
  t.same(doc.tables[0].rows, [['Cell 1.0', 'Cell 1.1', 'Cell 1.2'], ['Cell 2.0', 'Cell 2.1', 'Cell 2.2']]);
});

t.test('docx_lists.docx: nested bullets and numbering', async (t) => {
  const doc = await read('docx_lists.docx');
  t.match(doc.content, '- List item 1\n  - List item 1.1\n    - List item 1.1.1\n- List item 3');
  t.match(doc.content, '1. List item a\n2. List item b\n3. List item c');
  t.equal(doc.metadata.heading_count, 10);
});

t.test('unit_test_headers_numbered.docx: Word numbering on headings and multilevel lists', async (t) => {
  const doc = await read('unit_test_headers_numbered.docx');
  const c = doc.content;
  for (const h of ['# 1. Section 1', '## 1.1. Section 1.1', '## 1.2. Section 1.2', '### 1.2.1. Section 1.2.3', '# 2. Section 2', '## 2.2. Section 2.1']) {
    t.match(c, new RegExp(`^${h.replace(/\./g, '\\.')}$`, 'm'), h);
  }
  t.match(c, /^### 2\.1\.1\. Section 2\.1\.1$/m, 'a skipped level shows its start value');
  t.match(c, '1. Appendix A: Glossary\n   - 1.1. Section A.1\n     - 1.1.1. Detail A.1.1\n     - 2.3.1. Hardware Constraints');
  t.match(c, '       - 2.3.8.1. First sub-item at this level');
  t.notMatch(c, /[\uFDD0\uFDD1]/);
});

t.test('docx_lists.docx: restarted lists split, composite labels kept', async (t) => {
  const doc = await read('docx_lists.docx');
  t.match(doc.content, '4. Fourth item with numId 2\n\n1. Single item of a new list\n\n1. Single item of a new list');
  t.match(doc.content, '1. ORCHARD MAP AND GARDEN NOTES\n   - 1.1 Morning Walk');
  t.match(doc.content, '2. WEEKEND ERRAND LIST\n   - 2.1 Market Stops\n     - Buy fresh bread');
});

t.test('equations.docx: OMML as LaTeX, inline and display', async (t) => {
  const doc = await read('equations.docx');
  const c = doc.content;
  t.match(c, 'this is an inline equation: $A= \\pi r^{2}$.');
  t.match(c, '\n\n$$a^{2}+b^{2}=c^{2} \\times 23$$\n\n');
  t.match(c, '$$\\left(x+a\\right)^{n}=\\sum_{k=0}^{n}\\left(\\genfrac{}{}{0pt}{}{n}{k}\\right)x^{k}a^{n-k}$$');
  t.match(c, '$$\\oiiint_{C}\\frac{1}{z}dz$$');
  t.match(c, '\\max_{0 \\leq x \\leq 1}xe^{-x^{2}}');
  t.match(c, '$$P_{x}=\\underbrace{S \\cdot T \\cdot G \\cdot (x+y+z)}_{group with underbraces}+e^{x}$$');
  t.equal(doc.metadata.equation_count, 27);
});

t.test('textbox.docx: a list inside a text box is numbered once', async (t) => {
  const doc = await read('textbox.docx');
  t.match(doc.content, '1. If necessary, provide health education');
  t.match(doc.content, '2. Implement appropriate epidemic prevention measures');
});

t.test('Strict OOXML is read', async (t) => {
  const doc = await read('Strict.docx');
  t.equal(doc.content, 'Some text');
});

t.test('handbook-872p.docx: large document with footnotes and headings', async (t) => {
  const doc = await read('handbook-872p.docx');
  t.ok(doc.content.length > 500_000, `${doc.content.length} chars`);
  t.ok((doc.metadata.heading_count as number) > 250);
  t.ok((doc.metadata.footnote_count as number) >= 5);
  t.ok(doc.pages.length > 100, 'section spans from headings');
  t.match(doc.content, '- q. Equipment/Furniture Rental:', 'lettered list with start 17');
  t.equal(doc.metadata.numbered_paragraph_count, 44);
});

t.test('test_with_comment.docx: review comments stay out of the text', async (t) => {
  const doc = await read('test_with_comment.docx');
  t.match(doc.content, /^# AutoGen: Enabling Next-Gen LLM Applications via Multi-Agent Conversation$/m);
  t.notMatch(doc.content, /12df-321a|55yiyi-asd09/, 'comment text (comments.xml) is not in the content');
  t.equal(doc.tables.length, 1);
});

/** Corpus files that must fail, with the code they fail with. Every DOCX in the corpus is valid. */
const EXPECTED_FAILURES: Record<string, string> = {};

t.test('every corpus file yields content (or its listed error); recall against ground truth', async (t) => {
  const floors: Record<string, number> = {
    'Strict.docx': 1,
    'docx_lists.docx': 0.99,
    'word_tables.docx': 0.95,
    'textbox.docx': 0.99,
    'unit_test_headers_numbered.docx': 0.99,
    'equations.docx': 0.99,
  };
  const files = fs.readdirSync(corpusPath('docx')).filter((f) => !f.includes('.expected.')).sort();
  t.ok(files.length >= 9, `${files.length} files`);
  for (const f of files) {
    if (f in EXPECTED_FAILURES) {
      await t.rejects(read(f), { code: EXPECTED_FAILURES[f] }, `${f}: ${EXPECTED_FAILURES[f]}`);
      continue;
    }
    const doc = await read(f);
    t.ok(doc.content.trim().length > 0, `${f}: content`);
    if (fs.existsSync(corpusPath(`docx/${f}.expected.md`))) {
      t.ok(f in floors, `${f}: has a recall floor`);
      const r = wordRecall(readCorpusText(`docx/${f}.expected.md`), doc.content);
      t.ok(r.recall >= floors[f], `${f}: recall ${r.recall.toFixed(3)} (${r.found}/${r.total}) >= ${floors[f]}`);
    }
  }
});
