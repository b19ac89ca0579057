/** Chunking real long documents from the corpus (generated equivalents: test/retrieval/chunking.test.ts). */
import t from 'tap';
import { chunkDocument, chunkText, chunkingProfile } from '../../../src/retrieval/chunking.ts';
import type { ProcessedDocument } from '../../../src/extractors/shared/types.ts';
import { readCorpusText } from '../data-dirs.ts';

function doc(kind: ProcessedDocument['kind'], content: string): ProcessedDocument {
  return { kind, content, metadata: {}, tables: [], images: [], urls: [], pages: [] };
}

t.test('a long real book: exact slices, bounded sizes, overlap, everything covered', async (t) => {
  const text = readCorpusText('txt/book-war-and-peace-1225p.txt');
  const chunks = chunkText(text, 'text');
  const { size } = chunkingProfile('text', text.length);
  t.equal(size, 1800);
  t.ok(chunks.length > 1500, `${chunks.length} chunks`);
  let covered = 0;
  let overlapping = 0;
  for (const [i, c] of chunks.entries()) {
    if (text.slice(c.char_start, c.char_end) !== c.text) t.fail(`chunk ${i} is not the slice of its offsets`);
    if (c.text.length > size) t.fail(`chunk ${i} has ${c.text.length} chars`);
    if (c.chunk_index !== i || c.total_chunks !== chunks.length) t.fail(`chunk ${i} numbering`);
    if (i > 0) {
      const prev = chunks[i - 1];
      if (c.char_start < prev.char_end) overlapping++;
      if (c.char_start <= prev.char_start) t.fail(`chunk ${i} does not advance`);
      // nothing but whitespace is skipped between chunks
      if (c.char_start > prev.char_end && text.slice(prev.char_end, c.char_start).trim() !== '') t.fail(`gap before chunk ${i}`);
    }
    covered = Math.max(covered, c.char_end);
  }
  t.equal(text.slice(covered).trim(), '');
  t.ok(overlapping > chunks.length / 2, `${overlapping} chunks overlap their predecessor`);
  t.ok(chunks.every((c) => c.doc_type === 'text' && c.page_start === null && c.heading_path.length === 0));
});

t.test('a real Markdown document (docling ground truth) keeps its section titles', async (t) => {
  const md = readCorpusText('pdf/redp5110_sampled.pdf.expected.md');
  const chunks = chunkDocument(doc('docx', md));
  const sec = chunks.find((c) => c.text.startsWith('## 1.1  Security fundamentals'))!;
  t.ok(sec, 'a chunk opens the section');
  t.same(sec.heading_path, ['1.1  Security fundamentals']);
  t.ok(chunks.every((c) => c.text.length <= 1500 && md.slice(c.char_start, c.char_end) === c.text));
});
