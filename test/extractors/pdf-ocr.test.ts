/**
 * Scanned PDFs: pages without a text layer are rendered and OCR'd through the shared pool, listed
 * in ocr_pages, sideways scans are turned upright, and the OCR run stops on the caller's signal.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { OcrPool } from '../../src/extractors/ocr-pool.ts';
import { extractPdf } from '../../src/extractors/pdf.ts';
import { makeScannedPdf, SCANNED_LINES } from '../../scripts/fixtures/make-pdf-fixtures.ts';
import { wordRecall } from './word-recall.ts';

const CORPUS = path.resolve(import.meta.dirname, '../../../shared/corpus/pdf');
const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pdf-ocr-test-'));
const ocr = new OcrPool({ size: 2, cacheDir });
t.teardown(async () => {
  await ocr.close();
  fs.rmSync(cacheDir, { recursive: true, force: true });
});

const run = (bytes: Buffer, signal: AbortSignal = AbortSignal.timeout(240_000)) => extractPdf({ bytes, filename: 'scan.pdf', signal }, { ocr });
const corpus = (name: string) => fs.readFileSync(path.join(CORPUS, name));
const oneLine = (s: string) => s.replace(/\s+/g, ' ');

t.test('a generated image-only page is OCR\'d with its exact words', async (t) => {
  const doc = await run(await makeScannedPdf());
  t.same(doc.metadata.ocr_pages, [1]);
  t.equal(doc.metadata.title, 'Scanned fixture');
  for (const line of SCANNED_LINES) t.ok(doc.content.includes(line), `content has "${line}"`);
  t.ok(doc.content.startsWith('--- Page 1 ---\n'));
  t.equal(doc.pages[0].end, doc.content.length);
  t.ok(doc.ocr, 'OCR detail is attached');
  t.same(doc.ocr!.pages, [1]);
  t.ok(doc.ocr!.confidence > 80, `confidence ${doc.ocr!.confidence}`);
  t.ok(doc.ocr!.words.some((w) => w.text === 'INVOICE'));
  t.ok(doc.ocr!.words.every((w) => w.confidence > 0));
  t.ok(ocr.stats().started <= 2);
});

t.test('corpus scan ocr_test.pdf reads its sentence (recall vs ground truth)', async (t) => {
  const doc = await run(corpus('ocr_test.pdf'));
  t.same(doc.metadata.ocr_pages, [1]);
  t.match(oneLine(doc.content), 'Docling bundles PDF document conversion to JSON and Markdown in an easy self contained package');
  const r = wordRecall(fs.readFileSync(path.join(CORPUS, 'ocr_test.pdf.expected.md'), 'utf8'), doc.content);
  t.ok(r.recall >= 0.85, `recall ${r.recall}`);
});

t.test('a scan turned sideways (/Rotate 270 over rotated content) is read upright', async (t) => {
  const doc = await run(corpus('ocr_test_rotated_90.pdf'));
  t.same(doc.metadata.ocr_pages, [1]);
  t.same(doc.metadata.ocr_rotated_pages, [1]);
  const r = wordRecall(fs.readFileSync(path.join(CORPUS, 'ocr_test_rotated_90.pdf.expected.md'), 'utf8'), doc.content);
  t.ok(r.recall >= 0.85, `recall ${r.recall}; content: ${doc.content.slice(0, 200)}`);
});

t.test('the three-page medical report scan is OCR\'d page by page', async (t) => {
  const doc = await run(corpus('MEDRPT-2024-PAT-3847_medical_report_scan.pdf'));
  t.same(doc.metadata.ocr_pages, [1, 2, 3]);
  t.equal(doc.pages.length, 3);
  const page = (n: number) => oneLine(doc.content.slice(doc.pages[n - 1].start, doc.pages[n - 1].end));
  t.match(page(1), 'COMPREHENSIVE MEDICAL REPORT');
  t.match(page(1), 'Jonathan Michael Harrison');
  t.match(page(1), 'Date of Birth: March 15, 1978');
  t.match(page(1), 'VITAL SIGNS');
  t.match(page(2), 'PHYSICAL EXAMINATION');
  t.match(page(2), 'LABORATORY RESULTS');
  t.match(page(3), 'TREATMENT PLAN');
  t.match(page(3), 'HEADACHE MANAGEMENT');
});

t.test('OCR stops when the signal aborts', async (t) => {
  const ac = new AbortController();
  const pending = run(corpus('MEDRPT-2024-PAT-3847_medical_report_scan.pdf'), ac.signal);
  setTimeout(() => ac.abort(), 1500);
  const started = Date.now();
  await t.rejects(pending, { code: 'TIMEOUT' });
  t.ok(Date.now() - started < 10_000, 'rejected promptly');
  const after = await run(await makeScannedPdf());
  t.match(after.content, /INVOICE NUMBER 4521/, 'the pool still works after an abort');
});
