/**
 * Every document tool through the real REST routes (app.inject) on generated files of every kind
 * served by a loopback static server (ALLOW_PRIVATE_NETWORKS=true), uploads as multipart and raw
 * bodies, the wrong kind of file, and the SSRF guard refusing a loopback URL when the opt-ins are
 * off. test/corpus/integration/document-tools-rest.test.ts does the same on the real corpus.
 */
import t from 'tap';
import { buildTestApp, testConfig } from '../helper.ts';
import { DOCX_FACTS, PPTX_FACTS } from '../fixtures-gen/make-office-fixtures.ts';
import { MULTI_PAGE } from '../fixtures-gen/make-pdf-fixtures.ts';
import { SALES_ROWS } from '../fixtures-gen/make-sheet-fixtures.ts';
import { CSV_FACTS, FIXTURE_NAMES, fixtureFiles, OCR_LINES, XLS_FACTS, type FixtureFiles } from '../fixtures-gen/documents.ts';
import { buildLocalApp, generatedRoot, makeLongPdf, multipart, post, PLANTED, startStaticServer } from './helpers.ts';

// Generated once per file: every fixture in a folder to serve, and a 10-page PDF (several chunks,
// PLANTED[0] on page 7) for the uploads.
let files: FixtureFiles;
let root: string;
let tenPages: Buffer;
t.before(async () => {
  files = await fixtureFiles();
  root = await generatedRoot(t);
  tenPages = await makeLongPdf(10);
});

t.test('every document tool over REST on generated files served from 127.0.0.1', async (t) => {
  const srv = await startStaticServer(t, root);
  const app = await buildLocalApp(t);
  const N = FIXTURE_NAMES;

  const processed = await post(app, '/v1/documents/process', { document_url: srv.url(N.pdf) });
  t.equal(processed.status, 200);
  t.equal(processed.body.document_type, 'pdf');
  t.equal(processed.body.source, srv.url(N.pdf));
  t.ok(processed.body.content.startsWith(`--- Page 1 ---\n${MULTI_PAGE.pages[0]![0]}`), 'page marker first');
  for (const line of MULTI_PAGE.pages.flat()) t.ok(processed.body.content.includes(line), line);
  t.equal(processed.body.content_length, processed.body.content.length);
  t.equal(processed.body.truncated, false);
  t.match(processed.body.metadata, { page_count: 3, ocr_pages: [], format: 'pdf', detected_by: 'magic', file_size: files.pdf.length, filename: N.pdf, title: MULTI_PAGE.title });
  t.same([processed.body.detected_language, processed.body.detected_language_name], ['en', 'English']);

  const docxText = (await post(app, '/v1/documents/process', { document_url: srv.url(N.docx) })).body.content as string;
  const chunked = await post(app, '/v1/documents/chunk', { document_url: srv.url(N.docx) });
  t.equal(chunked.status, 200);
  t.equal(chunked.body.document_type, 'docx');
  t.equal(chunked.body.chunk_count, chunked.body.chunks.length);
  t.ok(chunked.body.chunk_count >= 1);
  t.same(
    chunked.body.chunks.map((c: { chunk_index: number }) => c.chunk_index),
    [...Array(chunked.body.chunk_count).keys()],
  );
  t.ok(chunked.body.chunks.every((c: { total_chunks: number; text: string }) => c.total_chunks === chunked.body.chunk_count && c.text.length <= 5000));
  t.ok(
    chunked.body.chunks.every((c: { text: string; char_start: number; char_end: number }) => docxText.slice(c.char_start, c.char_end) === c.text),
    'every chunk is the slice of the extracted text at its offsets',
  );
  t.same(chunked.body.chunks[0].heading_path, [DOCX_FACTS.heading1]);
  t.ok(chunked.body.chunks.some((c: { text: string }) => c.text.includes(`## ${DOCX_FACTS.heading2}`)));

  const retrieved = await post(app, '/v1/documents/retrieve', { document_url: srv.url(N.pptx), query: 'full protocol online volunteers', top_k: 3 });
  t.equal(retrieved.status, 200);
  // The three short slides fit in one chunk (a deck under 5,000 chars chunks at 400): it spans them all.
  t.equal(retrieved.body.total_chunks_indexed, 1);
  t.equal(retrieved.body.results.length, 1);
  t.ok(retrieved.body.results[0].text.startsWith(`--- Slide 1 ---\n\n# ${PPTX_FACTS.slides[0]!.title}`));
  t.ok(retrieved.body.results[0].text.includes('Read the full protocol online'), 'the "Next steps" slide is in it');
  t.same([retrieved.body.results[0].page_start, retrieved.body.results[0].page_end], [1, 3], 'slides 1 to 3');
  t.ok(retrieved.body.results.every((r: { source: string }) => r.source === srv.url(N.pptx)));
  t.match(retrieved.body.retrieval, { mode: 'lexical', embedder: null, reranker: 'unavailable', top_k: 3, candidates: 20 });
  t.match(retrieved.body.retrieval.reason, /^lexical: no embedding model is available/);
  t.same(retrieved.body.retrieval.documents, [{ source: srv.url(N.pptx), document_type: 'pptx', chunks: retrieved.body.total_chunks_indexed, index: 'built', embedder: null }]);

  const queried = await post(app, '/v1/spreadsheets/query', { document_url: srv.url(N.xls), search_value: XLS_FACTS.uuid.slice(0, 8).toUpperCase() });
  t.equal(queried.status, 200);
  t.same(queried.body.matches, [{ sheet: 'Ledger', row_number: XLS_FACTS.uuidRow, row: { Alpha: 58, Beta: XLS_FACTS.uuid, Gamma: 22, Delta: 9 } }]);
  t.equal(queried.body.match_count, 1);
  t.same(queried.body.sheets_searched, XLS_FACTS.sheets.map((s) => s.name));
  t.equal(queried.body.document_type, 'xls');

  const pdf = await post(app, '/v1/extract/pdf', { document_url: srv.url(N.pdf) });
  t.equal(pdf.status, 200);
  t.equal(pdf.body.page_count, 3);
  t.same(pdf.body.ocr_pages, []);
  t.ok(pdf.body.text.startsWith(`--- Page 1 ---\n${MULTI_PAGE.pages[0]![0]}`));
  t.match(pdf.body.text, /--- Page 2 ---[\s\S]*--- Page 3 ---/);
  t.equal(pdf.body.char_count, pdf.body.text.length);

  const docx = await post(app, '/v1/extract/docx', { document_url: srv.url(N.docx) });
  t.equal(docx.status, 200);
  for (const s of [`# ${DOCX_FACTS.heading1}`, `## ${DOCX_FACTS.heading2}`, `### ${DOCX_FACTS.heading3}`, DOCX_FACTS.paragraph, '| South lagoon | 13 | 21 |']) {
    t.ok(docx.body.text.includes(s), `docx has ${s}`);
  }
  t.equal(docx.body.table_count, 1);

  const pptx = await post(app, '/v1/extract/pptx', { document_url: srv.url(N.pptx) });
  t.equal(pptx.status, 200);
  t.equal(pptx.body.slide_count, PPTX_FACTS.slides.length);
  PPTX_FACTS.slides.forEach((slide, i) => t.ok(pptx.body.text.includes(`--- Slide ${i + 1} ---\n\n# ${slide.title}`), `pptx slide ${i + 1}`));

  const xlsx = await post(app, '/v1/extract/xlsx', { document_url: srv.url(N.xlsx) });
  t.equal(xlsx.status, 200);
  t.equal(xlsx.body.table_count, 3);
  t.same(
    xlsx.body.tables.map((x: { location: string; metadata: { rows: number; columns: number } }) => [x.location, x.metadata.rows, x.metadata.columns]),
    [
      ['sheet:Sales', SALES_ROWS, 6],
      ['sheet:Inventory', 3, 3],
      ['sheet:Notes', 1, 1],
    ],
  );
  t.ok(xlsx.body.tables[0].content.includes('| Region | Product | Units | Price | Total | Date |\n| --- | --- | --- | --- | --- | --- |'));
  t.ok(xlsx.body.tables[1].content.includes('| Widget | 120 | 2024-02-29T13:45:30 |'));

  const csv = await post(app, '/v1/extract/csv', { document_url: srv.url(N.csv) });
  t.equal(csv.status, 200);
  t.equal(csv.body.table_count, 1);
  t.match(csv.body.tables[0].metadata, { delimiter: 'semicolon', encoding: 'utf-8', rows: CSV_FACTS.rows.length, columns: CSV_FACTS.headers.length });
  t.ok(csv.body.tables[0].content.includes('Dominguez;Mcmillan and Donovan'), 'a quoted delimiter stays in its cell');

  // The one OCR call of the suite: a small generated image of two lines.
  const image = await post(app, '/v1/extract/image', { image_url: srv.url(N.png) });
  t.equal(image.status, 200);
  t.equal(image.body.ocr_results.length, 1);
  const ocr = image.body.ocr_results[0];
  for (const line of OCR_LINES) t.ok(ocr.text.includes(line), `OCR reads ${line}`);
  t.ok(ocr.confidence > 60 && ocr.confidence <= 100, `confidence ${ocr.confidence}`);
  t.match(ocr.metadata, { format: 'png', width: 800, height: Math.round(44 * 1.8 * OCR_LINES.length + 44 * 2) });
  t.ok(ocr.words.length >= 6 && ocr.words.every((w: { confidence: number }) => w.confidence > 0));
  t.equal(image.body.char_count, ocr.text.length);

  // Two tools on the same URL share the download: each file was fetched exactly once.
  for (const name of [N.pdf, N.docx, N.pptx, N.xls, N.xlsx, N.csv, N.png]) t.equal(srv.hits(name), 1, `${name} downloaded once`);
  t.same(app.services.documents.stats(), { downloads: 7, extractions: 7, downloads_in_flight: 0, extractions_in_flight: 0 });
});

t.test('uploads: multipart and raw body for process_document and retrieve_chunks', async (t) => {
  const app = await buildLocalApp(t);
  const bytes = tenPages;
  const planted = PLANTED[0]!;
  // The planted words pick one chunk; "market" (filler on every page) lets a second one through.
  const query = `${planted.query} market`;

  const form = multipart({ bytes, filename: 'handbook.pdf', contentType: 'application/pdf' }, { max_chars: '200' });
  const viaForm = await app.inject({ method: 'POST', url: '/v1/documents/process', ...form });
  t.equal(viaForm.statusCode, 200);
  const f = viaForm.json();
  t.equal(f.document_type, 'pdf');
  t.equal(f.source, 'upload:handbook.pdf');
  t.equal(f.content.length, 200);
  t.equal(f.truncated, true);
  t.ok(f.content_length > 5000, `${f.content_length} chars`);
  t.equal(f.metadata.filename, 'handbook.pdf');
  t.equal(f.metadata.page_count, 10);

  const viaRaw = await app.inject({
    method: 'POST',
    url: '/v1/documents/process',
    headers: { 'content-type': 'application/pdf', 'content-disposition': 'attachment; filename="raw.pdf"' },
    payload: bytes,
  });
  t.equal(viaRaw.statusCode, 200);
  const r = viaRaw.json();
  t.equal(r.source, 'upload:raw.pdf');
  t.equal(r.content_length, f.content_length, 'same bytes, same document');
  t.ok(r.content.includes(planted.phrase));

  const retrieveForm = multipart({ bytes, filename: 'handbook.pdf' }, { query, top_k: '2' });
  const rf = await app.inject({ method: 'POST', url: '/v1/documents/retrieve', ...retrieveForm });
  t.equal(rf.statusCode, 200);
  const rfb = rf.json();
  t.equal(rfb.results.length, 2);
  t.ok(rfb.results[0].text.includes(planted.phrase));
  t.ok(rfb.results[0].page_start <= planted.page && planted.page <= rfb.results[0].page_end, `page ${planted.page}`);
  t.equal(rfb.results[0].source, 'upload:handbook.pdf');
  t.same(rfb.retrieval.documents.map((d: { index: string }) => d.index), ['built']);

  const rr = await app.inject({
    method: 'POST',
    url: `/v1/documents/retrieve?query=${encodeURIComponent(query)}&top_k=2`,
    headers: { 'content-type': 'application/octet-stream' },
    payload: bytes,
  });
  t.equal(rr.statusCode, 200);
  const rrb = rr.json();
  t.same(
    rrb.results.map((x: { chunk_index: number }) => x.chunk_index),
    rfb.results.map((x: { chunk_index: number }) => x.chunk_index),
    'the raw upload finds the same chunks',
  );
  t.same(rrb.retrieval.documents.map((d: { index: string }) => d.index), ['memory'], 'uploads are keyed by content: the index is reused');
  t.same(app.services.documents.stats(), { downloads: 0, extractions: 1, downloads_in_flight: 0, extractions_in_flight: 0 }, 'one extraction for four calls on the same bytes');

  const both = await app.inject({ method: 'POST', url: '/v1/documents/process', ...multipart({ bytes, filename: 'a.pdf' }, { document_url: 'https://example.com/a.pdf' }) });
  t.equal(both.statusCode, 400);
  t.same(both.json(), { error: 'send either a file or document_url, not both', code: 'VALIDATION_ERROR', request_id: both.headers['x-request-id'] });
  const noQuery = await app.inject({ method: 'POST', url: '/v1/documents/retrieve', headers: { 'content-type': 'application/pdf' }, payload: bytes });
  t.equal(noQuery.statusCode, 400);
  t.equal(noQuery.json().code, 'VALIDATION_ERROR');
  t.match(noQuery.json().error, /query/);
});

t.test('a file of the wrong kind to an extract tool: 415 UNSUPPORTED_FORMAT naming what it is', async (t) => {
  const srv = await startStaticServer(t, root);
  const app = await buildLocalApp(t);
  const byUrl = await post(app, '/v1/extract/pdf', { document_url: srv.url(FIXTURE_NAMES.docx) });
  t.equal(byUrl.status, 415);
  t.same(byUrl.body, {
    error: 'Unsupported format for this tool: expected a PDF document, but the file is a Word document (DOCX)',
    code: 'UNSUPPORTED_FORMAT',
    request_id: byUrl.body.request_id,
  });
  const csvAsXlsx = await post(app, '/v1/extract/xlsx', { document_url: srv.url(FIXTURE_NAMES.csv) });
  t.equal(csvAsXlsx.status, 415);
  t.match(csvAsXlsx.body.error, /but the file is a CSV\/TSV table$/);

  const upload = await app.inject({ method: 'POST', url: '/v1/extract/image', headers: { 'content-type': 'application/pdf' }, payload: files.pdf });
  t.equal(upload.statusCode, 415);
  t.equal(upload.json().code, 'UNSUPPORTED_FORMAT');
  t.match(upload.json().error, /expected an image .* but the file is a PDF document$/);
  t.equal(app.services.ocr.stats().started, 0, 'no OCR worker was started for a refused file');
});

t.test('opt-ins off: a URL at 127.0.0.1 is refused before any connection (403 URL_NOT_ALLOWED)', async (t) => {
  const srv = await startStaticServer(t, root);
  const app = await buildTestApp(t, { config: testConfig(t) });
  t.equal(app.services.config.ALLOW_PRIVATE_NETWORKS, false);
  for (const [url, payload] of [
    ['/v1/documents/process', { document_url: srv.url(FIXTURE_NAMES.pdf) }],
    ['/v1/documents/retrieve', { document_url: srv.url(FIXTURE_NAMES.pdf), query: 'apples' }],
    ['/v1/extract/image', { image_url: srv.url(FIXTURE_NAMES.png) }],
  ] as const) {
    const res = await post(app, url, payload);
    t.equal(res.status, 403, url);
    t.equal(res.body.code, 'URL_NOT_ALLOWED');
    t.match(res.body.error, /127\.0\.0\.1/, 'names the refused address');
  }
  t.equal(srv.totalHits(), 0, 'nothing reached the server');

  // ALLOWED_HOSTS opens exactly that host:port.
  const allowed = await buildTestApp(t, { config: testConfig(t, { ALLOWED_HOSTS: `127.0.0.1:${new URL(srv.origin).port}` }) });
  const ok = await post(allowed, '/v1/extract/csv', { document_url: srv.url(FIXTURE_NAMES.csv) });
  t.equal(ok.status, 200);
  t.equal(ok.body.table_count, 1);
  t.equal(srv.hits(FIXTURE_NAMES.csv), 1);
});
