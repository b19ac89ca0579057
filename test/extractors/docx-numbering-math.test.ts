/**
 * End to end on a generated document: Word numbering on headings and lists, and equations, come
 * out of extractDocx as Word shows them.
 */
import t from 'tap';
import {
  Document,
  HeadingLevel,
  LevelFormat,
  Math as OfficeMath,
  MathFraction,
  MathRadical,
  MathRoundBrackets,
  MathRun,
  MathSum,
  MathSuperScript,
  Packer,
  Paragraph,
  TextRun,
} from 'docx';
import { extractDocx } from '../../src/extractors/docx/docx.ts';

const signal = new AbortController().signal;

async function makeDoc(): Promise<Buffer> {
  const item = (reference: string, level: number, text: string) => new Paragraph({ numbering: { reference, level }, text });
  const doc = new Document({
    numbering: {
      config: [
        {
          reference: 'outline',
          levels: [
            { level: 0, format: LevelFormat.DECIMAL, text: '%1.', start: 1 },
            { level: 1, format: LevelFormat.DECIMAL, text: '%1.%2.', start: 1 },
          ],
        },
        { reference: 'letters', levels: [{ level: 0, format: LevelFormat.LOWER_LETTER, text: '%1)', start: 1 }] },
        { reference: 'steps', levels: [{ level: 0, format: LevelFormat.DECIMAL, text: '%1.', start: 5 }] },
        { reference: 'roman', levels: [{ level: 0, format: LevelFormat.UPPER_ROMAN, text: 'Part %1', start: 1 }] },
      ],
    },
    sections: [
      {
        children: [
          new Paragraph({ heading: HeadingLevel.HEADING_1, numbering: { reference: 'outline', level: 0 }, text: 'Scope' }),
          new Paragraph({ heading: HeadingLevel.HEADING_2, numbering: { reference: 'outline', level: 1 }, text: 'Purpose' }),
          new Paragraph({ heading: HeadingLevel.HEADING_2, numbering: { reference: 'outline', level: 1 }, text: 'Audience' }),
          new Paragraph({ text: 'Plain text between sections.' }),
          new Paragraph({ heading: HeadingLevel.HEADING_1, numbering: { reference: 'outline', level: 0 }, text: 'Method' }),
          item('letters', 0, 'Collect samples'),
          item('letters', 0, 'Label jars'),
          item('steps', 0, 'Dry the filters'),
          item('steps', 0, 'Weigh the filters'),
          new Paragraph({ text: 'Between the parts.' }),
          item('roman', 0, 'Background'),
          item('roman', 0, 'Results'),
          new Paragraph({
            children: [
              new TextRun('Area: '),
              new OfficeMath({ children: [new MathRun('A=π'), new MathSuperScript({ children: [new MathRun('r')], superScript: [new MathRun('2')] })] }),
              new TextRun(' square metres.'),
            ],
          }),
          new Paragraph({
            children: [
              new OfficeMath({
                children: [
                  new MathSum({ children: [new MathRun('i')], subScript: [new MathRun('i=1')], superScript: [new MathRun('n')] }),
                  new MathRun('='),
                  new MathFraction({ numerator: [new MathRun('n'), new MathRoundBrackets({ children: [new MathRun('n+1')] })], denominator: [new MathRun('2')] }),
                  new MathRun('≤'),
                  new MathRadical({ children: [new MathRun('x')], degree: [new MathRun('3')] }),
                ],
              }),
            ],
          }),
        ],
      },
    ],
  });
  return Packer.toBuffer(doc);
}

t.test('generated document: numbered headings and lists, equations', async (t) => {
  const doc = await extractDocx({ bytes: await makeDoc(), signal });
  const c = doc.content;
  t.match(c, /^# 1\. Scope\n\n## 1\.1\. Purpose\n\n## 1\.2\. Audience\n\nPlain text between sections\.\n\n# 2\. Method\n/, 'heading numbers');
  t.match(c, '- a) Collect samples\n- b) Label jars\n\n5. Dry the filters\n6. Weigh the filters', 'letters as labelled bullets; decimals keep their start');
  t.match(c, '- Part I Background\n- Part II Results', 'literal text and roman numerals');
  t.match(c, 'Area: $A= \\pi r^{2}$ square metres.', 'inline equation');
  t.match(c, '$\\sum_{i=1}^{n}i=\\frac{n\\left(n+1\\right)}{2} \\leq \\sqrt[3]{x}$');
  t.notMatch(c, /[\uFDD0\uFDD1]/, 'no marker leaks');
  t.match(doc.metadata, { heading_count: 4, numbered_paragraph_count: 10, equation_count: 2 });
  t.same(doc.pages.map((p) => p.label).filter(Boolean), ['1. Scope', '1.1. Purpose', '1.2. Audience', '2. Method'], 'sections carry the numbered titles');
});
