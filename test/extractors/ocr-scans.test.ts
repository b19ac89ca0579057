/**
 * Scans without hidden limits: `ocr: auto | always | never`, a garbled invisible text layer
 * counting as none, scanned pages beyond the per-call cap marked where they stand, blank scans
 * skipped before recognition, an upside-down page turned (with orientation detection and without),
 * and a PDF declaring a 50,000 x 50,000 image refused (413) before pdf.js decodes anything. All fixtures are generated here.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { OcrPool } from '../../src/extractors/ocr/ocr-pool.ts';
import { extractPdf } from '../../src/extractors/pdf/pdf.ts';
import type { OcrRequest } from '../../src/extractors/shared/types.ts';
import { judgeTextLayer } from '../../src/extractors/pdf/ocr-text-layer.ts';
import { scanPdfImages } from '../../src/extractors/pdf/ocr-render-budget.ts';
import { makeScannedPdf, scannedPageLines, SCANNED_LINES, makeMultiPagePdf, MULTI_PAGE } from '../fixtures-gen/make-pdf-fixtures.ts';
import { GARBLED_LAYER, GARBLED_PAGE_LINES, makeBlankScanImage, makeGarbledLayerPdf, makeHugeImagePdf, pdfOfImages } from '../fixtures-gen/make-ocr-fixtures.ts';
import { makeTextImage } from '../fixtures-gen/make-pdf-fixtures.ts';
import { within } from '../poll.ts';

const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ocr-scans-test-'));
const ocr = new OcrPool({ size: 2, cacheDir });
t.teardown(async () => {
  await ocr.close();
  fs.rmSync(cacheDir, { recursive: true, force: true });
});
const run = (bytes: Buffer, request?: OcrRequest) =>
  extractPdf({ bytes, filename: 'scan.pdf', signal: AbortSignal.timeout(240_000), ...(request ? { ocr: request } : {}) }, { ocr });
const STRIP = { pageHeight: 300 };
const pageText = (doc: Awaited<ReturnType<typeof run>>, n: number) => doc.content.slice(doc.pages[n - 1].start, doc.pages[n - 1].end);

t.test('a garbled text layer counts as none in auto: the page is OCR\'d; never keeps the layer', async (t) => {
  t.same(judgeTextLayer(GARBLED_LAYER.join('\n')), { garbled: true, reason: 'spaced_letters' });
  t.same(judgeTextLayer('Aaalggfitted wrrtqq Bxxzkkle pprtsghh Tlllmmq zzkqwv xqqrtl Bbbnnnk mmmrrt qqzzk ttrrwq Ppppq'), { garbled: true, reason: 'non_words' });
  t.same(judgeTextLayer(MULTI_PAGE.pages.flat().join('\n')), { garbled: false }, 'ordinary prose is not garbled');
  t.same(judgeTextLayer('تحسين الإنتاجية وحل المشكلات من خلال البرمجة بلغة R و Python و C و SQL و Go و من الأدوات القوية التي يمكن أن تعزز a b c d e f g h i j k l'), { garbled: false }, 'a non-Latin layer with Latin bits is not judged');
  t.same(judgeTextLayer('Figure 2 shows rows A and B of the grid, where cell C is empty and D holds the harbour map of the town'), { garbled: false }, 'a few single letters are fine');

  const bytes = await makeGarbledLayerPdf();
  const auto = await run(bytes);
  t.same(auto.metadata.ocr_pages, [1]);
  t.same(auto.metadata.ocr_garbled_text_pages, [1]);
  for (const line of GARBLED_PAGE_LINES) t.match(auto.content, line, `OCR text: ${line}`);
  t.notMatch(auto.content, /Aaalggfitted|A l e t t e r/, 'the garbled layer is gone');

  const never = await run(bytes, { mode: 'never' });
  t.same(never.metadata.ocr_pages, []);
  t.equal(never.metadata.ocr_mode, 'never');
  t.match(never.content, 'Aaalggfitted', 'never keeps the text layer as it is');
});

t.test('always OCRs pages that have a good text layer too', async (t) => {
  // The three pages as strips 160 pt tall: the same lines, a fifth of the pixels to OCR.
  const bytes = await makeMultiPagePdf({ pageHeight: 160 });
  const auto = await run(bytes);
  t.same(auto.metadata.ocr_pages, [], 'auto leaves a born-digital PDF alone');
  const always = await run(bytes, { mode: 'always' });
  t.equal(always.metadata.ocr_mode, 'always');
  t.same(always.metadata.ocr_pages, MULTI_PAGE.pages.map((_, i) => i + 1));
  t.match(pageText(always, 1), MULTI_PAGE.pages[0][0], 'OCR reads the rendered text');
  t.equal((always.metadata.ocr_page_ms as number[]).length, MULTI_PAGE.pages.length);
});

t.test('scanned pages beyond the cap are marked in the content where they stand', async (t) => {
  const doc = await run(await makeScannedPdf(0, 3, STRIP), { maxPages: 2 });
  t.same(doc.metadata.ocr_pages, [1, 2]);
  t.same(doc.metadata.ocr_skipped_pages, [3]);
  t.equal(doc.metadata.ocr_max_pages, 2);
  t.match(pageText(doc, 1), SCANNED_LINES[0]);
  t.match(pageText(doc, 2), scannedPageLines(2)[0]);
  const third = pageText(doc, 3);
  t.match(third, /^--- Page 3 ---\n\[Page 3 not read: it is a scanned page beyond the first 2 that one call OCRs \(OCR_MAX_PAGES\)/);
  t.match(third, /knowledge-base job, which OCRs every page/);
});

t.test('a blank scan is skipped before recognition; an upside-down scan is turned', async (t) => {
  const blank = await run(await pdfOfImages([makeBlankScanImage(), await makeTextImage()], 150));
  t.same(blank.metadata.ocr_blank_pages, [1]);
  t.same(blank.metadata.ocr_pages, [2], 'only the page with text is recognised');
  t.equal(pageText(blank, 1).trim(), '--- Page 1 ---', 'nothing invented for the blank page');

  // Turned by orientation detection: its data comes with the npm install (@tesseract.js-data/osd).
  t.equal(ocr.languageInfo().orientation_detection, true);
  const flipped = await run(await makeScannedPdf(180, 1, STRIP));
  t.same(flipped.metadata.ocr_rotated_pages, [1]);
  for (const line of SCANNED_LINES) t.match(flipped.content, line);
});

t.test('without orientation detection an upside-down scan is still turned (by reading turned copies)', async (t) => {
  const pool = new OcrPool({ size: 1, cacheDir: path.join(cacheDir, 'no-osd'), orientationDetection: false });
  t.teardown(() => pool.close());
  t.equal(pool.languageInfo().orientation_detection, false);
  t.equal(await pool.detectOrientation(await makeTextImage()), null, 'no osd asked');
  const flipped = await extractPdf({ bytes: await makeScannedPdf(180, 1, STRIP), filename: 'scan.pdf', signal: AbortSignal.timeout(240_000) }, { ocr: pool });
  t.same(flipped.metadata.ocr_rotated_pages, [1]);
  for (const line of SCANNED_LINES) t.match(flipped.content, line);
});

t.test('a PDF declaring a 50,000 x 50,000 image is refused before decoding; the size scan reads declared sizes', async (t) => {
  const huge = makeHugeImagePdf();
  t.match(scanPdfImages(huge), { count: 1, maxWidth: 50_000, maxHeight: 50_000, maxPixels: 2_500_000_000 });
  // The message names the declared size: the scan refused it, before any decoding (the deadline
  // only bounds a failure).
  await t.rejects(within(run(huge), 'the refusal'), { code: 'PAYLOAD_TOO_LARGE', message: /50000x50000-pixel image.*at most 60 megapixels/ });
  const normal = await makeScannedPdf(0, 1, STRIP);
  t.match(scanPdfImages(normal), { count: 1, maxWidth: 1400 });
  t.ok((await run(normal, { mode: 'never' })).content.startsWith('--- Page 1 ---'), 'never OCRs nothing and needs no image check');
});
