import t from 'tap';
import iconv from 'iconv-lite';
import { extractCsv, parseDelimited, sniffDelimiter } from '../../src/extractors/csv.ts';

const signal = new AbortController().signal;
const csv = (text: string | Buffer, filename = 'data.csv') =>
  extractCsv({ bytes: Buffer.isBuffer(text) ? text : Buffer.from(text, 'utf8'), filename, signal });

t.test('parser: quotes, escaped quotes, embedded delimiters and newlines, ragged rows', async (t) => {
  const text = 'a,b,c\r\n"x, y","say ""hi""","line1\nline2"\n\n1,2\nlit"eral,"tail"er,3\r';
  const p = parseDelimited(text, ',');
  t.same(p.records, [
    ['a', 'b', 'c'],
    ['x, y', 'say "hi"', 'line1\nline2'],
    ['1', '2'],
    ['lit"eral', 'tailer', '3'],
  ]);
  // Line numbers of record starts; the blank line 4 is skipped.
  t.same(p.lineNumbers, [1, 2, 5, 6]);
  t.equal(p.truncated, false);
});

t.test('parser: cell budget truncates and says so', async (t) => {
  const p = parseDelimited('a,b\n1,2\n3,4\n5,6\n', ',', { maxCells: 4 });
  t.same(p.records, [['a', 'b'], ['1', '2']]);
  t.equal(p.truncated, true);
});

t.test('delimiter sniffing', async (t) => {
  t.equal(sniffDelimiter('a,b,c\n1,2,3\n'), ',');
  t.equal(sniffDelimiter('a;b;c\n1;"x;y";3\n4;5;6\n'), ';');
  t.equal(sniffDelimiter('a\tb\tc\n1\t2,5\t3\n'), '\t');
  t.equal(sniffDelimiter('a|b|c\n1|2|3\n'), '|');
  // Commas inside quoted fields do not outvote the real delimiter.
  t.equal(sniffDelimiter('name;note\nA;"x, y, z"\nB;"p, q"\n'), ';');
  // Semicolons inside text do not beat consistent commas.
  t.equal(sniffDelimiter('name,note\nA,x; y\nB,z\nC,w\n'), ',');
  t.equal(sniffDelimiter('a\tb\n1\t2\n', { filename: 'x.tsv' }), '\t');
  t.equal(sniffDelimiter('just one column\nsecond\n'), ',');
});

t.test('blank leading lines, title line, header detection, types and exact content', async (t) => {
  const doc = await csv('\n\n"Sales, 2024",,\nRegion,Units,Date\nNorth,10,2024-01-05\nSouth,"1,200",2024-02-10\nEast,,2024-03-15\n');
  t.equal(doc.kind, 'csv');
  t.equal(doc.tables.length, 1);
  const table = doc.tables[0];
  t.equal(table.table_type, 'csv');
  t.equal(table.location, 'sheet:data.csv');
  t.same(table.headers, ['Region', 'Units', 'Date']);
  t.same(table.rows, [
    ['North', '10', '2024-01-05'],
    ['South', '1,200', '2024-02-10'],
    ['East', null, '2024-03-15'],
  ]);
  t.match(table.metadata, {
    rows: 3,
    columns: 3,
    header_row: 4,
    column_types: { Region: 'text', Units: 'numeric', Date: 'datetime' },
    column_density: { Region: 1, Units: 0.667, Date: 1 },
    delimiter: 'comma',
    encoding: 'utf-8',
    title: 'Sales, 2024',
  });
  t.equal(
    doc.content,
    [
      'Sales, 2024',
      '| Region | Units | Date |\n| --- | --- | --- |\n| North | 10 | 2024-01-05 |\n| South | 1,200 | 2024-02-10 |\n| East |  | 2024-03-15 |',
      '_3 rows × 3 columns._',
    ].join('\n\n'),
  );
  t.same(doc.pages, [{ number: 1, unit: 'sheet', label: 'data.csv', start: 0, end: doc.content.length }]);
});

t.test('more than 20 rows: content shows 20, tables[] keeps all', async (t) => {
  const lines = ['id,name'];
  for (let i = 1; i <= 45; i++) lines.push(`${i},item ${i}`);
  const doc = await csv(lines.join('\n'));
  const table = doc.tables[0];
  t.equal(table.rows?.length, 45);
  t.same(table.rows?.[44], ['45', 'item 45']);
  t.ok(doc.content.includes('| 20 | item 20 |'));
  t.notOk(doc.content.includes('| 21 | item 21 |'));
  t.ok(doc.content.includes('_45 rows × 2 columns; showing the first 20._'));
  t.ok(table.content.includes('_Showing 20 of 45 rows._'));
});

t.test('duplicate and blank headers become unique; ragged rows are padded', async (t) => {
  const doc = await csv('name,name,,x,y\na,b,c,d,e,f\ng\n');
  t.same(doc.tables[0].headers, ['name', 'name (2)', 'Column 3', 'x', 'y', 'Column 6']);
  t.same(doc.tables[0].rows, [
    ['a', 'b', 'c', 'd', 'e', 'f'],
    ['g', null, null, null, null, null],
  ]);
  t.ok(doc.content.startsWith('| name | name |  | x | y |  |\n'));
});

t.test('encodings via decodeText: UTF-16LE with BOM, cp1252, Shift-JIS', async (t) => {
  const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), iconv.encode('A\tB\nü\t1\n', 'utf-16le')]);
  const d1 = await csv(utf16, 'x.tsv');
  t.same(d1.tables[0].headers, ['A', 'B']);
  t.same(d1.tables[0].rows, [['ü', '1']]);
  t.equal(d1.metadata.encoding, 'utf-16le');
  const d2 = await csv(iconv.encode('Städte;Einwohner\nMünchen;1500000\n', 'windows-1252'));
  t.same(d2.tables[0].rows, [['München', '1500000']]);
  t.equal(d2.metadata.delimiter, 'semicolon');
});

t.test('empty or blank CSV is a coded error', async (t) => {
  await t.rejects(csv(''), { code: 'PROCESSING_ERROR' });
  await t.rejects(csv('\n \n,,\n'), { code: 'PROCESSING_ERROR' });
});

t.test('wide table content stays within 5,000 chars', async (t) => {
  const header = Array.from({ length: 400 }, (_, i) => `column_number_${i}`).join(',');
  const row = Array.from({ length: 400 }, (_, i) => String(i)).join(',');
  const doc = await csv(`${header}\n${row}\n${row}\n`);
  const table = doc.tables[0];
  t.equal(table.headers?.length, 400);
  t.ok(table.content.length <= 5000, `table content ${table.content.length} chars`);
  t.match(table.content, /_Showing \d+ of 400 columns\._/);
});
