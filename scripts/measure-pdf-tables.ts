/**
 * Cell placement of PDF tables against the corpus ground truth (../shared/corpus/pdf/<file>.expected.md,
 * or CORPUS_DIR): for each file, the share of expected table cells that one of our tables holds
 * in the right row and column (test/extractors/table-placement.ts), and how many tables we found.
 * A file whose ground truth has no table counts the tables we found there (false positives).
 *
 *   npx tsx scripts/measure-pdf-tables.ts [file ...]
 *
 * Without arguments: REPAIR-2022-INV-001_multipage.pdf, RECEIPT-2024-TXN-98765_retail_purchase.pdf,
 * 2305.03393v1-pg9.pdf. SHOW_MISSING=1 lists the cells not placed.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { OcrPool } from '../src/extractors/ocr/ocr-pool.ts';
import { extractPdf } from '../src/extractors/pdf/pdf.ts';
import { cellPlacement, pipeTables } from '../test/extractors/table-placement.ts';

const corpus = path.resolve(import.meta.dirname, '..', process.env.CORPUS_DIR || '../shared/corpus');
const DEFAULT = ['REPAIR-2022-INV-001_multipage.pdf', 'RECEIPT-2024-TXN-98765_retail_purchase.pdf', '2305.03393v1-pg9.pdf'];
const files = process.argv.length > 2 ? process.argv.slice(2) : DEFAULT.map((f) => path.join(corpus, 'pdf', f));
const pool = new OcrPool({ size: 1, cacheDir: path.join(os.tmpdir(), 'rag-ocr-cache') });
try {
  for (const file of files) {
    const expected = pipeTables(fs.readFileSync(`${file}.expected.md`, 'utf8'));
    const started = Date.now();
    const doc = await extractPdf({ bytes: fs.readFileSync(file), filename: path.basename(file), signal: AbortSignal.timeout(120_000) }, { ocr: pool });
    const ms = Date.now() - started;
    const ours = doc.tables.map((t) => pipeTables(t.content)[0] ?? []);
    const p = cellPlacement(expected, ours);
    const share = p.cells ? `placed=${(p.placed / p.cells).toFixed(3)} (${p.placed}/${p.cells})` : 'placed=n/a (no expected table)';
    console.log(`${path.basename(file).padEnd(46)} ${share} expected_tables=${expected.length} tables=${doc.tables.length} ${ms} ms`);
    if (process.env.SHOW_MISSING && p.misplaced.length) console.log('  not placed:', p.misplaced.join('; '));
  }
} finally {
  await pool.close();
}
