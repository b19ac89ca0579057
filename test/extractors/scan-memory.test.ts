/**
 * High-resolution scans are OCR'd within a bounded amount of memory: the OCR canvas of any page
 * stays within the render pixel budget, a 600-dpi scan page is downsampled from its decoded image
 * (no full-size pdf.js render), and a generated 600-dpi scan uploaded to process_document is read.
 * The memory itself is measured by scripts/bench/scan-memory.bench.ts.
 */
import t from 'tap';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { buildTestApp } from '../helper.ts';
import { multipart } from '../integration/helpers.ts';
import { wordRecall } from './word-recall.ts';
import { makeScanPdf, scanPageJpeg } from '../fixtures-gen/make-scan-fixtures.ts';
import { loadPdf } from '../../src/extractors/pdf/pdf-render.ts';
import { MAX_RENDER_PIXELS, MAX_RENDER_SIDE } from '../../src/extractors/pdf/pdf-render.ts';
import { ocrCanvasSize, pageImageCanvas, singlePageImage } from '../../src/extractors/pdf/pdf-page-image.ts';

t.test('the OCR canvas of any page size stays within the pixel budget', async (t) => {
  const letter = ocrCanvasSize(612, 792);
  t.same([letter.width, letter.height], [2550, 3300], 'Letter at 300 dpi');
  // A0 poster, a 5 m banner, a tiny label: all within budget.
  for (const [w, h] of [[2384, 3370], [14_400, 300], [72, 72], [14_400, 14_400]] as const) {
    const s = ocrCanvasSize(w, h);
    t.ok(s.width * s.height <= MAX_RENDER_PIXELS * 1.01, `${w}x${h} pt -> ${s.width}x${s.height}`);
    t.ok(Math.max(s.width, s.height) <= MAX_RENDER_SIDE + 1, `${w}x${h} pt longest side`);
  }
});

t.test('a 600-dpi scan page is downsampled from its image to 300 dpi; other pages are not', async (t) => {
  const { pdf } = await makeScanPdf(1);
  const { doc } = await loadPdf(pdf, AbortSignal.timeout(60_000));
  t.teardown(() => doc.destroy());
  const page = await doc.getPage(1);
  const placement = await singlePageImage(page);
  t.match(placement, { x: 0, y: 0, width: 612, height: 792 }, 'the one full-page image is found');
  const canvas = await pageImageCanvas(page);
  t.ok(canvas, 'direct path taken');
  t.same([canvas!.width, canvas!.height], [2550, 3300], 'OCR-sized, not the 5100x6600 image');
  const px = canvas!.getContext('2d').getImageData(0, 0, canvas!.width, canvas!.height).data;
  let dark = 0;
  for (let i = 0; i < px.length; i += 4) if (px[i]! < 128) dark++;
  t.ok(dark > 10_000 && dark < px.length / 4 / 5, `the text is drawn (${dark} dark pixels)`);

  // Text next to the image: pdf.js renders the page as before.
  const mixed = await PDFDocument.create();
  const img = await mixed.embedJpg(scanPageJpeg(1, 150));
  const p = mixed.addPage([612, 792]);
  p.drawImage(img, { x: 0, y: 0, width: 612, height: 792 });
  p.drawText('caption', { x: 20, y: 20, size: 10, font: await mixed.embedFont(StandardFonts.Helvetica) });
  const { doc: doc2 } = await loadPdf(Buffer.from(await mixed.save()), AbortSignal.timeout(60_000));
  t.teardown(() => doc2.destroy());
  t.equal(await singlePageImage(await doc2.getPage(1)), null, 'a page with text is not a single image');
});

t.test('a generated two-page 600-dpi scan uploaded to process_document reads its words', async (t) => {
  // Full-size 600-dpi pages (5100 x 6600 pixels) with 8 lines of text each, not 24: the size is
  // what this is about, and tesseract's time grows with the text it reads.
  const { pdf, text } = await makeScanPdf(2, 600, 8);
  const app = await buildTestApp(t);
  const res = await app.inject({ method: 'POST', url: '/v1/documents/process', ...multipart({ bytes: pdf, filename: 'scan.pdf', contentType: 'application/pdf' }) });
  t.equal(res.statusCode, 200, res.body.slice(0, 300));
  const body = res.json() as { content: string; metadata: { ocr_pages?: number[] } };
  t.same(body.metadata.ocr_pages, [1, 2]);
  const r = wordRecall(text, body.content);
  t.ok(r.recall >= 0.97, `word recall ${r.recall.toFixed(3)} (missing: ${r.missing.slice(0, 10).join(' ')})`);
});
