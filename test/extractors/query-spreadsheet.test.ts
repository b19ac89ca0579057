import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { buildReportXlsx } from '../../scripts/fixtures/make-sheet-fixtures.ts';
import { extractCsv } from '../../src/extractors/csv.ts';
import { extractSpreadsheet } from '../../src/extractors/spreadsheet.ts';
import { querySpreadsheet } from '../../src/extractors/spreadsheet-query.ts';

const signal = new AbortController().signal;
const corpus = path.resolve(import.meta.dirname, '../../../shared/corpus');

t.test('XLSX: case-insensitive substring over all sheets, rows keyed by header, row numbers', async (t) => {
  const doc = await extractSpreadsheet({ bytes: await buildReportXlsx(), signal });
  const r = querySpreadsheet(doc, 'GADGET', {});
  // 10 Sales rows (every third of 30) + 1 Inventory row.
  t.equal(r.match_count, 11);
  t.same(r.sheets_searched, ['Sales', 'Inventory', 'Notes']);
  t.same(r.matches[0], {
    sheet: 'Sales',
    row_number: 5,
    row: { Region: 'North', Product: 'Gadget', Units: 11, Price: 3.5, Total: 38.5, Date: '2024-01-02' },
  });
  t.same(r.matches.at(-1), { sheet: 'Inventory', row_number: 3, row: { Product: 'Gadget', Stock: 0, Updated: '2024-03-01T08:00:00' } });
  // Rows beyond the 20 shown in content are searched too.
  t.ok(r.matches.some((m) => m.row.Units === 38));
});

t.test('column restricts the match; unknown column names the available ones', async (t) => {
  const doc = await extractSpreadsheet({ bytes: await buildReportXlsx(), signal });
  const r = querySpreadsheet(doc, '2024-01-1', { column: 'date' });
  t.equal(r.match_count, 10);
  t.same(r.sheets_searched, ['Sales']);
  t.ok(r.matches.every((m) => String(m.row.Date).startsWith('2024-01-1')));
  t.equal(querySpreadsheet(doc, '12', { column: 'Units' }).match_count, 1);
  t.throws(() => querySpreadsheet(doc, 'x', { column: 'Colour' }), {
    code: 'VALIDATION_ERROR',
    message: /Unknown column "Colour"\. Available columns: Region, Product, Units, Price, Total, Date, Stock, Updated/,
  });
});

t.test('limit caps matches while match_count counts all', async (t) => {
  const doc = await extractSpreadsheet({ bytes: await buildReportXlsx(), signal });
  const r = querySpreadsheet(doc, 'north', { limit: 3 });
  t.equal(r.matches.length, 3);
  t.equal(r.match_count, 9);
  t.equal(querySpreadsheet(doc, 'north', {}).matches.length, 9);
  t.throws(() => querySpreadsheet(doc, 'north', { limit: 0 }), { code: 'VALIDATION_ERROR' });
  t.throws(() => querySpreadsheet(doc, '  ', {}), { code: 'VALIDATION_ERROR' });
});

t.test('CSV and XLS corpus files', async (t) => {
  const csv = await extractCsv({ bytes: fs.readFileSync(path.join(corpus, 'csv/csv-semicolon.csv')), filename: 'csv-semicolon.csv', signal });
  const r = querySpreadsheet(csv, 'mcmillan', {});
  t.equal(r.match_count, 1);
  t.same(r.sheets_searched, ['csv-semicolon.csv']);
  t.equal(r.matches[0].row_number, 5);
  t.match(r.matches[0].row, { Index: '4', 'First Name': 'Linda', Company: 'Dominguez;Mcmillan and Donovan' });

  const xls = await extractSpreadsheet({ bytes: fs.readFileSync(path.join(corpus, 'xls/test.xls')), signal });
  const x = querySpreadsheet(xls, 'affc7dad', {});
  t.same(x.matches, [
    { sheet: '09060124-b5e7-4717-9d07-3c046eb', row_number: 5, row: { ColA: 13, ColB: 14, ColC: 15, ColD: 'affc7dad-52dc-4b98-9b5d-51e65d8a8ad0' } },
  ]);
  // Alpha values with a 9: 89, 49, 95, 95, 96.
  t.equal(querySpreadsheet(xls, '9', { column: 'alpha' }).match_count, 5);
});

t.test('duplicate and blank headers are unique keys', async (t) => {
  const doc = await extractCsv({ bytes: Buffer.from('name,name,,x,y\na,b,c,d,e\n'), signal });
  t.same(querySpreadsheet(doc, 'c', {}).matches[0], {
    sheet: 'csv',
    row_number: 2,
    row: { name: 'a', 'name (2)': 'b', 'Column 3': 'c', x: 'd', y: 'e' },
  });
});
