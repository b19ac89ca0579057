/**
 * PDF_MAX_PAGES: pages beyond it are not parsed, one note stands where they would, and metadata
 * counts them; the page loop gives the call's signal its turn on every page, so a timed-out call
 * on a huge page count stops instead of reading to the end. PDFs are generated object by object
 * (test/fixtures-gen/make-many-page-pdf.ts) and served from a loopback server.
 */
import t from 'tap';
import { buildLocalApp, post, startStaticServer } from '../integration/helpers.ts';
import { makeManyPagePdf, manyPageText } from '../fixtures-gen/make-many-page-pdf.ts';
import { extractPdf } from '../../src/extractors/pdf/pdf.ts';
import { OcrPool } from '../../src/extractors/ocr/ocr-pool.ts';
import { tempDir } from '../helper.ts';

const PAGES = 12_000;
const NOTE = /--- Page 51 ---\n\[Pages 51-12000 not read: the PDF has 12,000 pages and one call reads the first 50 \(PDF_MAX_PAGES\)\. Split the PDF, or raise PDF_MAX_PAGES on the server\.\]$/;

t.test('pages beyond PDF_MAX_PAGES are noted, not read (REST, through the extraction children)', async (t) => {
  const app = await buildLocalApp(t, { PDF_MAX_PAGES: '50' });
  const srv = await startStaticServer(t);
  const url = srv.add('register.pdf', makeManyPagePdf(PAGES), 'application/pdf');

  const res = await post(app, '/v1/documents/process', { document_url: url, max_chars: 50_000 });
  t.equal(res.status, 200, JSON.stringify(res.body).slice(0, 500));
  t.match(res.body.metadata, { page_count: PAGES, pages_total: PAGES, pages_read: 50, truncated: true, pdf_max_pages: 50 });
  t.match(res.body.content, `--- Page 50 ---\n${manyPageText(50)}`);
  t.notMatch(res.body.content, manyPageText(51), 'page 51 was not parsed');
  t.match(res.body.content, NOTE, 'one note for the whole unread range, where it would stand');
  t.equal(res.body.content.match(/not read/g).length, 1);

  const text = await post(app, '/v1/extract/pdf', { document_url: url });
  t.equal(text.status, 200);
  t.match(text.body.text, NOTE);
  t.match(text.body.metadata, { pages_total: PAGES, pages_read: 50, truncated: true });

  const chunks = await post(app, '/v1/documents/chunk', { document_url: url });
  t.equal(chunks.status, 200);
  const last = chunks.body.chunks.at(-1);
  t.match(last.text, /Pages 51-12000 not read/, 'a chunk carries the note too');
  t.equal(last.page_end, 51);
});

t.test('a PDF within PDF_MAX_PAGES has no page-limit fields', async (t) => {
  const app = await buildLocalApp(t, { PDF_MAX_PAGES: '50' });
  const srv = await startStaticServer(t);
  const url = srv.add('short.pdf', makeManyPagePdf(50), 'application/pdf');
  const res = await post(app, '/v1/extract/pdf', { document_url: url });
  t.equal(res.status, 200);
  t.equal(res.body.metadata.page_count, 50);
  t.notOk('pages_total' in res.body.metadata || 'truncated' in res.body.metadata || 'pages_read' in res.body.metadata);
  t.notMatch(res.body.text, /not read/);
  t.match(res.body.text, manyPageText(50));
});

t.test('the page loop sees its signal abort while pdf.js reads page after page', async (t) => {
  const pool = new OcrPool({ size: 1, cacheDir: tempDir(t) });
  t.teardown(() => pool.close());
  const bytes = makeManyPagePdf(40_000);
  // Well before 40,000 pages are read; pdf.js alone never gives the timer a turn.
  await t.rejects(extractPdf({ bytes, pdfMaxPages: 1_000_000, signal: AbortSignal.timeout(300) }, { ocr: pool }), { code: 'TIMEOUT' });
});
