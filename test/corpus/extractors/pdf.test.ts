/**
 * PDF text-layer extraction on the born-digital corpus PDFs (CORPUS_DIR/pdf): word recall against
 * their ground truth, a real /Rotate 90 page, blank pages, passwords, a truncated copy, a 400-page
 * manual. No page here needs OCR, which the tests prove by checking that no OCR worker was ever
 * started. The scans are read in pdf-ocr.test.ts; test/extractors/pdf.test.ts covers the same
 * behaviours on generated PDFs.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { OcrPool } from '../../../src/extractors/ocr/ocr-pool.ts';
import { extractPdf } from '../../../src/extractors/pdf/pdf.ts';
import { wordRecall } from '../../extractors/word-recall.ts';
import { corpusPath, readCorpus, readCorpusText } from '../data-dirs.ts';

const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pdf-corpus-ocr-'));
const ocr = new OcrPool({ size: 1, cacheDir });
t.teardown(async () => {
  await ocr.close();
  fs.rmSync(cacheDir, { recursive: true, force: true });
});

const run = (bytes: Buffer, signal: AbortSignal = AbortSignal.timeout(120_000)) => extractPdf({ bytes, filename: 'x.pdf', signal }, { ocr });
const corpus = (name: string) => readCorpus(`pdf/${name}`);
// Each file is extracted once and shared by the tests below (the 400-page manual takes seconds).
const results = new Map<string, ReturnType<typeof run>>();
const read = (name: string) => {
  if (!results.has(name)) results.set(name, run(corpus(name)));
  return results.get(name)!;
};

const BIG = 'pdf2image-memory-error-test-400p.pdf';

/** Born-digital files and the word recall each must reach against its expected.md. */
const RECALL: Record<string, number> = {
  'test.pdf': 0.95,
  '2305.03393v1-pg9.pdf': 0.95,
  'redp5110_sampled.pdf': 0.95,
  'REPAIR-2022-INV-001_multipage.pdf': 0.95,
  'RECEIPT-2024-TXN-98765_retail_purchase.pdf': 0.95,
  // Arabic lam-alef ligatures come out of this file's font maps in visual order.
  'right_to_left_01.pdf': 0.9,
};
/** Other born-digital files, checked by the tests below. */
const OTHER = new Set(['rotated-page-90.pdf', 'copy-protected.pdf', BIG, 'layout-parser-paper-with-empty-pages.pdf']);
/** Image-only scans (no text layer): read in pdf-ocr.test.ts. */
const SCANNED = new Set(['ocr_test.pdf', 'ocr_test_rotated_90.pdf', 'MEDRPT-2024-PAT-3847_medical_report_scan.pdf']);
/** Files that must fail, with their code (MANIFEST.tsv: password.pdf needs the user password 'password'). */
const EXPECTED_FAILURES: Record<string, string> = { 'password.pdf': 'PROCESSING_ERROR' };

t.test('every corpus PDF is listed; every readable one has a text layer and needs no OCR', async (t) => {
  const files = fs.readdirSync(corpusPath('pdf')).filter((f) => f.endsWith('.pdf')).sort();
  t.ok(files.length >= 14, `${files.length} files`);
  for (const f of files) {
    t.ok(f in RECALL || OTHER.has(f) || SCANNED.has(f) || f in EXPECTED_FAILURES, `${f} is listed`);
    if (SCANNED.has(f)) continue;
    if (f in EXPECTED_FAILURES) {
      await t.rejects(read(f), { code: EXPECTED_FAILURES[f] }, `${f}: ${EXPECTED_FAILURES[f]}`);
      continue;
    }
    const doc = await read(f);
    t.ok(doc.content.replace(/--- Page \d+ ---/g, '').trim().length > 0, `${f}: text`);
    t.equal(doc.pages.length, doc.metadata.page_count, `${f}: one span per page`);
    t.same(doc.metadata.ocr_pages, [], `${f}: no OCR candidates`);
  }
  t.equal(ocr.stats().started, 0, 'no OCR worker was started');
});

t.test('a real page with /Rotate 90 reads upright', async (t) => {
  t.match((await read('rotated-page-90.pdf')).content, /Hello World Test Text/);
});

t.test('blank corpus pages keep their marker and are not OCR candidates', async (t) => {
  const doc = await read('layout-parser-paper-with-empty-pages.pdf');
  t.equal(doc.pages.length, 4);
  t.same(doc.metadata.ocr_pages, [], 'blank pages 2 and 3 are not OCR candidates');
  t.equal(doc.content.slice(doc.pages[1].start, doc.pages[1].end), '--- Page 2 ---\n');
  t.match(doc.content.slice(doc.pages[0].start, doc.pages[0].end), /LayoutParser/);
  t.equal(ocr.stats().started, 0);
});

t.test('password.pdf fails saying so; an owner-password-only PDF opens', async (t) => {
  await t.rejects(read('password.pdf'), { code: 'PROCESSING_ERROR', message: /password-protected/ });
  const owner = await read('copy-protected.pdf');
  t.equal(owner.metadata.encrypted, true);
  t.equal(owner.pages.length, 2);
  t.match(owner.content, /LayoutParser/);
});

t.test('a truncated copy gives the pages that survived', async (t) => {
  const cut = await run(corpus('redp5110_sampled.pdf').subarray(0, 150_000));
  t.equal(cut.metadata.repaired, true);
  t.match(cut.content, /Center of Excellence/, 'text of the pages that survived the cut');
});

t.test('the 400-page manual: read whole (within the call\'s 2-minute signal), and an abort stops it', async (t) => {
  const slow = new AbortController();
  const pending = run(corpus(BIG), slow.signal);
  setTimeout(() => slow.abort(), 300);
  await t.rejects(pending, { code: 'TIMEOUT' });
  const doc = await read(BIG);
  t.equal(doc.pages.length, 400);
  t.equal(doc.metadata.page_count, 400);
  t.equal(doc.pages[399].end, doc.content.length);
  t.match(doc.content, /--- Page 400 ---/);
  t.ok(doc.content.length > 300_000);
  t.match(doc.metadata, { title: '2.3.59 (Rev 12/22)', author: 'NPC, Inc. 12/12/2022' });
});

for (const [name, min] of Object.entries(RECALL)) {
  t.test(`born-digital corpus: ${name} word recall >= ${min}`, async (t) => {
    const doc = await read(name);
    const r = wordRecall(readCorpusText(`pdf/${name}.expected.md`), doc.content);
    t.ok(r.recall >= min, `recall ${r.recall.toFixed(3)} (${r.found}/${r.total}); missing: ${r.missing.slice(0, 20).join(' ')}`);
    t.same(doc.metadata.ocr_pages, []);
  });
}

t.test('corpus specifics: must-include phrase, page counts', async (t) => {
  const paper = await read('test.pdf');
  t.match(paper.content.replace(/\s+/g, ' '), 'While there is contemporaneous exploration of multi-agent approaches');
  const repair = await read('REPAIR-2022-INV-001_multipage.pdf');
  t.equal(repair.pages.length, 3);
  t.match(repair.content, /ZAVA AUTO REPAIR/);
  t.match(repair.content, /Preliminary Estimate \(ID: EST-1008\)/);
  t.equal((await read('redp5110_sampled.pdf')).metadata.page_count, 18);
  t.equal(ocr.stats().started, 0);
});
