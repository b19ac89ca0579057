/**
 * Scanned PDFs, generated (image-only pages, no text layer): pages are rendered and OCR'd through
 * one shared pool, listed in ocr_pages, sideways scans are turned upright, and the OCR run stops
 * on the caller's signal. The corpus scans are in test/corpus/extractors/pdf-ocr.test.ts.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { OcrPool } from '../../src/extractors/ocr/ocr-pool.ts';
import { extractPdf } from '../../src/extractors/pdf/pdf.ts';
import { turnsUntilSettled } from '../poll.ts';
import { makeScannedPdf, SCANNED_LINES, scannedPageLines } from '../fixtures-gen/make-pdf-fixtures.ts';

const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pdf-ocr-test-'));
const ocr = new OcrPool({ size: 2, cacheDir });
t.teardown(async () => {
  await ocr.close();
  fs.rmSync(cacheDir, { recursive: true, force: true });
});

const run = (bytes: Buffer, signal: AbortSignal = AbortSignal.timeout(240_000)) => extractPdf({ bytes, filename: 'scan.pdf', signal }, { ocr });
// Automatic page segmentation puts a blank line between text blocks; the lines themselves are exact.
const lines = (s: string) => s.split('\n').filter((l) => l.trim());
// Strip-sized pages (the text image and a margin, not a whole Letter page) keep OCR short.
const STRIP = { pageHeight: 300 };

t.test('a generated two-page scan is OCR\'d page by page with its exact words', async (t) => {
  const doc = await run(await makeScannedPdf(0, 2, STRIP));
  t.same(doc.metadata.ocr_pages, [1, 2]);
  t.equal(doc.metadata.title, 'Scanned fixture');
  t.same(
    lines(doc.content),
    [1, 2].flatMap((n) => [`--- Page ${n} ---`, ...scannedPageLines(n)]),
    'exact lines, one page marker per page',
  );
  t.same(doc.pages.map((p) => [p.number, p.unit]), [[1, 'page'], [2, 'page']]);
  t.equal(doc.pages[1].end, doc.content.length);
  t.ok(doc.ocr, 'OCR detail is attached');
  t.same(doc.ocr!.pages, [1, 2]);
  t.ok(doc.ocr!.confidence > 80, `confidence ${doc.ocr!.confidence}`);
  t.same(doc.ocr!.words.slice(0, 3).map((w) => w.text), SCANNED_LINES[0].split(' '));
  t.ok(doc.ocr!.words.every((w) => w.confidence > 0));
  t.ok(ocr.stats().started <= 2, 'at most two workers for two pages');
});

t.test('a sideways scan (/Rotate 90): OCR stops when the signal aborts mid-run; then the pool reads it upright', async (t) => {
  const bytes = await makeScannedPdf(90, 1, STRIP);
  const ac = new AbortController();
  const pending = run(bytes, ac.signal);
  // Abort once the page is being recognised (not before the run reaches OCR).
  const deadline = Date.now() + 60_000;
  while (ocr.stats().busy === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  t.ok(ocr.stats().busy > 0, 'the page was being recognised');
  // Counted in event-loop turns: the worker is dropped at the abort, so the call rejects within a
  // few turns; had it waited for the page's recognition, the loop would spin freely meanwhile.
  const { turns, error } = await turnsUntilSettled(pending, () => ac.abort());
  t.match(error, { code: 'TIMEOUT' });
  t.ok(turns <= 5, `rejected ${turns} turns after the abort`);

  const doc = await run(bytes);
  t.same(doc.metadata.ocr_pages, [1]);
  // Automatic page segmentation reads the vertical lines itself; turning the page is then not needed.
  t.ok(doc.metadata.ocr_rotated_pages === undefined || String(doc.metadata.ocr_rotated_pages) === '1', `rotated pages ${doc.metadata.ocr_rotated_pages}`);
  t.same(lines(doc.content), ['--- Page 1 ---', ...SCANNED_LINES], 'read in order after the abort');
});
