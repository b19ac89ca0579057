/**
 * DOCX page numbers on the corpus: files Word saved (rendered page breaks) get exactly the page
 * count their app.xml states, and their chunks stay within it; files whose pages cannot be known
 * from what they record get null, never a number.
 */
import t from 'tap';
import { extractDocx } from '../../../src/extractors/docx/docx.ts';
import { chunkDocument } from '../../../src/retrieval/chunking.ts';
import { readCorpus } from '../data-dirs.ts';

const signal = new AbortController().signal;
const read = (name: string) => extractDocx({ bytes: readCorpus(`docx/${name}`), filename: name, signal });

t.test('Word-saved files: the page map matches app.xml and chunks stay within it', async (t) => {
  for (const [name, pages] of [['test.docx', 2], ['docx_lists.docx', 3], ['equations.docx', 3], ['unit_test_headers_numbered.docx', 2], ['Strict.docx', 1], ['textbox.docx', 1]] as const) {
    const doc = await read(name);
    t.equal(doc.metadata.page_count, pages, `${name}: app.xml`);
    t.equal(doc.metadata.pages_known, true, `${name}: pages known`);
    t.same(doc.pages.map((p) => p.number), Array.from({ length: pages }, (_, i) => i + 1), `${name}: pages 1-${pages}`);
    const chunks = chunkDocument(doc);
    t.ok(chunks.every((c) => c.page_start !== null && c.page_start >= 1 && c.page_end! <= pages), `${name}: chunk pages within 1-${pages}`);
  }
  // test.docx: Word's rendered break falls inside a sentence of the paper's introduction.
  const doc = await read('test.docx');
  t.ok(doc.content.slice(doc.pages[0].start).startsWith('# AutoGen: Enabling Next-Gen LLM Applications'));
  t.ok(doc.content.slice(doc.pages[1].start).startsWith('configured with the correct prompt and inference settings)'), 'page 2 starts where Word broke it');
  const second = chunkDocument(doc).filter((c) => c.page_end === 2);
  t.ok(second.length >= 1 && second.at(-1)!.char_end === doc.content.length, 'the last chunk is on page 2');
});

t.test('pages that cannot be known are null: the handbook, files without rendered breaks', async (t) => {
  for (const name of ['handbook-872p.docx', 'word_tables.docx', 'test_with_comment.docx']) {
    const doc = await read(name);
    t.equal(doc.metadata.pages_known, false, name);
    const chunks = chunkDocument(doc);
    t.ok(chunks.length > 0 && chunks.every((c) => c.page_start === null && c.page_end === null), `${name}: ${chunks.length} chunks, all page null`);
  }
});
