/**
 * Real third-party CSV files from the corpus (CORPUS_DIR), read in place. The self-contained
 * test/extractors/csv.test.ts checks the same behaviours on generated files.
 */
import fs from 'node:fs';
import t from 'tap';
import { extractCsv } from '../../../src/extractors/csv/csv.ts';
import { corpusPath, readCorpus, readCorpusText } from '../data-dirs.ts';

const signal = new AbortController().signal;
const read = (name: string) => extractCsv({ bytes: readCorpus(`csv/${name}`), filename: name, signal });

/** The pipe table of a docling expected.md, as rows of trimmed cells (header first). */
function expectedTable(name: string): string[][] {
  return readCorpusText(`csv/${name}`)
    .split('\n')
    .filter((l) => l.startsWith('|') && !/^\| -( \| -)* \|$/.test(l))
    .map((l) => l.slice(1, -1).split('|').map((c) => c.trim()));
}

t.test('csv-semicolon.csv: 5 rows x 12 columns, every cell as in the ground truth', async (t) => {
  const doc = await read('csv-semicolon.csv');
  const [header, ...rows] = expectedTable('csv-semicolon.csv.expected.md');
  const table = doc.tables[0];
  t.equal(doc.metadata.delimiter, 'semicolon');
  t.same(table.headers, header);
  t.same(table.rows, rows);
  t.equal(table.rows?.length, 5);
  t.equal(table.headers?.length, 12);
  t.equal(table.rows?.[3][4], 'Dominguez;Mcmillan and Donovan', 'quoted delimiter kept in the field');
  t.match(table.metadata.column_types, { Index: 'numeric', 'Subscription Date': 'datetime', Email: 'text' });
});

t.test('csv-inconsistent-header.csv: 3-column header over 4-column rows', async (t) => {
  const doc = await read('csv-inconsistent-header.csv');
  const [header, ...rows] = expectedTable('csv-inconsistent-header.csv.expected.md');
  const table = doc.tables[0];
  t.same(table.headers, ['1', '2', '3', 'Column 4']);
  t.same(table.headers?.map((h) => (h === 'Column 4' ? '' : h)), header);
  t.same(table.rows, rows);
  t.ok(doc.content.startsWith('| 1 | 2 | 3 |  |\n| --- | --- | --- | --- |\n| a | b | c | d |'));
});

t.test('csv-with-long-lines.csv: 10 rows x 370 columns, comma sniffed', async (t) => {
  const doc = await read('csv-with-long-lines.csv');
  const table = doc.tables[0];
  t.equal(doc.metadata.delimiter, 'comma');
  t.equal(table.rows?.length, 10);
  t.equal(table.headers?.length, 370);
  t.equal(table.headers?.[0], 'SpearmanCorrelationCoefficient');
  t.equal(table.headers?.[1], '1Freq CD161CD8TfrequencyUnstim');
  t.same(table.rows?.[0].slice(0, 3), ['1Freq CD161CD8TfrequencyUnstim', '1', '-0.285021097']);
  t.equal(table.metadata.column_types && (table.metadata.column_types as Record<string, string>)['1Freq Ki67CD8frequencyUnstim'], 'numeric');
  t.ok(table.content.length <= 5000);
});

t.test('stanley-cups-utf-16.csv: UTF-16BE with BOM, title line above the header', async (t) => {
  const doc = await read('stanley-cups-utf-16.csv');
  const table = doc.tables[0];
  t.equal(doc.metadata.encoding, 'utf-16be');
  t.same(table.headers, ['Team', 'Location', 'Stanley Cups']);
  t.same(table.rows, [
    ['Blues', 'STL', '1'],
    ['Flyers', 'PHI', '2'],
    ['Maple Leafs', 'TOR', '13'],
  ]);
  t.equal(table.metadata.header_row, 2);
  t.equal(table.metadata.title, 'Stanley Cups');
  t.ok(doc.content.startsWith('Stanley Cups\n\n| Team | Location | Stanley Cups |'));
});

t.test('test_mskanji.csv: Shift-JIS decoded, markitdown strings present', async (t) => {
  const doc = await read('test_mskanji.csv');
  const expected = JSON.parse(readCorpusText('csv/test_mskanji.csv.expected.json')) as { must_include: string[] };
  t.equal(doc.metadata.encoding, 'shift_jis');
  for (const s of expected.must_include) t.ok(doc.content.includes(s), s);
  t.same(doc.tables[0].rows, [
    ['佐藤太郎', '30', '東京'],
    ['三木英子', '25', '大阪'],
    ['髙橋淳', '35', '名古屋'],
  ]);
});

t.test('every csv corpus file yields a table (none is expected to fail)', async (t) => {
  const files = fs.readdirSync(corpusPath('csv')).filter((f) => !f.includes('.expected.')).sort();
  t.ok(files.length >= 5, `${files.length} files`);
  for (const name of files) {
    const doc = await read(name);
    t.equal(doc.tables.length, 1, `${name}: one table`);
    t.ok((doc.tables[0].rows?.length ?? 0) > 0, `${name}: rows`);
    t.match(doc.content, /^(.+\n\n)?\| /, `${name}: content is the table (after an optional title)`);
  }
});
