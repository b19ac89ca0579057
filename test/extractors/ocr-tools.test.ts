/**
 * The OCR options end to end, through the REST routes of the real app: `ocr` and
 * `ocr_languages` on extract_pdf_text / extract_image_text / process_document, OCR_MAX_PAGES from
 * the configuration (2 here) marking later scanned pages in the text, languages in
 * get_system_health, a language that is not installed refused with 400 before any OCR. Files are
 * generated and served from a loopback server.
 */
import t from 'tap';
import { buildLocalApp, post, startStaticServer } from '../integration/helpers.ts';
import { makeScannedPdf, makeTextImage } from '../fixtures-gen/make-pdf-fixtures.ts';
import { GARBLED_PAGE_LINES, makeGarbledLayerPdf } from '../fixtures-gen/make-ocr-fixtures.ts';

t.test('ocr options, the page cap and languages through the REST routes', async (t) => {
  const app = await buildLocalApp(t, { OCR_MAX_PAGES: '2', OCR_LANGUAGES: 'eng' });
  const srv = await startStaticServer(t);
  const garbled = srv.add('garbled.pdf', await makeGarbledLayerPdf(), 'application/pdf');
  const scan = srv.add('scan.pdf', await makeScannedPdf(0, 3, { pageHeight: 300 }), 'application/pdf');
  const image = srv.add('note.png', await makeTextImage(['ROUTE OPTIONS WORK'], { width: 900, fontSize: 40 }), 'image/png');

  const health = (await app.inject({ method: 'GET', url: '/v1/system/health' })).json();
  t.match(health.features.ocr, { available: true, default_languages: ['eng'], installed_languages: ['eng'], max_pages_per_call: 2 });

  const auto = await post(app, '/v1/extract/pdf', { document_url: garbled });
  t.equal(auto.status, 200);
  t.same(auto.body.ocr_pages, [1]);
  for (const line of GARBLED_PAGE_LINES) t.match(auto.body.text, line);
  const never = await post(app, '/v1/extract/pdf', { document_url: garbled, ocr: 'never' });
  t.same(never.body.ocr_pages, [], 'ocr: never is its own cache entry, not the auto result');
  t.match(never.body.text, 'Aaalggfitted');

  const capped = await post(app, '/v1/extract/pdf', { document_url: scan });
  t.same(capped.body.ocr_pages, [1, 2]);
  t.match(capped.body.text, /--- Page 3 ---\n\[Page 3 not read: it is a scanned page beyond the first 2 that one call OCRs \(OCR_MAX_PAGES\)/);

  const processed = await post(app, '/v1/documents/process', { document_url: image, ocr_languages: ['eng'] });
  t.equal(processed.status, 200);
  t.match(processed.body.content, 'ROUTE OPTIONS WORK');
  const img = await post(app, '/v1/extract/image', { image_url: image, ocr: 'never' });
  t.equal(img.body.ocr_results[0].text, '');

  const missing = await post(app, '/v1/extract/image', { image_url: image, ocr_languages: ['kor'] });
  t.equal(missing.status, 400);
  t.equal(missing.body.code, 'VALIDATION_ERROR');
  t.match(missing.body.error, /OCR language not installed: kor \(ocr_languages\)\. Installed: eng\./);
  const badCode = await post(app, '/v1/extract/pdf', { document_url: scan, ocr_languages: ['../../etc'] });
  t.equal(badCode.status, 400, 'a code that is not a language name fails validation');
});

t.test('a server whose OCR_LANGUAGES names a language that is not installed does not start', async (t) => {
  await t.rejects(buildLocalApp(t, { OCR_LANGUAGES: 'eng+xyz' }), { code: 'VALIDATION_ERROR', message: /not installed: xyz \(OCR_LANGUAGES\)/ });
});
