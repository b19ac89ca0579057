/**
 * PDF tables on the corpus: cell placement (test/extractors/table-placement.ts) against the
 * ground-truth Markdown of the REPAIR invoice (borderless, three tables per page, empty cells) and
 * the 2305.03393v1 page (a ruled table with a two-level header and two-line cells); the RECEIPT,
 * whose ground truth has no table, must yield none. Floors sit just under what
 * scripts/measure-pdf-tables.ts measures (1.000 for both at the time of writing).
 *
 * Korean: the corpus holds no Korean PDF, so the Korean text of the UDHR file shows the Hangul
 * indexing: a query whose words carry other particles than the text's finds the Korean article.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { OcrPool } from '../../../src/extractors/ocr/ocr-pool.ts';
import { extractPdf } from '../../../src/extractors/pdf/pdf.ts';
import { buildLexicalIndex } from '../../../src/retrieval/search.ts';
import { Analyzer } from '../../../src/retrieval/tokenizer.ts';
import { cellPlacement, pipeTables } from '../../extractors/table-placement.ts';
import { readCorpus, readCorpusText } from '../data-dirs.ts';

const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pdf-tables-corpus-'));
const ocr = new OcrPool({ size: 1, cacheDir });
t.teardown(async () => {
  await ocr.close();
  fs.rmSync(cacheDir, { recursive: true, force: true });
});
const run = (name: string) => extractPdf({ bytes: readCorpus(`pdf/${name}`), filename: name, signal: AbortSignal.timeout(120_000) }, { ocr });

const FLOORS: Record<string, { placed: number; tables: number }> = {
  'REPAIR-2022-INV-001_multipage.pdf': { placed: 0.97, tables: 4 },
  '2305.03393v1-pg9.pdf': { placed: 0.97, tables: 1 },
};

for (const [name, floor] of Object.entries(FLOORS)) {
  t.test(`${name}: expected table cells in the right rows and columns`, async (t) => {
    const doc = await run(name);
    const expected = pipeTables(readCorpusText(`pdf/${name}.expected.md`));
    t.ok(expected.length >= 1, 'the ground truth has tables');
    const ours = doc.tables.map((x) => pipeTables(x.content)[0] ?? []);
    const p = cellPlacement(expected, ours);
    t.ok(p.placed / p.cells >= floor.placed, `placed ${p.placed}/${p.cells}; not placed: ${p.misplaced.slice(0, 10).join('; ')}`);
    t.equal(doc.tables.length, floor.tables);
    for (const table of doc.tables) {
      t.equal(table.table_type, 'pdf');
      t.match(table.location, /^page:\d+$/);
      t.ok(doc.content.includes(table.content), 'the table stands in the content');
      t.equal(table.headers?.length, table.metadata.columns);
      for (const row of table.rows ?? []) t.equal(row.length, table.headers?.length);
    }
  });
}

t.test('2305.03393v1-pg9.pdf: the two-level header is kept', async (t) => {
  const [table] = (await run('2305.03393v1-pg9.pdf')).tables;
  t.equal(table.metadata.header_rows, 2);
  t.same(table.headers, ['# enc-layers', '# dec-layers', 'Language', 'TEDs simple', 'TEDs complex', 'TEDs all', 'mAP (0.75)', 'Inference time (secs)']);
  t.same(table.rows?.[0], ['6', '6', 'OTSL HTML', '0.965 0.969', '0.934 0.927', '0.955 0.955', '0.88 0.857', '2.73 5.39']);
});

t.test('REPAIR-2022-INV-001_multipage.pdf: empty cells stay empty in their columns', async (t) => {
  const tables = (await run('REPAIR-2022-INV-001_multipage.pdf')).tables;
  const totals = tables.find((x) => x.headers?.includes('Hours'));
  t.ok(totals);
  t.same(totals?.headers, ['', '', 'Hours', 'Rate', 'Cost']);
  t.same(totals?.rows?.find((r) => r[0] === 'Body Labor'), ['Body Labor', '', '2', '150', '300']);
  t.same(totals?.rows?.find((r) => r[0] === 'Sales Tax'), ['Sales Tax', '', '', '10.20%', '278.46']);
});

t.test('RECEIPT-2024-TXN-98765_retail_purchase.pdf: a receipt without a table yields none', async (t) => {
  const doc = await run('RECEIPT-2024-TXN-98765_retail_purchase.pdf');
  t.same(doc.tables, []);
  t.notMatch(doc.content, /\| --- \|/);
});

t.test('Korean: a query with other particles than the text finds the Korean article', async (t) => {
  const text = readCorpusText('txt/UDHR_first_article_all.txt');
  const docs = text.split(/\n\s*\n/).map((body) => ({ body, text: body, heading_path: [] as string[] }));
  const korean = docs.findIndex((d) => d.body.includes('모든 인간은 태어날 때부터'));
  t.ok(korean >= 0, 'the corpus file holds the Korean article');
  const analyzer = new Analyzer();
  const index = buildLexicalIndex(docs, analyzer);
  // "인간의 존엄은" (human dignity): the text has 인간은 / 존엄과, not these word forms.
  const query = '인간의 존엄은 무엇인가';
  const docTerms = new Set(analyzer.tokenize(docs[korean].body));
  t.notOk(docTerms.has('인간의') || docTerms.has('존엄은'), 'no whole query word occurs in the text');
  const hits = index.search(query, 3);
  t.equal(hits[0]?.index, korean, 'the Korean article ranks first');
  // Whole words still match as words: an exact word form of this article finds it too.
  t.equal(index.search('태어날', 1)[0]?.index, korean);
});
