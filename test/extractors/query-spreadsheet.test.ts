/** querySpreadsheet over generated XLSX, XLS and CSV; the corpus files are in test/corpus/extractors/query-spreadsheet.test.ts. */
import t from 'tap';
import { buildLegacyXls, buildReportXlsx, LEGACY_XLS } from '../fixtures-gen/make-sheet-fixtures.ts';
import { extractCsv } from '../../src/extractors/csv/csv.ts';
import { extractSpreadsheet } from '../../src/extractors/spreadsheet/spreadsheet.ts';
import { querySpreadsheet } from '../../src/extractors/spreadsheet/spreadsheet-query.ts';

const signal = new AbortController().signal;
// The workbook is generated once and read by every test below.
const report = buildReportXlsx();

t.test('XLSX: case-insensitive substring over all sheets, rows keyed by header, row numbers', async (t) => {
  const doc = await extractSpreadsheet({ bytes: await report, signal });
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
  const doc = await extractSpreadsheet({ bytes: await report, signal });
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
  const doc = await extractSpreadsheet({ bytes: await report, signal });
  const r = querySpreadsheet(doc, 'north', { limit: 3 });
  t.equal(r.matches.length, 3);
  t.equal(r.match_count, 9);
  t.equal(querySpreadsheet(doc, 'north', {}).matches.length, 9);
  t.throws(() => querySpreadsheet(doc, 'north', { limit: 0 }), { code: 'VALIDATION_ERROR' });
  t.throws(() => querySpreadsheet(doc, '  ', {}), { code: 'VALIDATION_ERROR' });
});

t.test('semicolon CSV and legacy XLS: row numbers as the user sees them, keyed rows, column filter', async (t) => {
  const text = 'Index;First Name;Company\r\n1;Sheryl;Rasmussen Group\r\n2;Preston;Vega-Gentry\r\n3;Roy;Martin-Berg\r\n4;Linda;"Dominguez;Mcmillan and Donovan"\r\n';
  const csv = await extractCsv({ bytes: Buffer.from(text), filename: 'customers.csv', signal });
  const r = querySpreadsheet(csv, 'mcmillan', {});
  t.equal(r.match_count, 1);
  t.same(r.sheets_searched, ['customers.csv']);
  t.same(r.matches[0], { sheet: 'customers.csv', row_number: 5, row: { Index: '4', 'First Name': 'Linda', Company: 'Dominguez;Mcmillan and Donovan' } });

  const xls = await extractSpreadsheet({ bytes: buildLegacyXls(), filename: 'ledger.xls', signal });
  t.same(querySpreadsheet(xls, 'affc7dad', {}).matches, [
    { sheet: LEGACY_XLS.sheets[1], row_number: 5, row: { ColA: 13, ColB: 14, ColC: 15, ColD: 'affc7dad-52dc-4b98-9b5d-51e65d8a8ad0' } },
  ]);
  // Alpha runs 10, 13, ... 76 (58 on data row 13): the values holding a 9 are 19 and 49.
  const nines = Array.from({ length: LEGACY_XLS.rowCount }, (_, i) => LEGACY_XLS.row(i)[0]).filter((v) => String(v).includes('9'));
  t.same(nines, [19, 49]);
  const q = querySpreadsheet(xls, '9', { column: 'alpha' });
  t.equal(q.match_count, 2);
  t.same(q.matches.map((m) => [m.row_number, m.row.Alpha]), [[5, 19], [15, 49]]);
  t.same(q.sheets_searched, [LEGACY_XLS.sheets[0]], 'only sheets with the column are searched');
});

t.test('duplicate and blank headers are unique keys', async (t) => {
  const doc = await extractCsv({ bytes: Buffer.from('name,name,,x,y\na,b,c,d,e\n'), signal });
  t.same(querySpreadsheet(doc, 'c', {}).matches[0], {
    sheet: 'csv',
    row_number: 2,
    row: { name: 'a', 'name (2)': 'b', 'Column 3': 'c', x: 'd', y: 'e' },
  });
});
