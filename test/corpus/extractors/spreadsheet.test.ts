/**
 * Real third-party workbooks from the corpus (CORPUS_DIR/xlsx, CORPUS_DIR/xls), read in place:
 * row/column counts and known cells, checked against the corpus's expected files where it has
 * them. The self-contained test/extractors/spreadsheet.test.ts covers the same shapes on
 * generated workbooks.
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { extractSpreadsheet } from '../../../src/extractors/spreadsheet/spreadsheet.ts';
import { cellText } from '../../../src/extractors/shared/table-pipeline.ts';
import type { ExtractedTable } from '../../../src/extractors/shared/types.ts';
import { corpusPath, readCorpus, readCorpusText } from '../data-dirs.ts';
import { within } from '../../poll.ts';

const signal = new AbortController().signal;
const read = (rel: string) => extractSpreadsheet({ bytes: readCorpus(rel), filename: path.basename(rel), signal });
const shape = (tables: ExtractedTable[]) => tables.map((x) => [x.location, x.rows?.length, x.headers?.length]);

/** Pipe tables of a docling expected.md (separator `| - |`), as header + rows of trimmed cells. */
function expectedTables(rel: string): string[][][] {
  const md = readCorpusText(rel);
  const out: string[][][] = [];
  const lines = md.split('\n');
  for (let i = 1; i < lines.length; i++) {
    if (!/^\| -( \| -)* \|$/.test(lines[i])) continue;
    const rows = [lines[i - 1]];
    for (let j = i + 1; j < lines.length && lines[j].startsWith('|'); j++) rows.push(lines[j]);
    out.push(rows.map((l) => l.slice(1, -1).split('|').map((c) => c.trim())));
  }
  return out;
}

const stripSuffix = (h: string) => h.replace(/ \(\d+\)$/, '').replace(/^Column \d+$/, '');

for (const file of ['xlsx/xlsx_01.xlsx', 'xlsx/xlsx_04_inflated.xlsx']) {
  t.test(`${file}: every table matches the docling ground truth cell for cell`, async (t) => {
    const doc = await read(file);
    const want = expectedTables(`${file}.expected.md`);
    // The ground truth has no Sheet4 (a 1x1 table docling leaves out); the first six are compared.
    t.equal(want.length, 6);
    t.same(shape(doc.tables), [
      ['sheet:Sheet1', 6, 3],
      ['sheet:Sheet2!A1:D9', 8, 4],
      ['sheet:Sheet2!G5:I9', 4, 3],
      ['sheet:Sheet2!C14:E18', 4, 3],
      ['sheet:Sheet3!A1:C7', 6, 3],
      ['sheet:Sheet3!E7:G13', 6, 3],
      ['sheet:Sheet4', 1, 1],
    ]);
    want.forEach((expected, i) => {
      const table = doc.tables[i];
      t.same(table.headers?.map(stripSuffix), expected[0], `table ${i + 1} header`);
      t.same(table.rows?.map((r) => r.map(cellText)), expected.slice(1), `table ${i + 1} rows`);
    });
    t.same(doc.metadata.sheet_names, ['Sheet1', 'Sheet2', 'Sheet3', 'Sheet4']);
  });
}

for (const file of ['xlsx/test.xlsx', 'xls/test.xls']) {
  t.test(`${file}: two sheets, 23x4 and 4x4, known cells`, async (t) => {
    const doc = await read(file);
    const expected = JSON.parse(readCorpusText(`${file}.expected.json`)) as { must_include: string[] };
    t.same(shape(doc.tables), [
      ['sheet:Sheet1', 23, 4],
      ['sheet:09060124-b5e7-4717-9d07-3c046eb', 4, 4],
    ]);
    t.same(doc.tables[0].headers, ['Alpha', 'Beta', 'Gamma', 'Delta']);
    t.same(doc.tables[0].rows?.[12], [58, '6ff4173b-42a5-4784-9b19-f49caff4d93d', 22, 9]);
    t.same(doc.tables[0].rows?.[22], [87, 93, 95, 80]);
    t.same(doc.tables[1].rows?.[3], [13, 14, 15, 'affc7dad-52dc-4b98-9b5d-51e65d8a8ad0']);
    // markitdown writes "## NAME"; this extractor writes "## Sheet: NAME".
    for (const s of expected.must_include) t.ok(doc.content.includes(s.replace(/^## /, '## Sheet: ')), s);
    t.ok(doc.content.includes('_23 rows × 4 columns; showing the first 20._'));
  });
}

t.test('2023-half-year-analyses-by-segment.xlsx: titles apart, stacked tables, two-level headers, footnotes', async (t) => {
  const doc = await read('xlsx/2023-half-year-analyses-by-segment.xlsx');
  t.equal(doc.metadata.sheet_count, 5);
  t.same(
    doc.tables.map((x) => [x.metadata.sheet, x.rows?.length, x.headers?.length, x.metadata.header_row]),
    [
      ['OS-Rev.and results 30 06 2023', 10, 8, 7],
      ['OS-Rev.and results 30 06 2023', 10, 8, 22],
      ['OS-Other information 30 06 2023', 10, 5, 6],
      ['Prod.Rev.and results 30 06 2023', 9, 7, 7],
      ['Prod.Rev.and results 30 06 2023', 9, 7, 21],
      ['Prod.-Other inform. 30 06 23', 9, 5, 6],
      ['Reconciliation 30 06 2023', 8, 3, 5],
    ],
  );
  const first = doc.tables[0];
  t.same(first.headers?.slice(0, 3), ['Column 1', 'Sales (a)', 'Underlying Trading operating profit (b)']);
  t.same(first.rows?.[0], ['Zone NA', 12553, 2713, 2632, -81, -29, -44, -337]);
  t.same(first.rows?.[9], ['Total', 46293, 7904, 7351, -553, -110, -262, -1722]);
  t.match(first.metadata.column_types, { 'Column 1': 'text', 'Sales (a)': 'numeric' });
  t.same(doc.tables[2].headers?.[2], 'January–June 2023 Impairment of intangible assets (d)');
  t.ok(doc.content.includes('3.1 Operating segments'), 'title rows kept as text');
  t.ok(doc.content.includes('(a) Inter-segment sales are not significant.'), 'footnotes kept as text');
  t.equal(doc.pages.length, 5);
});

t.test('tests-example.xls: 3 sheets, merged title cells read once', async (t) => {
  const doc = await read('xls/tests-example.xls');
  t.equal(doc.kind, 'xls');
  t.same(
    doc.tables.map((x) => [x.metadata.sheet, x.rows?.length, x.headers?.length, x.metadata.header_row]),
    [
      ['Example Test', 6, 9, 1],
      ['Format Abbr.', 14, 2, 8],
      ['Readme', 13, 1, 4],
    ],
  );
  t.same(doc.tables[1].headers, ['Abbreviation', 'Question Type']);
  t.same(doc.tables[1].rows?.at(-1), ['QUIZ_BOWL', 'Quiz Bowl']);
  t.same(doc.tables[0].rows?.at(-1), ['MAT', 'Match the lower-case greek letter with its capital form.', 'λ', 'Λ', 'α', 'γ', 'Γ', 'φ', 'Φ']);
  t.ok(doc.content.includes('Question Format Abbreviations'));
});

t.test('empty.xlsx yields content, no tables', async (t) => {
  const doc = await read('xlsx/empty.xlsx');
  t.equal(doc.content, '## Sheet: Sheet1\n\n_Empty sheet._');
  t.equal(doc.tables.length, 0);
});

t.test('password_protected.xlsx is PROCESSING_ERROR saying so', async (t) => {
  await t.rejects(read('xlsx/password_protected.xlsx'), { code: 'PROCESSING_ERROR', message: /password/ });
});

t.test('xlsx_04_inflated.xlsx: declared A1:C1048496 is not walked', async (t) => {
  // The generated twin declaring A1:XFD1048576 (test/extractors/spreadsheet.test.ts) is the strong
  // check; here the real file reads its few rows per sheet.
  const doc = await within(read('xlsx/xlsx_04_inflated.xlsx'), 'reading xlsx_04_inflated.xlsx');
  t.same((doc.metadata.sheets as Array<{ rows: number }>).map((s) => s.rows), [6, 16, 12, 1]);
  t.ok(doc.content.startsWith('## Sheet: Sheet1\n\n| first | second | third |\n| --- | --- | --- |\n| 1 | 5 | 9 |\n'), 'Sheet1 starts with its table');
  t.match(doc.content, '| 6 | 0 | -6 |\n\n_6 rows × 3 columns._');
});

/** Corpus workbooks that must fail, with the code they fail with (MANIFEST.tsv: "expect a clean error"). */
const EXPECTED_FAILURES: Record<string, string> = { 'password_protected.xlsx': 'PROCESSING_ERROR' };
/** Workbooks without any cell value: content says so, no tables. */
const EMPTY = new Set(['empty.xlsx']);

t.test('every xlsx/xls corpus file yields tables, or its listed error', async (t) => {
  for (const dir of ['xlsx', 'xls']) {
    const files = fs.readdirSync(corpusPath(dir)).filter((f) => !f.includes('.expected.')).sort();
    t.ok(files.length >= 2, `${dir}: ${files.length} files`);
    for (const name of files) {
      if (name in EXPECTED_FAILURES) {
        await t.rejects(read(`${dir}/${name}`), { code: EXPECTED_FAILURES[name] }, `${name}: ${EXPECTED_FAILURES[name]}`);
        continue;
      }
      const doc = await read(`${dir}/${name}`);
      t.equal(doc.kind, dir, `${name}: kind`);
      t.ok(doc.content.startsWith('## Sheet: '), `${name}: content`);
      if (EMPTY.has(name)) t.equal(doc.tables.length, 0, `${name}: no tables`);
      else t.ok(doc.tables.length > 0 && doc.tables.every((x) => (x.rows?.length ?? 0) > 0), `${name}: tables with rows`);
    }
  }
});
