/**
 * The content-stream look that spares a page pdf.js's operator list: a text-only page cannot hold a
 * ruled table, a page drawing a grid may, and pdf-lib's uncompressed and compressed outputs read alike.
 */
import t from 'tap';
import { seededRandom } from '../seeded-random.ts';
import { PDFDocument, StandardFonts, type PDFFont, type PDFPage } from 'pdf-lib';
import { loadPdf } from '../../src/extractors/pdf/pdf-render.ts';
import { RawPdf, type PdfRef } from '../../src/extractors/pdf/pdf-raw-objects.ts';
import { mayHaveRules, pathPieces } from '../../src/extractors/pdf/pdf-rule-hint.ts';
import { pageRules } from '../../src/extractors/pdf/pdf-rules.ts';

async function pdf(draw: (page: PDFPage, font: PDFFont) => void, useObjectStreams: boolean): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  draw(doc.addPage([612, 792]), font);
  return Buffer.from(await doc.save({ useObjectStreams }));
}

async function verdict(bytes: Buffer): Promise<{ hint: boolean; rules: number }> {
  const { doc, pdfjs } = await loadPdf(bytes, AbortSignal.timeout(30_000), { textOnly: true });
  try {
    const page = await doc.getPage(1);
    const hint = mayHaveRules(new RawPdf(bytes), (page as unknown as { ref: PdfRef }).ref);
    return { hint, rules: (await pageRules(page, pdfjs)).length };
  } finally {
    await doc.destroy();
  }
}

const prose = (page: PDFPage, font: PDFFont) => {
  for (let i = 0; i < 20; i++) page.drawText(`Line ${i}: plain prose with no lines drawn at all, s and l and re as words`, { x: 72, y: 700 - i * 14, size: 10, font });
};
const grid = (page: PDFPage, font: PDFFont) => {
  const xs = [72, 140, 230, 280];
  const ys = [700, 684, 668, 652];
  for (const x of xs) page.drawLine({ start: { x, y: ys[0] }, end: { x, y: ys[ys.length - 1] }, thickness: 0.8 });
  for (const y of ys) page.drawLine({ start: { x: xs[0], y }, end: { x: xs[xs.length - 1], y }, thickness: 0.8 });
  page.drawText('Part', { x: 75, y: 689, size: 9, font });
};

for (const streams of [false, true]) {
  t.test(`object streams ${streams}: a text-only page has no rules to look for`, async (t) => {
    const v = await verdict(await pdf(prose, streams));
    t.equal(v.rules, 0);
    t.equal(v.hint, false);
  });
  t.test(`object streams ${streams}: a page drawing a grid may hold a ruled table`, async (t) => {
    const v = await verdict(await pdf(grid, streams));
    t.ok(v.rules >= 6, `${v.rules} rules listed`);
    t.equal(v.hint, true);
  });
}

t.test('a page the reader cannot resolve is looked at by pdf.js', async (t) => {
  t.equal(mayHaveRules(new RawPdf(Buffer.from('%PDF-1.4\n')), { num: 99, gen: 0 }), true);
  t.equal(mayHaveRules(new RawPdf(Buffer.from('%PDF-1.4\n')), null), true);
});

t.test('the byte scan counts path pieces exactly as the regular expression it replaced', async (t) => {
  // The expression pdf-rule-hint.ts used over the content as latin1 text.
  const PIECE_OPS = /(?:^|(?<=[\s()<>[\]{}]))(re|l|h|s|b\*?)(?=[\s()<>[\]{}/%]|$)/g;
  const byRegex = (text: string) => {
    let n = 0;
    for (const m of text.matchAll(PIECE_OPS)) n += m[1] === 're' ? 4 : 1;
    return n;
  };
  // Operators, near misses and every delimiter and whitespace byte (NBSP and NUL included).
  const parts = ['re', 'l', 'h', 's', 'b', 'b*', 'B', 'f*', 'rel', 'lh', 'Tj', 'Do', '1', '0.5', 're*', '*', 'rg', 'S', 'ls', ' ', ' ', '\n', '\r', '\t', '\f', '\v', '\u00a0', '\u0000', '\u0085', '(', ')', '<', '>', '[', ']', '{', '}', '/', '%', 'e', 'r'];
  const rand = seededRandom(42);
  const differing: string[] = [];
  let withPieces = 0;
  for (let i = 0; i < 3000; i++) {
    let text = '';
    const len = 1 + rand(80);
    for (let j = 0; j < len; j++) text += parts[rand(parts.length)];
    const bytes = Buffer.from(text, 'latin1');
    const want = byRegex(text);
    if (want >= 6) withPieces++;
    if (pathPieces(bytes, Infinity) !== want || pathPieces(bytes, 6) >= 6 !== want >= 6) differing.push(JSON.stringify(text));
  }
  t.same(differing, [], 'same count, and the same verdict when counting stops at 6');
  t.ok(withPieces > 100, `${withPieces} of the texts reach 6 pieces`);
  t.equal(pathPieces(Buffer.from('0 0 10 10 re\n1 1 m 2 2 l S\n', 'latin1'), Infinity), 5, 're counts 4, l 1, S (stroke) none');
  t.equal(pathPieces(Buffer.from('/re Do (l h s) Tj', 'latin1'), Infinity), 3, 'names are not operators, string bytes count (a doubt says "may")');
});

t.test('objects read through the caches are the ones a fresh reader parses', async (t) => {
  // Many pages under one /Pages node, objects in object streams: the memo and the stream cache serve most lookups.
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let i = 0; i < 40; i++) (i % 3 ? prose : grid)(doc.addPage([612, 792]), font);
  const bytes = Buffer.from(await doc.save({ useObjectStreams: true }));
  const { doc: loaded } = await loadPdf(bytes, AbortSignal.timeout(30_000), { textOnly: true });
  try {
    const shared = new RawPdf(bytes);
    for (let n = 1; n <= loaded.numPages; n++) {
      const ref = ((await loaded.getPage(n)) as unknown as { ref: PdfRef }).ref;
      t.equal(mayHaveRules(shared, ref), mayHaveRules(new RawPdf(bytes), ref), `page ${n}`);
      t.equal(mayHaveRules(shared, ref), (n - 1) % 3 === 0, `page ${n}: a grid page or not`);
      t.same(shared.get(ref), new RawPdf(bytes).get(ref), `page ${n}'s dictionary`);
    }
  } finally {
    await loaded.destroy();
  }
});
