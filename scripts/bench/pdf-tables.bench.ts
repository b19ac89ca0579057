/**
 * What table detection costs in PDF text extraction, per page: the text-layer read (getTextContent),
 * the layout without rules, the operator list walk for ruling lines, and the layout with rules,
 * summed over the pages of each file; plus how many pages fetched rules (only pages with gapped
 * lines do) and how many tables were found.
 *
 *   npx tsx scripts/bench/pdf-tables.bench.ts [file.pdf ...]
 *
 * Without arguments: the corpus's REPAIR, 2305.03393v1-pg9, redp5110_sampled and the 400-page manual.
 */
import fs from 'node:fs';
import path from 'node:path';
import { layoutPage, type PositionedTextItem } from '../../src/extractors/pdf/pdf-layout.ts';
import { loadPdf } from '../../src/extractors/pdf/pdf-render.ts';
import { pageRules } from '../../src/extractors/pdf/pdf-rules.ts';
import { round, runStandalone, SectionBuilder } from './harness.ts';

const corpus = path.resolve(import.meta.dirname, '../..', process.env.CORPUS_DIR || '../shared/corpus');
const DEFAULT = ['REPAIR-2022-INV-001_multipage.pdf', '2305.03393v1-pg9.pdf', 'redp5110_sampled.pdf', 'pdf2image-memory-error-test-400p.pdf'];
const files = process.argv.length > 2 ? process.argv.slice(2) : DEFAULT.map((f) => path.join(corpus, 'pdf', f));

const mul = (a: number[], b: number[]) => [
  a[0] * b[0] + a[2] * b[1],
  a[1] * b[0] + a[3] * b[1],
  a[0] * b[2] + a[2] * b[3],
  a[1] * b[2] + a[3] * b[3],
  a[0] * b[4] + a[2] * b[5] + a[4],
  a[1] * b[4] + a[3] * b[5] + a[5],
];

await runStandalone(async () => {
  const b = new SectionBuilder('pdf-tables', 'Cost of PDF table detection', { files: files.map((f) => path.basename(f)) });
  const table = b.table('Per file, summed over its pages (ms)', ['file', 'pages', 'text layer', 'layout', 'pages with rules', 'ruling lines', 'layout with rules', 'tables']);
  b.note('Only pages with at least two gapped lines fetch their ruling lines (the operator list walk); the others pay the text layer and one layout.');
  for (const file of files) {
    const { doc, pdfjs } = await loadPdf(fs.readFileSync(file), AbortSignal.timeout(600_000));
    const ms = { text: 0, plain: 0, rules: 0, ruled: 0 };
    let ruledPages = 0;
    let tables = 0;
    for (let n = 1; n <= doc.numPages; n++) {
      const page = await doc.getPage(n);
      let t = performance.now();
      const vp = page.getViewport({ scale: 1 });
      const content = await page.getTextContent();
      const items: PositionedTextItem[] = [];
      for (const it of content.items) if ('str' in it && it.str) items.push({ str: it.str, transform: mul(vp.transform, it.transform), width: it.width, height: it.height, dir: it.dir });
      ms.text += performance.now() - t;
      t = performance.now();
      const plain = layoutPage(items);
      ms.plain += performance.now() - t;
      let found = plain.tables.length;
      if (plain.gappedLines >= 2) {
        ruledPages++;
        t = performance.now();
        const rules = await pageRules(page, pdfjs);
        ms.rules += performance.now() - t;
        t = performance.now();
        found = layoutPage(items, rules).tables.length;
        ms.ruled += performance.now() - t;
      }
      tables += found;
      page.cleanup();
    }
    await doc.destroy();
    table.rows.push([path.basename(file), doc.numPages, round(ms.text, 0), round(ms.plain, 0), ruledPages, round(ms.rules, 0), round(ms.ruled, 0), tables]);
  }
  return b.finish();
});
