/**
 * Charts in a real workbook (docling's xlsx_01.xlsx): two charts embedded in Sheet2, read from
 * their chart parts with title, kind, series names, categories and cached values.
 */
import t from 'tap';
import { extractSpreadsheet } from '../../../src/extractors/spreadsheet/spreadsheet.ts';
import { readCorpus } from '../data-dirs.ts';

t.test('xlsx_01.xlsx: the scatter and line charts of Sheet2', async (t) => {
  const doc = await extractSpreadsheet({ bytes: readCorpus('xlsx/xlsx_01.xlsx'), filename: 'xlsx_01.xlsx', signal: new AbortController().signal });
  t.equal(doc.metadata.chart_count, 2);
  const n = (k: number) => Array.from({ length: 8 }, (_, i) => String((i + 1) * k));
  t.same(doc.metadata.charts, [
    {
      sheet: 'Sheet2',
      type: 'scatter',
      title: "'col-2', 'col-3', 'col-4' by 'col-1'",
      categories: n(1),
      series: [{ name: 'col-2', values: n(2) }, { name: 'col-3', values: n(3) }, { name: 'col-4', values: n(4) }],
      point_count: 8,
    },
    { sheet: 'Sheet2', type: 'line', title: "'col-3'", categories: n(1).slice(0, 4), series: [{ name: 'col-3', values: n(3).slice(0, 4) }], point_count: 4 },
  ]);
  t.match(doc.metadata.sheets, [{ name: 'Sheet1', charts: 0 }, { name: 'Sheet2', charts: 2 }, { name: 'Sheet3', charts: 0 }, { name: 'Sheet4', charts: 0 }]);
  const sheet2 = doc.content.slice(doc.pages[1].start, doc.pages[1].end);
  t.ok(sheet2.includes("Chart (scatter): 'col-2', 'col-3', 'col-4' by 'col-1'\n|  | col-2 | col-3 | col-4 |\n| --- | --- | --- | --- |\n| 1 | 2 | 3 | 4 |"));
  t.ok(sheet2.includes("Chart (line): 'col-3'\n|  | col-3 |"));
  t.equal(doc.tables.length, 7, 'charts are not tables: 1 + 3 + 2 + 1 tables');
});
