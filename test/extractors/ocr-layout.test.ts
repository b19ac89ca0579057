/**
 * OCR page layout: the pool sets tesseract's automatic page segmentation (mode 3) itself, so a
 * two-column scan reads column by column (word 4-grams in reference order) and every row of a
 * table image survives. Mode 6 (what tesseract.js starts in) is run on the same image to show the
 * mode is really in effect: it interleaves the columns.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { extractImage } from '../../src/extractors/image/image.ts';
import { OcrPool } from '../../src/extractors/ocr/ocr-pool.ts';
import { extractPdf } from '../../src/extractors/pdf/pdf.ts';
import { COLUMN_REFERENCE, makeTableImage, makeTwoColumnImage, pdfOfImages, TABLE_ROWS } from '../fixtures-gen/make-ocr-fixtures.ts';
import { ngramOrder } from './ocr-order.ts';
import { wordRecall } from './word-recall.ts';

const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ocr-layout-test-'));
const ocr = new OcrPool({ size: 1, cacheDir });
t.teardown(async () => {
  await ocr.close();
  fs.rmSync(cacheDir, { recursive: true, force: true });
});
const signal = () => AbortSignal.timeout(240_000);
const columns = makeTwoColumnImage();

t.test('a two-column image reads column by column', async (t) => {
  const doc = await extractImage({ bytes: columns, signal: signal() }, { ocr });
  const order = ngramOrder(COLUMN_REFERENCE, doc.content);
  t.ok(order >= 0.95, `4-gram order ${order.toFixed(3)}`);
  t.equal(wordRecall(COLUMN_REFERENCE, doc.content).recall, 1, 'every word');
  t.ok(doc.content.indexOf('Engineers expect') < doc.content.indexOf('Library volunteers'), 'the left column comes first');
  t.same(doc.metadata.ocr_languages, ['eng']);
  t.type(doc.metadata.ocr_ms, 'number');
});

t.test('the page segmentation mode is in effect: mode 6 interleaves the columns, the default does not', async (t) => {
  const auto = await ocr.recognize(columns);
  const block = await ocr.recognize(columns, undefined, { psm: '6' });
  const again = await ocr.recognize(columns);
  const [a, b, c] = [auto, block, again].map((r) => ngramOrder(COLUMN_REFERENCE, r.text));
  t.ok(a >= 0.95, `default mode order ${a.toFixed(3)}`);
  t.ok(b < 0.8, `mode 6 order ${b.toFixed(3)} (interleaved)`);
  t.equal(c, a, 'the default mode is restored after a job that set another');
  t.equal(wordRecall(COLUMN_REFERENCE, block.text).recall, 1, 'mode 6 has the words, in the wrong order');
});

t.test('a scanned two-column PDF page keeps the reading order; a table image keeps every row', async (t) => {
  // Placed at 300 dpi, the page is rendered for OCR at the image's own 1700x1100 pixels (at 200
  // dpi it would be scaled up to 2550x1650: more pixels for tesseract, no other difference).
  const doc = await extractPdf({ bytes: await pdfOfImages([columns], 300), signal: signal() }, { ocr });
  t.same(doc.metadata.ocr_pages, [1]);
  const order = ngramOrder(COLUMN_REFERENCE, doc.content);
  t.ok(order >= 0.95, `PDF 4-gram order ${order.toFixed(3)}`);
  t.equal((doc.metadata.ocr_page_ms as number[]).length, 1, 'per-page time reported');

  const table = await extractImage({ bytes: makeTableImage(), signal: signal() }, { ocr });
  const lines = table.content.split('\n').map((l) => l.trim()).filter(Boolean);
  for (const row of TABLE_ROWS) t.ok(lines.includes(row.join(' ')), `row "${row.join(' ')}" read whole`);
});
