/**
 * Reading-order reconstruction from positioned text items (no PDF needed): words joined where
 * there are gaps, lines in order, two columns read column by column, tables row by row,
 * sideways text read in its own direction, RTL lines, hyphenation across lines.
 */
import t from 'tap';
import { HYPHEN_BREAK, resolveHyphenBreaks } from '../../src/extractors/pdf/pdf-hyphens.ts';
import { layoutPage, layoutPageText, type PositionedTextItem } from '../../src/extractors/pdf/pdf-layout.ts';

/** An upright item at (x, baseline y) in device space (y grows downwards). */
function item(str: string, x: number, y: number, size = 10, extra: Partial<PositionedTextItem> = {}): PositionedTextItem {
  return { str, transform: [size, 0, 0, size, x, y], width: str.length * size * 0.5, height: size, ...extra };
}

t.test('words on one baseline join with single spaces, touching pieces without', async (t) => {
  const text = layoutPageText([item('Hello', 10, 100), item('wor', 50, 100), item('ld', 65, 100)]);
  t.equal(text, 'Hello world');
});

t.test('lines come out top to bottom regardless of item order', async (t) => {
  const text = layoutPageText([item('third line', 10, 124), item('first line', 10, 100), item('second line', 10, 112)]);
  t.equal(text, 'first line\nsecond line\nthird line');
});

t.test('two columns with shared baselines are read column by column', async (t) => {
  const items = [item('A Heading That Spans Both Columns Of The Page', 10, 40, 14)];
  for (let i = 0; i < 4; i++) {
    items.push(item(`left column sentence number ${i}`, 10, 100 + i * 12));
    items.push(item(`right column sentence number ${i}`, 300, 100 + i * 12));
  }
  const text = layoutPageText(items);
  const lines = text.split('\n').filter(Boolean);
  t.equal(lines[0], 'A Heading That Spans Both Columns Of The Page');
  t.same(lines.slice(1, 5), [0, 1, 2, 3].map((i) => `left column sentence number ${i}`));
  t.same(lines.slice(5), [0, 1, 2, 3].map((i) => `right column sentence number ${i}`));
});

t.test('a numeric table is read row by row, as a pipe table', async (t) => {
  const items: PositionedTextItem[] = [];
  const rows = [['Year', 'Sales', 'Cost'], ['2022', '100', '80'], ['2023', '120', '90']];
  rows.forEach((row, r) => row.forEach((cell, c) => items.push(item(cell, 10 + c * 120, 100 + r * 14))));
  t.equal(layoutPageText(items), '| Year | Sales | Cost |\n| --- | --- | --- |\n| 2022 | 100 | 80 |\n| 2023 | 120 | 90 |');
  const page = layoutPage(items);
  t.equal(page.tables.length, 1);
  t.same(page.tables[0].headers, ['Year', 'Sales', 'Cost']);
});

t.test('line-end hyphens: split words are joined, real compounds keep the hyphen', async (t) => {
  const lines = (...ls: string[]) => ls.map((l, i) => item(l, 10, 100 + i * 12));
  // Both parts are words found elsewhere on the page, the joined form is not.
  t.equal(
    layoutPageText(lines('a chat model is', 'our chat-', 'optimized model was optimized', 'for dialogue')),
    'a chat model is\nour chat-optimized model was optimized\nfor dialogue',
  );
  // A common compound tail keeps its hyphen without other evidence.
  t.equal(layoutPageText(lines('it is conversation-', 'centric by design')), 'it is conversation-centric by design');
  // A fragment that is no word joins.
  t.equal(layoutPageText(lines('the experi-', 'ment works')), 'the experiment works');
  // The joined form elsewhere wins over two words that happen to exist.
  t.equal(layoutPageText(lines('some-', 'thing and something else and some thing')), 'something and something else and some thing');
  // The hyphenated form elsewhere keeps the hyphen.
  t.equal(layoutPageText(lines('a pre-', 'trained and a pre-trained model')), 'a pre-trained and a pre-trained model');
});

t.test('hyphen breaks are decided with the whole document', async (t) => {
  const marked = layoutPage([item('our multi-', 10, 100), item('modal model', 10, 112)]).text;
  t.match(marked, HYPHEN_BREAK);
  t.same(resolveHyphenBreaks([marked, 'multimodal appears here']), ['our multimodal model', 'multimodal appears here']);
  t.same(resolveHyphenBreaks([marked, 'multi-modal appears here']), ['our multi-modal model', 'multi-modal appears here']);
});

t.test('a drawn space keeps Korean words apart even where the glyph gap is tiny', async (t) => {
  // Hangul syllables one em wide with a narrow space glyph (0.1 em) between words.
  const ko = (str: string, x: number, y = 100): PositionedTextItem => ({ str, transform: [10, 0, 0, 10, x, y], width: str.length * 10, height: 10 });
  const items = [ko('개선과제는', 10), ko(' ', 60), ko('무엇인가', 61)];
  t.equal(layoutPageText(items), '개선과제는 무엇인가');
  // In a table row too: cells keep the spaces between their words.
  const cells = [ko('항목', 10, 100), ko('내용', 200, 100), ko('개선', 10, 114), ko(' ', 30, 114), ko('과제', 31, 114), ko('품질', 200, 114), ko(' ', 220, 114), ko('향상', 221, 114)];
  const page = layoutPage(cells);
  t.equal(page.tables.length, 1);
  t.same(page.tables[0].rows, [['항목', '내용'], ['개선 과제', '품질 향상']]);
});

t.test('sideways text is read in its own direction after the main text', async (t) => {
  const up = (str: string, x: number, y: number): PositionedTextItem => ({ str, transform: [0, -10, 10, 0, x, y], width: str.length * 5, height: 10 });
  const text = layoutPageText([item('Main body text here', 100, 100), item('more body text', 100, 112), up('arXiv:1234.5678 stamp', 20, 500)]);
  t.equal(text, 'Main body text here\nmore body text\n\narXiv:1234.5678 stamp');
});

t.test('right-to-left lines read right to left with a space at script changes', async (t) => {
  const text = layoutPageText([
    item('\u0645\u0631\u062d\u0628\u0627', 200, 100, 10, { dir: 'rtl' }),
    item('Python', 160, 100, 10, { dir: 'ltr', width: 40 }),
  ]);
  t.equal(text, '\u0645\u0631\u062d\u0628\u0627 Python');
});

t.test('a word hyphenated across lines is joined; duplicates from fake bold dropped', async (t) => {
  const text = layoutPageText([item('the experi-', 10, 100), item('ment works', 10, 112), item('ment works', 10.2, 112)]);
  t.equal(text, 'the experiment works');
});

t.test('control characters and empty items are ignored', async (t) => {
  t.equal(layoutPageText([item('  ', 10, 100), item('a\u0000b\u00ad', 10, 120)]), 'ab');
  t.equal(layoutPageText([]), '');
});
