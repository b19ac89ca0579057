/**
 * On every corpus PDF (CORPUS_DIR/pdf), page by page: the ruling lines read from the raw content
 * stream (src/extractors/pdf/pdf-content-rules.ts) are exactly the ones pdf.js's operator list
 * gives (pdf-rules.ts pageRules), wherever that reader follows the page (null leaves the page to
 * pdf.js, which the extractor then asks). test/extractors/pdf-content-rules.test.ts covers the
 * same on generated pages.
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { loadPdf } from '../../../src/extractors/pdf/pdf-render.ts';
import { pageRules } from '../../../src/extractors/pdf/pdf-rules.ts';
import { RawPdf, type PdfRef } from '../../../src/extractors/pdf/pdf-raw-objects.ts';
import { rulesFromContent } from '../../../src/extractors/pdf/pdf-content-rules.ts';
import { CORPUS_DIR } from '../data-dirs.ts';

/** Pages compared per file at most (the 400-page file's first ones are enough to hold it to pdf.js). */
const MAX_PAGES = 60;

t.test('raw-content rules equal pdf.js rules on the corpus PDFs', async (t) => {
  const dir = path.join(CORPUS_DIR, 'pdf');
  let followed = 0;
  let withRules = 0;
  for (const name of fs.readdirSync(dir).filter((f) => f.endsWith('.pdf')).sort()) {
    const bytes = fs.readFileSync(path.join(dir, name));
    let loaded;
    try {
      loaded = await loadPdf(bytes, AbortSignal.timeout(120_000), { textOnly: true });
    } catch {
      continue; // password-protected: nothing to read
    }
    const { doc, pdfjs } = loaded;
    const raw = new RawPdf(bytes);
    let mismatches = 0;
    for (let n = 1; n <= Math.min(doc.numPages, MAX_PAGES); n++) {
      const page = await doc.getPage(n);
      const ours = rulesFromContent(raw, (page as unknown as { ref: PdfRef }).ref, page.getViewport({ scale: 1 }).transform);
      const theirs = await pageRules(page, pdfjs).catch(() => []);
      page.cleanup();
      if (ours === null) continue;
      followed++;
      if (theirs.length) withRules++;
      if (JSON.stringify(ours) !== JSON.stringify(theirs) && mismatches++ < 2) t.same(ours, theirs, `${name} page ${n}`);
    }
    await doc.destroy();
    t.equal(mismatches, 0, `${name}: every followed page gives pdf.js's rules`);
  }
  t.ok(followed >= 50, `${followed} pages followed`);
  t.ok(withRules >= 20, `${withRules} of them with rules`);
});
