/** querySpreadsheet over real corpus files (test/extractors/query-spreadsheet.test.ts covers generated ones). */
import t from 'tap';
import { extractCsv } from '../../../src/extractors/csv/csv.ts';
import { extractSpreadsheet } from '../../../src/extractors/spreadsheet/spreadsheet.ts';
import { querySpreadsheet } from '../../../src/extractors/spreadsheet/spreadsheet-query.ts';
import { readCorpus } from '../data-dirs.ts';

const signal = new AbortController().signal;

t.test('CSV and XLS corpus files', async (t) => {
  const csv = await extractCsv({ bytes: readCorpus('csv/csv-semicolon.csv'), filename: 'csv-semicolon.csv', signal });
  const r = querySpreadsheet(csv, 'mcmillan', {});
  t.equal(r.match_count, 1);
  t.same(r.sheets_searched, ['csv-semicolon.csv']);
  t.equal(r.matches[0].row_number, 5);
  t.match(r.matches[0].row, { Index: '4', 'First Name': 'Linda', Company: 'Dominguez;Mcmillan and Donovan' });

  const xls = await extractSpreadsheet({ bytes: readCorpus('xls/test.xls'), signal });
  const x = querySpreadsheet(xls, 'affc7dad', {});
  t.same(x.matches, [
    { sheet: '09060124-b5e7-4717-9d07-3c046eb', row_number: 5, row: { ColA: 13, ColB: 14, ColC: 15, ColD: 'affc7dad-52dc-4b98-9b5d-51e65d8a8ad0' } },
  ]);
  // Alpha values with a 9: 89, 49, 95, 95, 96.
  t.equal(querySpreadsheet(xls, '9', { column: 'alpha' }).match_count, 5);
});
