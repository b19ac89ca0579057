/**
 * `ocr` on chunk_document and retrieve_chunks, through the REST routes of the real app: a
 * generated PDF with one text page and one scanned page, searched with the default reading (the
 * scan is OCR'd) and with ocr: 'never' (only the text layer). The two readings are distinct
 * indexes in memory and on disk, the default keeps the plain key, and a restarted server serves
 * both from disk. Files are generated and served from a loopback server.
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { buildAppOn, post, startStaticServer } from '../integration/helpers.ts';
import { makeTextImage } from '../fixtures-gen/make-pdf-fixtures.ts';
import { tempDir } from '../helper.ts';

const LAYER_TEXT = 'The harbour committee approved the winter ferry timetable.';
const SCAN_LINES = ['WAREHOUSE INVENTORY AUDIT', 'Pallets counted in March'];

/** Page 1 has a text layer; page 2 is an image only, as a scanner would make it. */
async function makeHalfScannedPdf(): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  doc.addPage([612, 300]).drawText(LAYER_TEXT, { x: 36, y: 250, size: 12, font });
  const img = await doc.embedPng(await makeTextImage(SCAN_LINES, { width: 1200, fontSize: 44 }));
  const w = 540;
  const h = (img.height / img.width) * w;
  doc.addPage([612, 300]).drawImage(img, { x: 36, y: 300 - 36 - h, width: w, height: h });
  return Buffer.from(await doc.save({ useObjectStreams: false }));
}

const texts = (body: Record<string, any>, field: 'results' | 'chunks') => (body[field] as Array<{ text: string }>).map((r) => r.text).join('\n');

t.test('ocr: never and the default are separate readings and separate indexes', async (t) => {
  const dataDir = tempDir(t);
  const srv = await startStaticServer(t);
  const url = srv.add('half-scanned.pdf', await makeHalfScannedPdf(), 'application/pdf');
  const query = { document_url: url, query: 'warehouse inventory audit pallets', top_k: 5 };

  const app = await buildAppOn(t, dataDir, { OCR_LANGUAGES: 'eng' });
  // Text-layer-only first: if the keys were shared, the default call below would be served this index.
  const never = await post(app, '/v1/documents/retrieve', { ...query, ocr: 'never' });
  t.equal(never.status, 200, JSON.stringify(never.body));
  t.notMatch(texts(never.body, 'results'), /WAREHOUSE|INVENTORY|Pallets/i, 'without OCR the scan adds no text');
  t.equal(never.body.retrieval.documents[0].index, 'built');

  const auto = await post(app, '/v1/documents/retrieve', query);
  t.equal(auto.status, 200, JSON.stringify(auto.body));
  t.equal(auto.body.retrieval.documents[0].index, 'built', 'the default reading is its own index, not the ocr: never one');
  t.match(auto.body.results[0].text, /WAREHOUSE INVENTORY AUDIT/);
  t.ok(auto.body.total_chunks_indexed >= never.body.total_chunks_indexed);

  const neverAgain = await post(app, '/v1/documents/retrieve', { ...query, ocr: 'never' });
  t.equal(neverAgain.body.retrieval.documents[0].index, 'memory');
  t.notMatch(texts(neverAgain.body, 'results'), /WAREHOUSE/i);
  const explicitDefault = await post(app, '/v1/documents/retrieve', { ...query, ocr: 'auto', ocr_languages: ['eng'] });
  t.equal(explicitDefault.body.retrieval.documents[0].index, 'memory', 'explicit defaults are the default index');
  t.match(explicitDefault.body.results[0].text, /WAREHOUSE/);

  const several = await post(app, '/v1/documents/retrieve', { document_urls: [url], query: query.query, ocr: 'never' });
  t.equal(several.status, 200);
  t.equal(several.body.retrieval.documents[0].index, 'memory', 'document_urls take the ocr option too');
  t.notMatch(texts(several.body, 'results'), /WAREHOUSE/i);

  const chunkedNever = await post(app, '/v1/documents/chunk', { document_url: url, ocr: 'never' });
  t.equal(chunkedNever.status, 200);
  t.match(texts(chunkedNever.body, 'chunks'), 'harbour committee');
  t.notMatch(texts(chunkedNever.body, 'chunks'), /WAREHOUSE/i);
  const chunked = await post(app, '/v1/documents/chunk', { document_url: url });
  t.match(texts(chunked.body, 'chunks'), /WAREHOUSE INVENTORY AUDIT/);

  const stored = readdirSync(path.join(dataDir, 'indexes')).filter((n) => !n.startsWith('.'));
  t.equal(stored.length, 2, 'one stored index per reading');
  t.ok(stored.some((n) => /^[0-9a-f]{16}-[0-9a-f]{16}-c\d+$/.test(n)), 'the default reading keeps the plain key');
  t.ok(stored.some((n) => /^[0-9a-f]{16}-[0-9a-f]{16}-c\d+-o[0-9a-f]{12}$/.test(n)), 'ocr: never adds an OCR part');

  await app.close();
  const restarted = await buildAppOn(t, dataDir, { OCR_LANGUAGES: 'eng' });
  const fromDiskNever = await post(restarted, '/v1/documents/retrieve', { ...query, ocr: 'never' });
  t.equal(fromDiskNever.body.retrieval.documents[0].index, 'disk');
  t.notMatch(texts(fromDiskNever.body, 'results'), /WAREHOUSE/i);
  const fromDisk = await post(restarted, '/v1/documents/retrieve', query);
  t.equal(fromDisk.body.retrieval.documents[0].index, 'disk');
  t.match(fromDisk.body.results[0].text, /WAREHOUSE INVENTORY AUDIT/);
});

t.test('a scan read with ocr: never has no text to search', async (t) => {
  const srv = await startStaticServer(t);
  const url = srv.add('scan.png', await makeTextImage(SCAN_LINES, { width: 1200, fontSize: 44 }), 'image/png');
  const app = await buildAppOn(t, tempDir(t), { OCR_LANGUAGES: 'eng' });
  const never = await post(app, '/v1/documents/retrieve', { document_url: url, query: 'inventory', ocr: 'never' });
  t.equal(never.status, 422);
  t.equal(never.body.code, 'PROCESSING_ERROR');
  const auto = await post(app, '/v1/documents/retrieve', { document_url: url, query: 'inventory' });
  t.equal(auto.status, 200);
  t.match(auto.body.results[0].text, /INVENTORY/);
});
