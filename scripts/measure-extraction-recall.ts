/**
 * Word recall of the PDF and image extractors against the corpus ground truth
 * (../shared/corpus/<format>/<file>.expected.md): the share of ground-truth words (multiset,
 * case-folded, letters and digits only) that appear in the extracted text.
 *
 *   npx tsx scripts/measure-extraction-recall.ts [file ...]
 *
 * Without arguments it measures every PDF, PNG and JPEG that has a non-empty .expected.md.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { extractImage } from '../src/extractors/image/image.ts';
import { OcrPool } from '../src/extractors/ocr/ocr-pool.ts';
import { extractPdf } from '../src/extractors/pdf/pdf.ts';
import { wordRecall } from '../test/extractors/word-recall.ts';

const corpus = path.resolve(import.meta.dirname, '../../shared/corpus');

function defaultFiles(): string[] {
  const out: string[] = [];
  for (const dir of ['pdf', 'png', 'jpg']) {
    const full = path.join(corpus, dir);
    if (!fs.existsSync(full)) continue;
    for (const f of fs.readdirSync(full).sort()) {
      if (f.includes('.expected.')) continue;
      const expected = path.join(full, `${f}.expected.md`);
      if (fs.existsSync(expected) && fs.statSync(expected).size > 0) out.push(path.join(full, f));
    }
  }
  return out;
}

const files = process.argv.length > 2 ? process.argv.slice(2) : defaultFiles();
const pool = new OcrPool({ size: 2, cacheDir: path.join(os.tmpdir(), 'rag-ocr-cache') });
try {
  for (const file of files) {
    const expectedPath = `${file}.expected.md`;
    const expected = fs.existsSync(expectedPath) ? fs.readFileSync(expectedPath, 'utf8') : '';
    const started = Date.now();
    const input = { bytes: fs.readFileSync(file), filename: path.basename(file), signal: AbortSignal.timeout(300_000) };
    try {
      const doc = /\.pdf$/i.test(file) ? await extractPdf(input, { ocr: pool }) : await extractImage(input, { ocr: pool });
      const r = wordRecall(expected, doc.content);
      const ocr = (doc.metadata.ocr_pages as number[] | undefined)?.length ? ` ocr_pages=${JSON.stringify(doc.metadata.ocr_pages)}` : '';
      console.log(`${path.basename(file).padEnd(48)} recall=${r.recall.toFixed(3)} (${r.found}/${r.total})${ocr} ${Date.now() - started} ms`);
      if (process.env.SHOW_MISSING) console.log('  missing:', r.missing.slice(0, 60).join(' '));
    } catch (err) {
      console.log(`${path.basename(file).padEnd(48)} ERROR ${(err as { code?: string }).code ?? ''} ${(err as Error).message}`);
    }
  }
} finally {
  await pool.close();
}
