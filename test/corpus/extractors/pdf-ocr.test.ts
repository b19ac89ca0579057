/**
 * The corpus scans (CORPUS_DIR/pdf, no text layer): pages are rendered and OCR'd through one
 * shared pool, listed in ocr_pages, sideways scans are turned upright, and the OCR run stops on
 * the caller's signal. test/extractors/pdf-ocr.test.ts covers the same on generated scans.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { OcrPool } from '../../../src/extractors/ocr/ocr-pool.ts';
import { extractPdf } from '../../../src/extractors/pdf/pdf.ts';
import { wordRecall } from '../../extractors/word-recall.ts';
import { readCorpus, readCorpusText } from '../data-dirs.ts';
import { TESSDATA_DIR } from '../tessdata.ts';
import { pollUntil, turnsUntilSettled } from '../../poll.ts';

const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pdf-ocr-corpus-'));
// With a traineddata folder: orientation detection (osd) is on, as in a server with TESSDATA_DIR.
const ocr = new OcrPool({ size: 2, cacheDir, tessdataDir: TESSDATA_DIR });
t.teardown(async () => {
  await ocr.close();
  fs.rmSync(cacheDir, { recursive: true, force: true });
});

const run = (bytes: Buffer, signal: AbortSignal = AbortSignal.timeout(240_000)) => extractPdf({ bytes, filename: 'scan.pdf', signal }, { ocr });
const corpus = (name: string) => readCorpus(`pdf/${name}`);
const oneLine = (s: string) => s.replace(/\s+/g, ' ');

t.test('corpus scan ocr_test.pdf reads its sentence (recall vs ground truth)', async (t) => {
  const doc = await run(corpus('ocr_test.pdf'));
  t.same(doc.metadata.ocr_pages, [1]);
  t.match(oneLine(doc.content), 'Docling bundles PDF document conversion to JSON and Markdown in an easy self contained package');
  const r = wordRecall(readCorpusText('pdf/ocr_test.pdf.expected.md'), doc.content);
  t.ok(r.recall >= 0.85, `recall ${r.recall}`);
});

t.test('a scan turned sideways (/Rotate 270 over rotated content) is read upright', async (t) => {
  const doc = await run(corpus('ocr_test_rotated_90.pdf'));
  t.same(doc.metadata.ocr_pages, [1]);
  t.same(doc.metadata.ocr_rotated_pages, [1]);
  const r = wordRecall(readCorpusText('pdf/ocr_test_rotated_90.pdf.expected.md'), doc.content);
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

t.test('OCR of a long scan stops when the signal aborts', async (t) => {
  const ac = new AbortController();
  const pending = run(corpus('MEDRPT-2024-PAT-3847_medical_report_scan.pdf'), ac.signal);
  // Aborted once a page is being recognised; counted in event-loop turns, the call rejects within a
  // few (the worker is dropped), where waiting for the page would let the loop spin freely.
  await pollUntil(() => ocr.stats().busy > 0, 'a page being recognised', { everyMs: 5 });
  const { turns, error } = await turnsUntilSettled(pending, () => ac.abort());
  t.match(error, { code: 'TIMEOUT' });
  t.ok(turns <= 5, `rejected ${turns} turns after the abort`);
  const after = await run(corpus('ocr_test.pdf'));
  t.match(oneLine(after.content), 'Docling bundles PDF document conversion', 'the pool still works after an abort');
});
