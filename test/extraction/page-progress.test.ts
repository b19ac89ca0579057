/**
 * PDF page progress crosses from the extraction child to the caller (knowledge-base jobs show it):
 * a text PDF reports its pages read, a scan reports 0 done before OCR and then page after page.
 */
import t from 'tap';
import { testConfig } from '../helper.ts';
import { createServices } from '../../src/services.ts';
import type { PageProgress } from '../../src/extractors/shared/types.ts';
import { makeMinimalPdf } from '../fixtures-gen/minimal-pdf.ts';
import { makeScannedPdf } from '../fixtures-gen/make-pdf-fixtures.ts';

const load = async (services: ReturnType<typeof createServices>, bytes: Buffer, name: string) => {
  const seen: PageProgress[] = [];
  const loaded = await services.documents.load(
    { upload: { bytes, filename: name, contentType: 'application/pdf' } },
    { signal: AbortSignal.timeout(240_000) },
    { onProgress: (p) => seen.push(p), ocr: { maxPages: 100 } },
  );
  return { seen, loaded };
};

const monotonic = (seen: PageProgress[]) => seen.every((p, i) => i === 0 || p.pages_done >= seen[i - 1]!.pages_done);

t.test('a text PDF read in a child reports every page done', async (t) => {
  const services = createServices(testConfig(t, {}), { startModels: false });
  t.teardown(() => services.close());
  const pages = Array.from({ length: 40 }, (_, i) => [`Page ${i + 1} talks about herons and the marsh water.`]);
  const { seen, loaded } = await load(services, makeMinimalPdf({ title: 'Herons', author: 'T', pages }), 'herons.pdf');
  t.equal(loaded.doc.pages?.length, 40);
  t.ok(seen.length >= 1, 'progress arrived from the child');
  t.ok(monotonic(seen), 'pages done never go back');
  t.same(seen.at(-1), { pages_done: 40, pages_total: 40 });
});

t.test('a scan reports 0 pages done before OCR, then each OCR page', async (t) => {
  const services = createServices(testConfig(t, {}), { startModels: false });
  t.teardown(() => services.close());
  // Two short scanned pages (a few lines each): the progress per OCR page is what is checked, and
  // a strip 300 pt tall is OCR'd in a fraction of the time of a full Letter page of text.
  const pdf = await makeScannedPdf(0, 2, { pageHeight: 300 });
  const { seen, loaded } = await load(services, pdf, 'scan.pdf');
  t.match(loaded.doc.content, /\w{4,}/, 'the pages were OCR’d');
  t.same(seen[0], { pages_done: 0, pages_total: 2 }, 'no page is done before its OCR');
  t.ok(monotonic(seen));
  t.same(seen.at(-1), { pages_done: 2, pages_total: 2 });
});
