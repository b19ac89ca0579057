import t from 'tap';
import { chunkDocument, chunkText, chunkingProfile, indexTextOf, MAX_CHUNK_CHARS } from '../../src/retrieval/chunking.ts';
import type { PageSpan, ProcessedDocument } from '../../src/extractors/shared/types.ts';
import { HANDBOOK_SECTIONS, handbookMarkdown, longBook } from '../fixtures-gen/texts.ts';

function doc(kind: ProcessedDocument['kind'], content: string, pages: PageSpan[] = []): ProcessedDocument {
  return { kind, content, metadata: {}, tables: [], images: [], urls: [], pages };
}

t.test('profiles: per type, scaled for long and short content', async (t) => {
  const p = (kind: string, len: number) => {
    const { size, overlap } = chunkingProfile(kind, len);
    return [size, overlap];
  };
  t.same(p('pdf', 50_000), [1500, 300]);
  t.same(p('pptx', 50_000), [800, 150]);
  t.same(p('xlsx', 50_000), [1200, 200]);
  t.same(p('csv', 50_000), [1200, 200]);
  t.same(p('docx', 50_000), [1500, 300]);
  t.same(p('html', 50_000), [1500, 300]);
  t.same(p('text', 50_000), [1200, 250]);
  t.same(p('pdf', 150_000), [2250, 390]);
  t.same(p('text', 150_000), [1800, 325]);
  t.same(p('pdf', 3_000), [750, 150]);
  t.same(p('pptx', 3_000), [400, 75]);
  t.same(p('xlsx', 3_000), [600, 100]);
  t.same(p('text', 3_000), [600, 125]);
  t.equal(chunkingProfile('pptx', 50_000).separators[0], '\n--- Slide ');
  t.same(chunkingProfile('pdf', 50_000, { chunkSize: 9000, overlap: 10 }).size, MAX_CHUNK_CHARS);
});

t.test('a long generated book: exact slices, bounded sizes, overlap, everything covered', async (t) => {
  const text = longBook();
  t.ok(text.length > 150_000, `${text.length} chars`);
  const chunks = chunkText(text, 'text');
  const { size } = chunkingProfile('text', text.length);
  t.equal(size, 1800);
  // Chunks of at most `size` characters that cover the text leave no fewer than length/size of them.
  t.ok(chunks.length >= Math.ceil(text.trim().length / size), `${chunks.length} chunks`);
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

t.test('page ranges come from the page map', async (t) => {
  const pages: PageSpan[] = [];
  let content = '';
  for (let n = 1; n <= 6; n++) {
    const start = content.length;
    content += `--- Page ${n} ---\n\n`;
    for (let p = 0; p < 8; p++) content += `Paragraph ${p} of page ${n} mentions marker P${n}X${p} and some filler words to make it longer. `.repeat(3) + '\n\n';
    pages.push({ number: n, unit: 'page', start, end: content.length });
  }
  const chunks = chunkDocument(doc('pdf', content, pages));
  t.ok(chunks.length > 6);
  for (const c of chunks) {
    const onPages = pages.filter((p) => p.start < c.char_end && p.end > c.char_start).map((p) => p.number);
    t.equal(c.page_start, onPages[0], `chunk ${c.chunk_index} page_start`);
    t.equal(c.page_end, onPages[onPages.length - 1], `chunk ${c.chunk_index} page_end`);
    t.notMatch(c.text, /--- Page \d+ ---$/, 'a chunk never ends on the next page marker');
  }
  const withP4 = chunks.find((c) => c.text.includes('P4X2'))!;
  t.ok(withP4.page_start! <= 4 && withP4.page_end! >= 4);
});

t.test('heading paths follow Markdown nesting', async (t) => {
  const body = (w: string) => `${w} `.repeat(120).trim();
  const content = [
    '# Annual Report', body('intro'),
    '## Finance', body('money'),
    '### Revenue', body('sales'),
    '## People', body('staff'),
    '# Appendix', body('extra'),
  ].join('\n\n');
  const chunks = chunkDocument(doc('docx', content));
  const pathOf = (word: string) => chunks.find((c) => c.text.includes(word))!.heading_path;
  t.same(pathOf('intro'), ['Annual Report']);
  t.same(pathOf('money'), ['Annual Report', 'Finance']);
  t.same(pathOf('sales'), ['Annual Report', 'Finance', 'Revenue']);
  t.same(pathOf('staff'), ['Annual Report', 'People']);
  t.same(pathOf('extra'), ['Appendix']);
  // heading separators come first: each section starts its own chunk with its heading
  t.ok(chunks.some((c) => c.text.startsWith('### Revenue')));
});

t.test('a sectioned Markdown handbook keeps its section titles', async (t) => {
  const md = handbookMarkdown();
  const chunks = chunkDocument(doc('docx', md));
  const { size } = chunkingProfile('docx', md.length);
  for (const s of HANDBOOK_SECTIONS) {
    const opening = chunks.find((c) => c.text.startsWith(`${s.heading}\n`));
    t.ok(opening, `a chunk opens ${s.heading}`);
    t.same(opening?.heading_path, s.path, `${s.heading}: heading path`);
    const holding = chunks.filter((c) => c.text.includes(s.planted));
    t.ok(holding.length >= 1 && holding.every((c) => c.heading_path.join('/') === s.path.join('/')), `${s.heading}: its sentence is under it`);
  }
  t.ok(chunks.every((c) => c.text.length <= size && md.slice(c.char_start, c.char_end) === c.text));
});

t.test('slides: slide labels lead the heading path', async (t) => {
  const pages: PageSpan[] = [];
  let content = '';
  for (let n = 1; n <= 3; n++) {
    if (n > 1) content += '\n\n';
    const start = content.length;
    content += `--- Slide ${n} ---\n# Title ${n}\n` + `- point ${n} `.repeat(40);
    pages.push({ number: n, unit: 'slide', label: `Title ${n}`, start, end: content.length });
  }
  const chunks = chunkDocument(doc('pptx', content, pages));
  for (const c of chunks) {
    t.equal(c.heading_path[0], `Title ${c.page_start}`);
    t.equal(c.doc_type, 'pptx');
  }
  t.ok(chunks.some((c) => c.text.startsWith('--- Slide 2 ---')), 'slides open chunks');
});

t.test('no separator at all: hard cuts, never over the size, surrogate pairs intact', async (t) => {
  const text = 'x'.repeat(3001) + '😀'.repeat(1500);
  const chunks = chunkText(text, 'text');
  const { size } = chunkingProfile('text', text.length);
  t.ok(chunks.every((c) => c.text.length <= size));
  t.ok(chunks.every((c) => !/^[\udc00-\udfff]/.test(c.text) && !/[\ud800-\udbff]$/.test(c.text)));
  t.equal(chunks.map((c) => c.text).join('').length >= text.length, true);
});

t.test('importance score and content type', async (t) => {
  const [c] = chunkText('Revenue grew 15% in Q3.', 'text');
  t.equal(c.importance_score, 0.45); // 0.5 + 0.15 (percent) - 0.2 (short)
  const long = 'The committee reviewed the proposal in detail and agreed on the next steps for the project team.';
  t.equal(chunkText(long, 'text')[0].importance_score, 0.5);
  t.equal(chunkText(`${long} Key results: revenue was $1,200,000.`, 'text')[0].importance_score, 0.75);
  t.equal(chunkText(`## Summary\n\n${long} The key finding is that costs rose 12%.`, 'text')[0].importance_score, 0.95);
  t.equal(chunkText('ok', 'text')[0].importance_score, 0.3);

  t.equal(chunkText('| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |', 'text')[0].content_type, 'table');
  t.equal(chunkText('- apples and pears\n- oranges\n- bananas\n1. first', 'text')[0].content_type, 'list');
  t.equal(chunkText('## Introduction', 'text')[0].content_type, 'heading');
  t.equal(chunkText(long, 'text')[0].content_type, 'text');
});

t.test('empty or blank content has no chunks', async (t) => {
  t.same(chunkText('', 'text'), []);
  t.same(chunkDocument(doc('pdf', ' \n\n \t ')), []);
});

t.test('spreadsheets: chunks come from every table row; without full tables the content is chunked', async (t) => {
  const rows = Array.from({ length: 200 }, (_, i) => [`R${i + 1}`, i * 10]);
  const content = '## Sheet: Data\n\n| Key | Value |\n| --- | --- |\n| R1 | 0 |\n\n_200 rows × 2 columns; showing the first 1._';
  const pages: PageSpan[] = [{ number: 1, unit: 'sheet', label: 'Data', start: 0, end: content.length }];
  const sheet: ProcessedDocument = {
    ...doc('xlsx', content, pages),
    tables: [{ content: '', table_type: 'spreadsheet', location: 'sheet:Data', metadata: {}, headers: ['Key', 'Value'], rows, row_numbers: rows.map((_, i) => i + 2), sheet: 'Data' }],
  };
  const chunks = chunkDocument(sheet, { chunkSize: 300 });
  t.ok(chunks.length > 10, `${chunks.length} chunks`);
  t.ok(chunks.every((c) => c.text.startsWith('## Sheet: Data\n\n| Key | Value |\n| --- | --- |\n| R') && c.text.length <= 300));
  t.same(chunks.flatMap((c) => c.text.split('\n').slice(4)), rows.map(([k, v]) => `| ${k} | ${v} |`), 'every row once, in order');
  t.ok(chunks.every((c) => c.content_type === 'table' && c.page_start === 1 && c.heading_path.join() === 'Data'));
  const index = indexTextOf(chunks);
  t.ok(chunks.every((c) => index.slice(c.char_start, c.char_end) === c.text), 'offsets point into the index text');

  // A spreadsheet document without a sheet map or without full rows: chunked from its content.
  for (const plain of [doc('xlsx', content), { ...doc('csv', content, pages), tables: [{ content: '', table_type: 'csv', location: 'x', metadata: {} }] }]) {
    const cs = chunkDocument(plain);
    t.ok(cs.length > 0 && cs.every((c) => content.slice(c.char_start, c.char_end) === c.text));
  }
});
