/**
 * The content-stream look that spares a page pdf.js's operator list: a text-only page cannot hold a
 * ruled table, a page drawing a grid may, and pdf-lib's uncompressed and compressed outputs read alike.
 */
import t from 'tap';
import { PDFDocument, StandardFonts, type PDFFont, type PDFPage } from 'pdf-lib';
import { loadPdf } from '../../src/extractors/pdf/pdf-render.ts';
import { RawPdf, type PdfRef } from '../../src/extractors/pdf/pdf-raw-objects.ts';
import { mayHaveRules } from '../../src/extractors/pdf/pdf-rule-hint.ts';
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
