/**
 * PDF text-layer extraction: generated PDFs with exact content (page markers, page spans,
 * metadata, reading order, rotation, blank pages, passwords, damage) and the born-digital corpus
 * PDFs measured for word recall against their ground truth. No page here needs OCR, which the
 * tests prove by checking that no OCR worker was ever started.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { OcrPool } from '../../src/extractors/ocr-pool.ts';
import { extractPdf, pdfDate } from '../../src/extractors/pdf.ts';
import {
  makeBlankPagePdf,
  makeMultiPagePdf,
  makePasswordPdf,
  makeRotatedPdf,
  makeTwoColumnPdf,
  MULTI_PAGE,
  TWO_COLUMNS,
} from '../../scripts/fixtures/make-pdf-fixtures.ts';
import { wordRecall } from './word-recall.ts';

const CORPUS = path.resolve(import.meta.dirname, '../../../shared/corpus/pdf');
const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pdf-test-ocr-'));
const ocr = new OcrPool({ size: 1, cacheDir });
t.teardown(async () => {
  await ocr.close();
  fs.rmSync(cacheDir, { recursive: true, force: true });
});

const run = (bytes: Buffer, signal: AbortSignal = AbortSignal.timeout(120_000)) => extractPdf({ bytes, filename: 'x.pdf', signal }, { ocr });
const corpus = (name: string) => fs.readFileSync(path.join(CORPUS, name));

t.test('multi-page PDF: page markers, exact text, page spans and metadata', async (t) => {
  const doc = await run(await makeMultiPagePdf());
  t.equal(doc.kind, 'pdf');
  t.equal(doc.pages.length, 3);
  doc.pages.forEach((span, i) => {
    t.equal(span.unit, 'page');
    t.equal(span.number, i + 1);
    const slice = doc.content.slice(span.start, span.end);
    t.ok(slice.startsWith(`--- Page ${i + 1} ---\n`), `span ${i + 1} starts at its marker`);
    for (const line of MULTI_PAGE.pages[i]) t.ok(slice.includes(line), `page ${i + 1} holds "${line}"`);
    for (const [j, other] of MULTI_PAGE.pages.entries()) if (j !== i) t.notOk(slice.includes(other[0]), `page ${i + 1} does not hold page ${j + 1}`);
  });
  t.equal(doc.pages[2].end, doc.content.length);
  t.equal(doc.content.indexOf('--- Page 1 ---'), 0);
  t.ok(doc.content.indexOf('--- Page 2 ---') < doc.content.indexOf('Beta page heading'));
  t.match(doc.metadata, {
    title: MULTI_PAGE.title,
    author: MULTI_PAGE.author,
    page_count: 3,
    creation_date: '2024-03-14T12:00:00.000Z',
    encrypted: false,
    ocr_pages: [],
  });
  t.equal(doc.ocr, undefined);
  t.equal(ocr.stats().started, 0, 'no OCR for pages with a text layer');
});

t.test('two columns are read column by column under the full-width heading', async (t) => {
  const doc = await run(await makeTwoColumnPdf());
  const body = doc.content.replace(/^--- Page 1 ---\n/, '').split('\n').filter(Boolean);
  t.same(body, [TWO_COLUMNS.heading, ...TWO_COLUMNS.left, ...TWO_COLUMNS.right]);
});

t.test('a page with /Rotate 90 reads upright', async (t) => {
  const doc = await run(await makeRotatedPdf());
  t.equal(doc.content, '--- Page 1 ---\nRotated fixture first line\nRotated fixture second line');
  const real = await run(corpus('rotated-page-90.pdf'));
  t.match(real.content, /Hello World Test Text/);
});

t.test('blank pages keep their marker and are not sent to OCR', async (t) => {
  const doc = await run(await makeBlankPagePdf());
  t.equal(doc.content, '--- Page 1 ---\n\n\n--- Page 2 ---\nOnly the second page has text on it.');
  t.same(doc.metadata.ocr_pages, []);
  const corpusDoc = await run(corpus('layout-parser-paper-with-empty-pages.pdf'));
  t.equal(corpusDoc.pages.length, 4);
  t.same(corpusDoc.metadata.ocr_pages, [], 'blank corpus pages 2 and 3 are not OCR candidates');
  t.equal(corpusDoc.content.slice(corpusDoc.pages[1].start, corpusDoc.pages[1].end), '--- Page 2 ---\n');
  t.match(corpusDoc.content.slice(corpusDoc.pages[0].start, corpusDoc.pages[0].end), /LayoutParser/);
  t.equal(ocr.stats().started, 0);
});

t.test('password-protected PDFs fail with PROCESSING_ERROR saying so', async (t) => {
  await t.rejects(run(await makePasswordPdf()), { code: 'PROCESSING_ERROR', message: /password-protected/ });
  await t.rejects(run(corpus('password.pdf')), { code: 'PROCESSING_ERROR', message: /password-protected/ });
  const owner = await run(corpus('copy-protected.pdf'));
  t.equal(owner.metadata.encrypted, true, 'an owner-password-only PDF opens');
  t.equal(owner.pages.length, 2);
  t.match(owner.content, /LayoutParser/);
});

t.test('damaged input: truncated files give what survives, junk is a PROCESSING_ERROR', async (t) => {
  const full = corpus('redp5110_sampled.pdf');
  const cut = await run(full.subarray(0, 150_000));
  t.equal(cut.metadata.repaired, true);
  t.match(cut.content, /Center of Excellence/, 'text of the pages that survived the cut');
  await t.rejects(run(Buffer.from('%PDF-1.4\nthis is not really a pdf at all\n')), { code: 'PROCESSING_ERROR' });
  await t.rejects(run(Buffer.from('plain text, no header')), { code: 'PROCESSING_ERROR', message: /%PDF-/ });
  await t.rejects(run(Buffer.alloc(0)), { code: 'PROCESSING_ERROR' });
});

t.test('an aborted signal stops extraction with a coded error', async (t) => {
  const ac = new AbortController();
  ac.abort();
  await t.rejects(run(await makeMultiPagePdf(), ac.signal), { code: 'TIMEOUT' });
  const slow = new AbortController();
  const pending = run(corpus('pdf2image-memory-error-test-400p.pdf'), slow.signal);
  setTimeout(() => slow.abort(), 300);
  await t.rejects(pending, { code: 'TIMEOUT' });
});

t.test('a 400-page PDF is read whole, in bounded time', async (t) => {
  const started = Date.now();
  const doc = await run(corpus('pdf2image-memory-error-test-400p.pdf'));
  t.equal(doc.pages.length, 400);
  t.equal(doc.metadata.page_count, 400);
  t.equal(doc.pages[399].end, doc.content.length);
  t.match(doc.content, /--- Page 400 ---/);
  t.ok(doc.content.length > 300_000);
  t.ok(Date.now() - started < 90_000, `took ${Date.now() - started} ms`);
});

const RECALL: Array<[string, number]> = [
  ['test.pdf', 0.95],
  ['2305.03393v1-pg9.pdf', 0.95],
  ['redp5110_sampled.pdf', 0.95],
  ['REPAIR-2022-INV-001_multipage.pdf', 0.95],
  ['RECEIPT-2024-TXN-98765_retail_purchase.pdf', 0.95],
  // Arabic lam-alef ligatures come out of this file's font maps in visual order.
  ['right_to_left_01.pdf', 0.9],
];

for (const [name, min] of RECALL) {
  t.test(`born-digital corpus: ${name} word recall >= ${min}`, async (t) => {
    const doc = await run(corpus(name));
    const r = wordRecall(fs.readFileSync(path.join(CORPUS, `${name}.expected.md`), 'utf8'), doc.content);
    t.ok(r.recall >= min, `recall ${r.recall.toFixed(3)} (${r.found}/${r.total}); missing: ${r.missing.slice(0, 20).join(' ')}`);
    t.same(doc.metadata.ocr_pages, []);
  });
}

t.test('corpus specifics: must-include phrase, page counts, metadata', async (t) => {
  const paper = await run(corpus('test.pdf'));
  t.match(paper.content.replace(/\s+/g, ' '), 'While there is contemporaneous exploration of multi-agent approaches');
  const repair = await run(corpus('REPAIR-2022-INV-001_multipage.pdf'));
  t.equal(repair.pages.length, 3);
  t.match(repair.content, /ZAVA AUTO REPAIR/);
  t.match(repair.content, /Preliminary Estimate \(ID: EST-1008\)/);
  const redbook = await run(corpus('redp5110_sampled.pdf'));
  t.equal(redbook.metadata.page_count, 18);
  const big = await run(corpus('pdf2image-memory-error-test-400p.pdf'));
  t.match(big.metadata, { title: '2.3.59 (Rev 12/22)', author: 'NPC, Inc. 12/12/2022' });
});

t.test('pdfDate parses PDF date strings', async (t) => {
  t.equal(pdfDate("D:20231005000756Z00'00'"), '2023-10-05T00:07:56.000Z');
  t.equal(pdfDate("D:20221208053309-05'00'"), '2022-12-08T10:33:09.000Z');
  t.equal(pdfDate('D:2021'), '2021-01-01T00:00:00.000Z');
  t.equal(pdfDate('yesterday'), undefined);
  t.equal(pdfDate(42), undefined);
});
