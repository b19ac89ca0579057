import t from 'tap';
import iconv from 'iconv-lite';
import { extractCsv, parseDelimited, sniffDelimiter } from '../../src/extractors/csv/csv.ts';

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

// Generated stand-ins for the real files of test/corpus/extractors/csv.test.ts: the same shapes
// (semicolons with a quoted delimiter, a short header, UTF-16BE with a title line, Shift-JIS, very
// long lines), each with every cell known.

t.test('semicolon file, CRLF: quoted delimiter kept in its field, column types', async (t) => {
  const rows = [
    ['Index', 'First Name', 'Company', 'Email', 'Subscription Date'],
    ['1', 'Sheryl', 'Rasmussen Group', 'sheryl@rasmussen.example', '2020-08-24'],
    ['2', 'Preston', 'Vega-Gentry', 'preston@vega.example', '2021-04-23'],
    ['3', 'Linda', 'Dominguez;Mcmillan and Donovan', 'linda@dominguez.example', '2022-11-05'],
  ];
  const text = rows.map((r) => r.map((c) => (c.includes(';') ? `"${c}"` : c)).join(';')).join('\r\n') + '\r\n';
  const doc = await csv(text, 'customers.csv');
  const table = doc.tables[0];
  t.equal(doc.metadata.delimiter, 'semicolon');
  t.same(table.headers, rows[0]);
  t.same(table.rows, rows.slice(1));
  t.equal(table.rows?.[2][2], 'Dominguez;Mcmillan and Donovan', 'quoted delimiter kept in the field');
  t.match(table.metadata.column_types, { Index: 'numeric', 'Subscription Date': 'datetime', Email: 'text' });
});

t.test('a header shorter than its rows gets a named extra column', async (t) => {
  const doc = await csv('1,2,3\r\na,b,c,d\r\na,b,c,d\r\na,b,c,d');
  t.same(doc.tables[0].headers, ['1', '2', '3', 'Column 4']);
  t.same(doc.tables[0].rows, [['a', 'b', 'c', 'd'], ['a', 'b', 'c', 'd'], ['a', 'b', 'c', 'd']]);
  t.ok(doc.content.startsWith('| 1 | 2 | 3 |  |\n| --- | --- | --- | --- |\n| a | b | c | d |'));
});

t.test('UTF-16BE with BOM and a title line above the header', async (t) => {
  const text = 'Stanley Cups,,\r\nTeam,Location,Stanley Cups\r\nBlues,STL,1\r\nFlyers,PHI,2\r\nMaple Leafs,TOR,13\r\n';
  const doc = await csv(Buffer.concat([Buffer.from([0xfe, 0xff]), iconv.encode(text, 'utf-16be')]), 'cups.csv');
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

t.test('Shift-JIS (cp932) without a declaration', async (t) => {
  const doc = await csv(iconv.encode('名前,年齢,住所\r\n佐藤太郎,30,東京\r\n三木英子,25,大阪\r\n髙橋淳,35,名古屋\r\n', 'cp932'), 'people.csv');
  t.equal(doc.metadata.encoding, 'shift_jis');
  t.same(doc.tables[0].headers, ['名前', '年齢', '住所']);
  t.same(doc.tables[0].rows, [
    ['佐藤太郎', '30', '東京'],
    ['三木英子', '25', '大阪'],
    ['髙橋淳', '35', '名古屋'],
  ]);
  t.ok(doc.content.includes('| 髙橋淳 | 35 | 名古屋 |'));
});

t.test('lines longer than the sniffing window: comma still found, every column kept', async (t) => {
  // 370 columns of long names: the header alone is ~11,000 characters, ten rows pass the 64 KiB sample.
  const header = ['SpearmanCorrelationCoefficient', ...Array.from({ length: 369 }, (_, i) => `${i + 1}Freq CD161CD8T frequency; unstimulated ${i}`)];
  const value = (r: number, i: number) => (i === r ? '1' : (-(((r + 1) * (i + 7) * 7919) % 999_983) / 1_000_000).toFixed(9));
  const row = (r: number) => [header[r + 1], ...Array.from({ length: 369 }, (_, i) => value(r, i))];
  const lines = [header, ...Array.from({ length: 10 }, (_, r) => row(r))].map((l) => l.map((c) => (c.includes(';') || c.includes(',') ? `"${c}"` : c)).join(','));
  const text = lines.join('\n') + '\n';
  t.ok(text.length > 64 * 1024 && lines.every((l) => l.length > 3000), `${text.length} chars in ${lines.length} lines`);
  const doc = await csv(text, 'wide.csv');
  const table = doc.tables[0];
  t.equal(doc.metadata.delimiter, 'comma', 'the semicolons inside quoted header cells do not win');
  t.equal(table.headers?.length, 370);
  t.equal(table.rows?.length, 10);
  t.same(table.headers, header);
  t.same(table.rows?.[0].slice(0, 3), [header[1], '1', value(0, 1)]);
  t.same(table.rows?.[9], row(9));
  t.equal((table.metadata.column_types as Record<string, string>)[header[2]], 'numeric');
  t.ok(table.content.length <= 5000);
});
