/** Word numbering: label formats and the counting rules, on hand-written numbering/styles parts. */
import t from 'tap';
import { createNumberer, formatNumber, readNumberingDefinitions, type ParagraphNumbering } from '../../src/extractors/docx/docx-numbering.ts';

const W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"';

function lvl(ilvl: number, fmt: string, text: string, extra = ''): string {
  return `<w:lvl w:ilvl="${ilvl}">${extra}<w:numFmt w:val="${fmt}"/><w:lvlText w:val="${text}"/></w:lvl>`;
}

function numbering(body: string): Buffer {
  return Buffer.from(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:numbering ${W}>${body}</w:numbering>`);
}

function styles(body: string): Buffer {
  return Buffer.from(`<?xml version="1.0"?><w:styles ${W}>${body}</w:styles>`);
}

/** Labels of a paragraph sequence ('' for unnumbered, the bullet text for bullets). */
function labels(numXml: Buffer, stylesXml: Buffer | undefined, paras: ParagraphNumbering[]): string[] {
  const next = createNumberer(readNumberingDefinitions(numXml, stylesXml));
  return paras.map((p) => next(p)?.text ?? '');
}

const OUTLINE = numbering(
  `<w:abstractNum w:abstractNumId="0">${lvl(0, 'decimal', '%1.')}${lvl(1, 'decimal', '%1.%2.')}${lvl(2, 'decimal', '%1.%2.%3.')}</w:abstractNum>` +
    `<w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num>`,
);

t.test('formats', async (t) => {
  t.equal(formatNumber(4, 'decimal'), '4');
  t.equal(formatNumber(14, 'lowerRoman'), 'xiv');
  t.equal(formatNumber(1994, 'upperRoman'), 'MCMXCIV');
  t.equal(formatNumber(1, 'lowerLetter'), 'a');
  t.equal(formatNumber(26, 'upperLetter'), 'Z');
  t.equal(formatNumber(28, 'lowerLetter'), 'bb', 'Word repeats the letter after z');
  t.equal(formatNumber(7, 'decimalZero'), '07');
  t.equal(formatNumber(22, 'ordinal'), '22nd');
  t.equal(formatNumber(12, 'ordinal'), '12th');
  t.equal(formatNumber(3, 'chineseCounting'), '3', 'unmodelled formats fall back to digits');
});

t.test('multilevel outline: nested counters, resets, skipped levels show their start', async (t) => {
  const p = (ilvl: number): ParagraphNumbering => ({ numId: '1', ilvl });
  t.same(labels(OUTLINE, undefined, [p(0), p(1), p(1), p(2), p(0), p(2), p(1), {}]), [
    '1.', '1.1.', '1.2.', '1.2.1.', '2.', '2.1.1.', '2.2.', '',
  ]);
});

t.test('numbering from paragraph styles, through basedOn, and numId 0 switching it off', async (t) => {
  const st = styles(
    `<w:style w:type="paragraph" w:styleId="Heading1"><w:name w:val="heading 1"/><w:pPr><w:numPr><w:numId w:val="1"/></w:numPr></w:pPr></w:style>` +
      `<w:style w:type="paragraph" w:styleId="Heading2"><w:name w:val="heading 2"/><w:pPr><w:numPr><w:ilvl w:val="1"/><w:numId w:val="1"/></w:numPr></w:pPr></w:style>` +
      `<w:style w:type="paragraph" w:styleId="Appendix"><w:basedOn w:val="Heading2"/></w:style>`,
  );
  t.same(
    labels(OUTLINE, st, [
      { styleId: 'Heading1' },
      { styleId: 'Heading2' },
      { styleId: 'Appendix' },
      { styleId: 'Heading2', numId: '0' },
      { styleId: 'Heading1' },
      { styleId: 'Normal' },
    ]),
    ['1.', '1.1.', '1.2.', '', '2.', ''],
  );
});

t.test('lists sharing an abstract definition continue; a startOverride starts a list of its own', async (t) => {
  const xml = numbering(
    `<w:abstractNum w:abstractNumId="0">${lvl(0, 'decimal', '%1.', '<w:start w:val="1"/>')}</w:abstractNum>` +
      `<w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num>` +
      `<w:num w:numId="2"><w:abstractNumId w:val="0"/></w:num>` +
      `<w:num w:numId="3"><w:abstractNumId w:val="0"/><w:lvlOverride w:ilvl="0"><w:startOverride w:val="1"/></w:lvlOverride></w:num>`,
  );
  const p = (numId: string): ParagraphNumbering => ({ numId, ilvl: 0 });
  t.same(labels(xml, undefined, [p('1'), p('1'), p('2'), p('3'), p('3'), p('1')]), ['1.', '2.', '3.', '1.', '2.', '4.']);
});

t.test('formats per level, literal text, start values, isLgl, lvlRestart 0, bullets and none', async (t) => {
  const xml = numbering(
    `<w:abstractNum w:abstractNumId="0">` +
      lvl(0, 'upperRoman', 'Article %1', '<w:start w:val="4"/>') +
      lvl(1, 'lowerLetter', '(%2)', '<w:lvlRestart w:val="0"/>') +
      lvl(2, 'decimal', '%1.%2.%3', '<w:isLgl/>') +
      `</w:abstractNum>` +
      `<w:abstractNum w:abstractNumId="1">${lvl(0, 'bullet', '•')}${lvl(1, 'none', '')}</w:abstractNum>` +
      `<w:num w:numId="5"><w:abstractNumId w:val="0"/></w:num><w:num w:numId="6"><w:abstractNumId w:val="1"/></w:num>`,
  );
  const next = createNumberer(readNumberingDefinitions(xml));
  const a = next({ numId: '5', ilvl: 0 });
  t.match(a, { text: 'Article IV', simple: false, bullet: false, value: 4, level: 0 });
  t.equal(next({ numId: '5', ilvl: 1 })?.text, '(a)');
  t.equal(next({ numId: '5', ilvl: 2 })?.text, '4.1.1', 'isLgl shows every level in digits');
  t.equal(next({ numId: '5', ilvl: 0 })?.text, 'Article V');
  t.equal(next({ numId: '5', ilvl: 1 })?.text, '(b)', 'lvlRestart 0: never restarts');
  t.match(next({ numId: '6', ilvl: 0 }), { text: '•', bullet: true });
  t.match(next({ numId: '6', ilvl: 1 }), { text: '', bullet: false });
});

t.test('simple labels are what a Markdown ordered list shows', async (t) => {
  const xml = numbering(
    `<w:abstractNum w:abstractNumId="0">${lvl(0, 'decimal', '%1)')}${lvl(1, 'decimal', '%1.%2')}</w:abstractNum>` +
      `<w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num>`,
  );
  const next = createNumberer(readNumberingDefinitions(xml));
  t.match(next({ numId: '1', ilvl: 0 }), { text: '1)', simple: true });
  t.match(next({ numId: '1', ilvl: 1 }), { text: '1.1', simple: false });
});

t.test('numStyleLink resolves to the definition that holds the levels', async (t) => {
  const xml = numbering(
    `<w:abstractNum w:abstractNumId="0"><w:styleLink w:val="Outline"/>${lvl(0, 'upperLetter', '%1.')}</w:abstractNum>` +
      `<w:abstractNum w:abstractNumId="1"><w:numStyleLink w:val="Outline"/></w:abstractNum>` +
      `<w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num>` +
      `<w:num w:numId="2"><w:abstractNumId w:val="1"/></w:num>`,
  );
  const st = styles(`<w:style w:type="numbering" w:styleId="Outline"><w:pPr><w:numPr><w:numId w:val="1"/></w:numPr></w:pPr></w:style>`);
  t.same(labels(xml, st, [{ numId: '2', ilvl: 0 }, { numId: '2', ilvl: 0 }]), ['A.', 'B.']);
});

t.test('a level linked to a paragraph style (w:pStyle) numbers that style', async (t) => {
  const xml = numbering(
    `<w:abstractNum w:abstractNumId="0">${lvl(0, 'decimal', '%1.')}${lvl(1, 'decimal', '%1.%2.', '<w:pStyle w:val="Sub"/>')}</w:abstractNum>` +
      `<w:num w:numId="3"><w:abstractNumId w:val="0"/></w:num>`,
  );
  const st = styles(`<w:style w:type="paragraph" w:styleId="Sub"><w:pPr><w:numPr><w:numId w:val="3"/></w:numPr></w:pPr></w:style>`);
  t.same(labels(xml, st, [{ numId: '3', ilvl: 0 }, { styleId: 'Sub' }, { styleId: 'Sub' }]), ['1.', '1.1.', '1.2.']);
});

t.test('damaged or missing parts give no labels instead of an error', async (t) => {
  t.same(labels(Buffer.from('<w:numbering'), undefined, [{ numId: '1', ilvl: 0 }]), ['']);
  t.same(labels(numbering(''), undefined, [{ numId: '1', ilvl: 0 }]), ['']);
  t.same(labels(OUTLINE, Buffer.from('<!DOCTYPE x [<!ENTITY a "b">]><w:styles/>'), [{ numId: '1', ilvl: 0 }]), ['1.']);
});

t.test('a custom format in mc:AlternateContent reads as its standard fallback', async (t) => {
  const xml = numbering(
    `<w:abstractNum w:abstractNumId="0"><w:lvl w:ilvl="0"><mc:AlternateContent><mc:Choice Requires="w14"><w:numFmt w:val="custom" w:format="001, 002, 003, ..."/></mc:Choice>` +
      `<mc:Fallback><w:numFmt w:val="decimalZero"/></mc:Fallback></mc:AlternateContent><w:lvlText w:val="%1."/></w:lvl></w:abstractNum>` +
      `<w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num>`,
  );
  t.same(labels(xml, undefined, [{ numId: '1', ilvl: 0 }]), ['01.']);
});
