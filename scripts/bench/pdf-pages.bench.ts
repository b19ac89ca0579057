/**
 * PDF_MAX_PAGES and the page loop's abort on huge page counts: a 100,000-page PDF written object
 * by object (test/fixtures-gen/make-many-page-pdf.ts), with a text line per page and with a short
 * one (every page then is checked for a scan: the slow case), extracted in this process
 *   - at the default bound (5,000 pages): wall ms and the pages read;
 *   - unbounded, under a 1 s signal: ms until the call stops.
 *
 *   npx tsx scripts/bench/pdf-pages.bench.ts
 *   PDF_BENCH_PAGES=20000 npx tsx scripts/bench/pdf-pages.bench.ts
 */
import os from 'node:os';
import { mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import { makeManyPagePdf } from '../../test/fixtures-gen/make-many-page-pdf.ts';
import { extractPdf } from '../../src/extractors/pdf/pdf.ts';
import { OcrPool } from '../../src/extractors/ocr/ocr-pool.ts';
import { DEFAULT_PDF_MAX_PAGES } from '../../src/extractors/pdf/pdf-page-limit.ts';
import { round, runStandalone, SectionBuilder } from './harness.ts';

await runStandalone(async () => {
  const pages = Number(process.env.PDF_BENCH_PAGES ?? 100_000);
  const cacheDir = mkdtempSync(path.join(os.tmpdir(), 'pdf-pages-bench-'));
  const pool = new OcrPool({ size: 1, cacheDir });

  const variants: Array<[string, (n: number) => string]> = [
    ['text line', (n) => `Page ${n} of the long register, one line of generated text`],
    ['short line', (n) => `p${n}`],
  ];
  const b = new SectionBuilder('pdf-pages', 'PDF page bound on a 100,000-page PDF', { pages, pdf_max_pages: DEFAULT_PDF_MAX_PAGES });
  const table = b.table(`A ${pages}-page PDF, extracted in process`, ['variant', 'MB', `bounded (${DEFAULT_PDF_MAX_PAGES} pages) ms`, 'pages read', 'unbounded under a 1 s signal: stopped after ms', 'outcome']);
  for (const [name, text] of variants) {
    const bytes = makeManyPagePdf(pages, text);
    let t0 = performance.now();
    const doc = await extractPdf({ bytes, signal: new AbortController().signal }, { ocr: pool });
    const boundedMs = performance.now() - t0;
    t0 = performance.now();
    let outcome = 'finished';
    try {
      await extractPdf({ bytes, pdfMaxPages: pages, signal: AbortSignal.timeout(1000) }, { ocr: pool });
    } catch (err) {
      outcome = (err as { code?: string }).code ?? 'error';
    }
    const stopMs = performance.now() - t0;
    table.rows.push([name, round(bytes.length / 1e6, 1), round(boundedMs, 0), Number(doc.metadata.pages_read ?? pages), round(stopMs, 0), outcome]);
  }
  await pool.close();
  rmSync(cacheDir, { recursive: true, force: true });
  return b.finish();
});
