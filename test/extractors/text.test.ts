/**
 * Plain text, Markdown, JSON and XML on generated input: decoding and format detection, many
 * scripts, a multi-megabyte file. The corpus's text files are in test/corpus/extractors/text.test.ts.
 */
import t from 'tap';
import { extractText, textFormat } from '../../src/extractors/text/text.ts';
import { within } from '../poll.ts';

const signal = new AbortController().signal;
const text = (bytes: Buffer | string, filename?: string, contentType?: string) =>
  extractText({ bytes: Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes), filename, contentType, signal });

t.test('line endings normalised, leading blank lines dropped, content otherwise verbatim', async (t) => {
  const doc = await text('\r\n\r\nFirst line\r\n  indented\r\nlast\r\n\r\n', 'notes.txt');
  t.equal(doc.content, 'First line\n  indented\nlast');
  t.match(doc.metadata, { format: 'text', encoding: 'utf-8', line_count: 3, word_count: 4 });
  t.same(doc.pages, []);
});

t.test('encodings: UTF-8 BOM, UTF-16 with and without BOM, cp1252', async (t) => {
  const bom = await text(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('Grüße')]));
  t.equal(bom.content, 'Grüße');
  const le = await text(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('Hello wörld', 'utf16le')]));
  t.equal(le.content, 'Hello wörld');
  const noBom = await text(Buffer.from('Plain ASCII text written as UTF-16 without a byte order mark.', 'utf16le'));
  t.equal(noBom.content, 'Plain ASCII text written as UTF-16 without a byte order mark.');
  t.equal(noBom.metadata.encoding, 'utf-16le');
  const cp = await text(Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x20, 0x80, 0x35]));
  t.equal(cp.content, 'café €5');
});

t.test('Markdown: detected by name or structure, sections from headings', async (t) => {
  const md = '# Guide\n\nIntro.\n\n## Install\n\n- step one\n- step two\n\n## Use\n\nRun it.';
  const doc = await text(md, 'README.md');
  t.equal(doc.metadata.format, 'markdown');
  t.equal(doc.content, md);
  t.same(doc.pages.map((p) => p.label), ['Guide', 'Install', 'Use']);
  t.equal(doc.content.slice(doc.pages[1].start, doc.pages[1].end), '## Install\n\n- step one\n- step two\n\n');
  t.equal(textFormat(md), 'markdown', 'by content alone');
  t.equal(textFormat('Just prose.\nNo markup here.'), 'text');
});

t.test('JSON: minified documents are pretty-printed, JSON Lines recognised', async (t) => {
  const value = { items: Array.from({ length: 40 }, (_, i) => ({ id: i, name: `item ${i}` })) };
  const doc = await text(JSON.stringify(value), 'data.json');
  t.equal(doc.metadata.format, 'json');
  t.equal(doc.metadata.json_valid, true);
  t.equal(doc.content, JSON.stringify(value, null, 2));
  const small = await text('{"a": 1}', undefined, 'application/json');
  t.equal(small.content, '{"a": 1}', 'short JSON kept as written');
  const lines = await text('{"a":1}\n{"a":2}\n', 'events.jsonl');
  t.match(lines.metadata, { format: 'json', json_valid: false, json_lines: true });
  t.equal(textFormat('[1, 2, 3]'), 'json');
});

t.test('XML kept as written', async (t) => {
  const xml = '<?xml version="1.0"?>\n<catalog><book id="1">Herons</book></catalog>';
  const doc = await text(xml);
  t.equal(doc.metadata.format, 'xml');
  t.equal(doc.content, xml);
});

t.test('empty and whitespace-only input gives empty content, flagged', async (t) => {
  for (const input of ['', '   \n\t\n']) {
    const doc = await text(input, 'empty.txt');
    t.equal(doc.content, '');
    t.equal(doc.metadata.empty, true);
  }
});

t.test('many scripts (CJK, Arabic, Hebrew, Devanagari, Cyrillic, Greek, Thai) come through verbatim', async (t) => {
  const lines = [
    'Universal Declaration of Human Rights - First article, several languages',
    'English: All human beings are born free and equal in dignity and rights.',
    '中文: 人人生而自由,在尊严和权利上一律平等。',
    '日本語: すべての人間は、生まれながらにして自由であり、かつ、尊厳と権利とについて平等である。',
    '한국어: 모든 인간은 태어날 때부터 자유로우며 그 존엄과 권리에 있어 동등하다.',
    'العربية: يولد جميع الناس أحرارًا متساوين في الكرامة والحقوق.',
    'עברית: כל בני האדם נולדו בני חורין ושווים בערכם ובזכויותיהם.',
    'हिन्दी: सभी मनुष्यों को गौरव और अधिकारों के मामले में जन्मजात स्वतन्त्रता और समानता प्राप्त है।',
    'Русский: Все люди рождаются свободными и равными в своем достоинстве и правах.',
    'Ελληνικά: Όλοι οι άνθρωποι γεννιούνται ελεύθεροι και ίσοι στην αξιοπρέπεια και τα δικαιώματα.',
    'ไทย: มนุษย์ทั้งหลายเกิดมามีอิสระและเสมอภาคกันในเกียรติศักดิ์และสิทธิ',
  ];
  const doc = await text(Buffer.from(lines.join('\n') + '\n', 'utf8'), 'udhr.txt');
  t.equal(doc.content, lines.join('\n'));
  t.match(doc.metadata, { format: 'text', encoding: 'utf-8', line_count: lines.length });
});

t.test('a 3 MB text file is read whole', async (t) => {
  const chapter = (n: number) =>
    `CHAPTER ${n}\n\n${Array.from({ length: 60 }, (_, i) => `"Well, Prince," said line ${i} of chapter ${n}, "so Genoa and Lucca are now just family estates."`).join('\n')}\n`;
  const book = Array.from({ length: 540 }, (_, i) => chapter(i + 1)).join('\n');
  t.ok(book.length > 3_000_000, `${book.length} chars`);
  const doc = await within(text(Buffer.from(book, 'utf8'), 'book.txt'), 'reading a 3 MB text');
  t.equal(doc.content, book.trimEnd());
  t.match(doc.content, /^CHAPTER 1\n\n"Well, Prince," said line 0 of chapter 1/);
  t.match(doc.metadata, { format: 'text', line_count: book.trimEnd().split('\n').length });
});
