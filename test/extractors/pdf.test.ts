/**
 * PDF text-layer extraction on generated PDFs with exact content: page markers, page spans,
 * metadata, reading order, rotation, blank pages, passwords, damage, a long document. No page here
 * needs OCR, which the tests prove by checking that no OCR worker was ever started. The
 * born-digital corpus PDFs are in test/corpus/extractors/pdf.test.ts.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { OcrPool } from '../../src/extractors/ocr/ocr-pool.ts';
import { extractPdf, pdfDate } from '../../src/extractors/pdf/pdf.ts';
import {
  EMBEDDED_FONT_LINES,
  LONG_PDF,
  makeBlankPagePdf,
  makeEmbeddedFontPdf,
  makeLongPdf,
  makeMultiPagePdf,
  makeOwnerProtectedPdf,
  makePasswordPdf,
  makeRotatedPdf,
  makeTwoColumnPdf,
  MULTI_PAGE,
  OWNER_PROTECTED_PAGES,
  TWO_COLUMNS,
} from '../fixtures-gen/make-pdf-fixtures.ts';
import { within } from '../poll.ts';

const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pdf-test-ocr-'));
const ocr = new OcrPool({ size: 1, cacheDir });
t.teardown(async () => {
  await ocr.close();
  fs.rmSync(cacheDir, { recursive: true, force: true });
});

const run = (bytes: Buffer, signal: AbortSignal = AbortSignal.timeout(120_000)) => extractPdf({ bytes, filename: 'x.pdf', signal }, { ocr });
// Generated once per file and shared by the tests below.
const LONG_PAGES = 120;
const LONG_LINES = 8;
const long = makeLongPdf(LONG_PAGES, LONG_LINES);
const multi = makeMultiPagePdf();

t.test('multi-page PDF: page markers, exact text, page spans and metadata', async (t) => {
  const doc = await run(await multi);
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

t.test("Flate-compressed pages are inflated by pdf.js's own decoder, not the web-stream DecompressionStream", async (t) => {
  const bytes = await makeMultiPagePdf();
  t.ok(bytes.toString('latin1').includes('/FlateDecode'), 'the fixture compresses its page contents');
  const doc = await run(bytes);
  for (const lines of MULTI_PAGE.pages) for (const line of lines) t.match(doc.content, line);
  t.notOk('DecompressionStream' in globalThis, 'a process that loaded pdf.js goes without the global (useInflaterOfPdfjs)');
});

t.test('an embedded subset TrueType font (as word processors write PDFs): accents, symbols, Greek, Cyrillic, ligatures', async (t) => {
  const doc = await run(await makeEmbeddedFontPdf());
  t.equal(doc.content, ['--- Page 1 ---', ...EMBEDDED_FONT_LINES].join('\n'));
  t.match(doc.metadata, { title: 'Embedded font fixture', page_count: 1, encrypted: false, ocr_pages: [] });
  t.equal(ocr.stats().started, 0);
});

t.test('two columns are read column by column under the full-width heading', async (t) => {
  const doc = await run(await makeTwoColumnPdf());
  const body = doc.content.replace(/^--- Page 1 ---\n/, '').split('\n').filter(Boolean);
  t.same(body, [TWO_COLUMNS.heading, ...TWO_COLUMNS.left, ...TWO_COLUMNS.right]);
});

t.test('a page with /Rotate 90 reads upright', async (t) => {
  const doc = await run(await makeRotatedPdf());
  t.equal(doc.content, '--- Page 1 ---\nRotated fixture first line\nRotated fixture second line');
});

t.test('blank pages keep their marker and are not sent to OCR', async (t) => {
  const doc = await run(await makeBlankPagePdf());
  t.equal(doc.content, '--- Page 1 ---\n\n\n--- Page 2 ---\nOnly the second page has text on it.');
  t.same(doc.metadata.ocr_pages, []);
  t.same(doc.pages.map((p) => [p.number, doc.content.slice(p.start, p.end)]), [
    [1, '--- Page 1 ---\n'],
    [2, '--- Page 2 ---\nOnly the second page has text on it.'],
  ]);
  t.equal(ocr.stats().started, 0);
});

t.test('password-protected PDFs fail with PROCESSING_ERROR saying so', async (t) => {
  await t.rejects(run(await makePasswordPdf()), { code: 'PROCESSING_ERROR', message: /password-protected/ });
  const owner = await run(await makeOwnerProtectedPdf());
  t.equal(owner.metadata.encrypted, true, 'an owner-password-only PDF opens');
  t.equal(owner.metadata.title, 'Copy-protected fixture');
  t.equal(owner.content, OWNER_PROTECTED_PAGES.map((text, i) => `--- Page ${i + 1} ---\n${text}`).join('\n\n'));
  t.equal(owner.pages.length, 2);
});

t.test('damaged input: truncated files give what survives, junk is a PROCESSING_ERROR', async (t) => {
  const full = await long;
  const cut = await run(full.subarray(0, Math.floor(full.length * 0.4)));
  t.equal(cut.metadata.repaired, true);
  // Pages whose objects survived come back whole; a page whose content stream was cut is empty.
  const whole = (p: number) => [`--- Page ${p} ---`, ...Array.from({ length: LONG_LINES }, (_, l) => LONG_PDF.line(p, l + 1))].join('\n');
  const texts = cut.pages.map((p) => cut.content.slice(p.start, p.end).trimEnd());
  const read = texts.filter((text, i) => text === whole(i + 1)).length;
  t.ok(read > 10 && read < LONG_PAGES, `${read} of ${LONG_PAGES} pages survived the cut`);
  t.same(texts.slice(0, read), Array.from({ length: read }, (_, i) => whole(i + 1)), 'the surviving pages come first, in order');
  t.ok(texts.slice(read).every((text, i) => text === `--- Page ${read + i + 1} ---`), 'pages after the cut are markers only');
  await t.rejects(run(Buffer.from('%PDF-1.4\nthis is not really a pdf at all\n')), { code: 'PROCESSING_ERROR' });
  await t.rejects(run(Buffer.from('plain text, no header')), { code: 'PROCESSING_ERROR', message: /%PDF-/ });
  await t.rejects(run(Buffer.alloc(0)), { code: 'PROCESSING_ERROR' });
});

t.test('an aborted signal stops extraction with a coded error', async (t) => {
  const ac = new AbortController();
  ac.abort();
  await t.rejects(run(await multi, ac.signal), { code: 'TIMEOUT' });
  // Aborted on the first turn of the event loop, while the long document is being read.
  const slow = new AbortController();
  const pending = run(await long, slow.signal);
  setTimeout(() => slow.abort(), 0);
  await t.rejects(pending, { code: 'TIMEOUT' });
});

t.test('a long PDF is read whole, every page in order, in bounded time', async (t) => {
  const bytes = await long;
  const doc = await within(run(bytes), `reading ${LONG_PAGES} pages`);
  t.equal(doc.pages.length, LONG_PAGES);
  t.match(doc.metadata, { page_count: LONG_PAGES, title: LONG_PDF.title, author: LONG_PDF.author, ocr_pages: [] });
  t.equal(doc.pages.at(-1)!.end, doc.content.length);
  const expected = Array.from({ length: LONG_PAGES }, (_, p) =>
    [`--- Page ${p + 1} ---`, ...Array.from({ length: LONG_LINES }, (_, l) => LONG_PDF.line(p + 1, l + 1))].join('\n'),
  ).join('\n\n');
  t.equal(doc.content, expected, 'exact content of all pages');
  t.equal(ocr.stats().started, 0);
});

t.test('pdfDate parses PDF date strings', async (t) => {
  t.equal(pdfDate("D:20231005000756Z00'00'"), '2023-10-05T00:07:56.000Z');
  t.equal(pdfDate("D:20221208053309-05'00'"), '2022-12-08T10:33:09.000Z');
  t.equal(pdfDate('D:2021'), '2021-01-01T00:00:00.000Z');
  t.equal(pdfDate('yesterday'), undefined);
  t.equal(pdfDate(42), undefined);
});
