/**
 * Every document tool through the real REST routes (app.inject) on real third-party files from the
 * corpus served by a loopback static server (ALLOW_PRIVATE_NETWORKS=true), uploads as multipart and
 * raw bodies, the wrong kind of file, and the SSRF guard refusing a loopback URL when the opt-ins
 * are off. test/integration/document-tools-rest.test.ts does the same on generated files.
 */
import t from 'tap';
import { buildTestApp, testConfig } from '../../helper.ts';
import { buildLocalApp, multipart, post, startStaticServer } from '../../integration/helpers.ts';
import { CORPUS_DIR, readCorpus } from '../data-dirs.ts';

const corpusFile = readCorpus;

const UUID_ROW = '6ff4173b-42a5-4784-9b19-f49caff4d93d';
const AUTOGEN = 'AutoGen: Enabling Next-Gen LLM Applications via Multi-Agent Conversation';

t.test('every document tool over REST on corpus files served from 127.0.0.1', async (t) => {
  const srv = await startStaticServer(t, CORPUS_DIR);
  const app = await buildLocalApp(t);

  const processed = await post(app, '/v1/documents/process', { document_url: srv.url('pdf/test.pdf') });
  t.equal(processed.status, 200);
  t.equal(processed.body.document_type, 'pdf');
  t.equal(processed.body.source, srv.url('pdf/test.pdf'));
  t.ok(processed.body.content.startsWith('--- Page 1 ---\n'), 'page marker first');
  t.ok(processed.body.content.includes('While there is contemporaneous exploration of multi-agent approaches'));
  t.equal(processed.body.content_length, processed.body.content.length);
  t.equal(processed.body.truncated, false);
  t.match(processed.body.metadata, { page_count: 1, ocr_pages: [], format: 'pdf', detected_by: 'magic', file_size: 92971, filename: 'test.pdf' });
  t.same([processed.body.detected_language, processed.body.detected_language_name], ['en', 'English']);

  const chunked = await post(app, '/v1/documents/chunk', { document_url: srv.url('docx/test.docx') });
  t.equal(chunked.status, 200);
  t.equal(chunked.body.document_type, 'docx');
  t.equal(chunked.body.chunk_count, chunked.body.chunks.length);
  t.ok(chunked.body.chunk_count >= 5, `${chunked.body.chunk_count} chunks`);
  t.same(
    chunked.body.chunks.map((c: { chunk_index: number }) => c.chunk_index),
    [...Array(chunked.body.chunk_count).keys()],
  );
  t.ok(chunked.body.chunks.every((c: { total_chunks: number; text: string }) => c.total_chunks === chunked.body.chunk_count && c.text.length <= 5000));
  t.same(chunked.body.chunks[0].heading_path, [AUTOGEN]);
  t.ok(chunked.body.chunks.some((c: { text: string }) => c.text.includes('# Abstract')));

  const retrieved = await post(app, '/v1/documents/retrieve', { document_url: srv.url('pptx/test.pptx'), query: 'multi-agent conversation framework', top_k: 3 });
  t.equal(retrieved.status, 200);
  t.equal(retrieved.body.results.length, 3);
  t.ok(retrieved.body.results[0].text.includes(AUTOGEN), 'the title slide ranks first');
  t.same([retrieved.body.results[0].page_start, retrieved.body.results[0].page_end], [1, 1], 'slide 1');
  t.ok(retrieved.body.results.every((r: { source: string }) => r.source === srv.url('pptx/test.pptx')));
  t.match(retrieved.body.retrieval, { mode: 'lexical', embedder: null, reranker: 'unavailable', top_k: 3, candidates: 20 });
  t.match(retrieved.body.retrieval.reason, /^lexical: no embedding model is available/);
  t.same(retrieved.body.retrieval.documents, [{ source: srv.url('pptx/test.pptx'), document_type: 'pptx', chunks: retrieved.body.total_chunks_indexed, index: 'built', embedder: null }]);

  const queried = await post(app, '/v1/spreadsheets/query', { document_url: srv.url('xls/test.xls'), search_value: '6FF4173B' });
  t.equal(queried.status, 200);
  t.same(queried.body.matches, [{ sheet: 'Sheet1', row_number: 14, row: { Alpha: 58, Beta: UUID_ROW, Gamma: 22, Delta: 9 } }]);
  t.equal(queried.body.match_count, 1);
  t.same(queried.body.sheets_searched, ['Sheet1', '09060124-b5e7-4717-9d07-3c046eb']);
  t.equal(queried.body.document_type, 'xls');

  const pdf = await post(app, '/v1/extract/pdf', { document_url: srv.url('pdf/REPAIR-2022-INV-001_multipage.pdf') });
  t.equal(pdf.status, 200);
  t.equal(pdf.body.page_count, 3);
  t.same(pdf.body.ocr_pages, []);
  t.ok(pdf.body.text.startsWith('--- Page 1 ---\nZAVA AUTO REPAIR'));
  t.match(pdf.body.text, /--- Page 2 ---[\s\S]*--- Page 3 ---/);
  t.equal(pdf.body.char_count, pdf.body.text.length);

  const docx = await post(app, '/v1/extract/docx', { document_url: srv.url('docx/test.docx') });
  t.equal(docx.status, 200);
  for (const s of ['314b0a30-5b04-470b-b9f7-eed2c2bec74a', '## d666f1f7-46cb-42bd-9a39-9a39cf2a509f', '# Abstract', '# Introduction', AUTOGEN]) {
    t.ok(docx.body.text.includes(s), `docx has ${s}`);
  }
  t.equal(docx.body.table_count, 1);

  const pptx = await post(app, '/v1/extract/pptx', { document_url: srv.url('pptx/test.pptx') });
  t.equal(pptx.status, 200);
  t.equal(pptx.body.slide_count, 6);
  for (const s of ['2cdda5c8-e50e-4db4-b5f0-9722a649f455', '44bf7d06-5e7a-4a40-a2e1-a2e42ef28c8a', 'a3f6004b-6f4f-4ea8-bee3-3741f4dc385f', '--- Slide 6 ---']) {
    t.ok(pptx.body.text.includes(s), `pptx has ${s}`);
  }

  const xlsx = await post(app, '/v1/extract/xlsx', { document_url: srv.url('xlsx/test.xlsx') });
  t.equal(xlsx.status, 200);
  t.equal(xlsx.body.table_count, 2);
  t.same(
    xlsx.body.tables.map((x: { location: string; metadata: { rows: number; columns: number } }) => [x.location, x.metadata.rows, x.metadata.columns]),
    [
      ['sheet:Sheet1', 23, 4],
      ['sheet:09060124-b5e7-4717-9d07-3c046eb', 4, 4],
    ],
  );
  t.ok(xlsx.body.tables[0].content.includes(UUID_ROW));
  t.ok(xlsx.body.tables[0].content.startsWith('| Alpha | Beta | Gamma | Delta |\n| --- | --- | --- | --- |'));

  const csv = await post(app, '/v1/extract/csv', { document_url: srv.url('csv/csv-semicolon.csv') });
  t.equal(csv.status, 200);
  t.equal(csv.body.table_count, 1);
  t.match(csv.body.tables[0].metadata, { delimiter: 'semicolon', encoding: 'utf-8', rows: 5, columns: 12 });
  t.ok(csv.body.tables[0].content.includes('Dominguez;Mcmillan and Donovan'), 'a quoted delimiter stays in its cell');

  // The one OCR call of the suite: a small real table crop.
  const image = await post(app, '/v1/extract/image', { image_url: srv.url('png/2305.03393v1-table_crop.png') });
  t.equal(image.status, 200);
  t.equal(image.body.ocr_results.length, 1);
  const ocr = image.body.ocr_results[0];
  t.match(ocr.text, /enc-layers/);
  t.match(ocr.text, /0\.969/);
  t.ok(ocr.confidence > 60 && ocr.confidence <= 100, `confidence ${ocr.confidence}`);
  t.match(ocr.metadata, { format: 'png', width: 729, height: 309 });
  t.ok(ocr.words.length > 20 && ocr.words.every((w: { confidence: number }) => w.confidence > 0));
  t.equal(image.body.char_count, ocr.text.length);

  // Two tools on the same URL share the download: each file was fetched exactly once.
  for (const rel of ['pdf/test.pdf', 'docx/test.docx', 'pptx/test.pptx', 'xls/test.xls', 'xlsx/test.xlsx', 'csv/csv-semicolon.csv', 'png/2305.03393v1-table_crop.png']) {
    t.equal(srv.hits(rel), 1, `${rel} downloaded once`);
  }
  t.same(app.services.documents.stats(), { downloads: 8, extractions: 8, downloads_in_flight: 0, extractions_in_flight: 0 });
});

t.test('uploads: multipart and raw body for process_document and retrieve_chunks', async (t) => {
  const app = await buildLocalApp(t);
  const bytes = corpusFile('pdf/test.pdf');

  const form = multipart({ bytes, filename: 'autogen.pdf', contentType: 'application/pdf' }, { max_chars: '200' });
  const viaForm = await app.inject({ method: 'POST', url: '/v1/documents/process', ...form });
  t.equal(viaForm.statusCode, 200);
  const f = viaForm.json();
  t.equal(f.document_type, 'pdf');
  t.equal(f.source, 'upload:autogen.pdf');
  t.equal(f.content.length, 200);
  t.equal(f.truncated, true);
  t.ok(f.content_length > 5000);
  t.equal(f.metadata.filename, 'autogen.pdf');

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
  t.ok(r.content.includes('While there is contemporaneous exploration of multi-agent approaches'));

  const retrieveForm = multipart({ bytes, filename: 'autogen.pdf' }, { query: 'contemporaneous exploration of multi-agent approaches', top_k: '2' });
  const rf = await app.inject({ method: 'POST', url: '/v1/documents/retrieve', ...retrieveForm });
  t.equal(rf.statusCode, 200);
  const rfb = rf.json();
  t.equal(rfb.results.length, 2);
  t.ok(rfb.results[0].text.includes('contemporaneous exploration of multi-agent approaches'));
  t.equal(rfb.results[0].source, 'upload:autogen.pdf');
  t.same(rfb.retrieval.documents.map((d: { index: string }) => d.index), ['built']);

  const rr = await app.inject({
    method: 'POST',
    url: '/v1/documents/retrieve?query=contemporaneous%20exploration%20of%20multi-agent%20approaches&top_k=2',
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
  const srv = await startStaticServer(t, CORPUS_DIR);
  const app = await buildLocalApp(t);
  const byUrl = await post(app, '/v1/extract/pdf', { document_url: srv.url('docx/test.docx') });
  t.equal(byUrl.status, 415);
  t.same(byUrl.body, {
    error: 'Unsupported format for this tool: expected a PDF document, but the file is a Word document (DOCX)',
    code: 'UNSUPPORTED_FORMAT',
    request_id: byUrl.body.request_id,
  });
  const csvAsXlsx = await post(app, '/v1/extract/xlsx', { document_url: srv.url('csv/csv-semicolon.csv') });
  t.equal(csvAsXlsx.status, 415);
  t.match(csvAsXlsx.body.error, /but the file is a CSV\/TSV table$/);

  const upload = await app.inject({ method: 'POST', url: '/v1/extract/image', headers: { 'content-type': 'application/pdf' }, payload: corpusFile('pdf/test.pdf') });
  t.equal(upload.statusCode, 415);
  t.equal(upload.json().code, 'UNSUPPORTED_FORMAT');
  t.match(upload.json().error, /expected an image .* but the file is a PDF document$/);
  t.equal(app.services.ocr.stats().started, 0, 'no OCR worker was started for a refused file');
});

t.test('opt-ins off: a URL at 127.0.0.1 is refused before any connection (403 URL_NOT_ALLOWED)', async (t) => {
  const srv = await startStaticServer(t, CORPUS_DIR);
  const app = await buildTestApp(t, { config: testConfig(t) });
  t.equal(app.services.config.ALLOW_PRIVATE_NETWORKS, false);
  for (const [url, payload] of [
    ['/v1/documents/process', { document_url: srv.url('pdf/test.pdf') }],
    ['/v1/documents/retrieve', { document_url: srv.url('pdf/test.pdf'), query: 'agents' }],
    ['/v1/extract/image', { image_url: srv.url('png/2305.03393v1-table_crop.png') }],
  ] as const) {
    const res = await post(app, url, payload);
    t.equal(res.status, 403, url);
    t.equal(res.body.code, 'URL_NOT_ALLOWED');
    t.match(res.body.error, /127\.0\.0\.1/, 'names the refused address');
  }
  t.equal(srv.totalHits(), 0, 'nothing reached the server');

  // ALLOWED_HOSTS opens exactly that host:port.
  const allowed = await buildTestApp(t, { config: testConfig(t, { ALLOWED_HOSTS: `127.0.0.1:${new URL(srv.origin).port}` }) });
  const ok = await post(allowed, '/v1/extract/csv', { document_url: srv.url('csv/csv-semicolon.csv') });
  t.equal(ok.status, 200);
  t.equal(ok.body.table_count, 1);
  t.equal(srv.hits('csv/csv-semicolon.csv'), 1);
});
