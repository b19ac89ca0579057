/**
 * Charts in workbooks: an embedded chart and a chart sheet report their title, series names,
 * categories and cached values (content, metadata.charts, chunks); and the workbook cell budget
 * is applied before decoding, with every cut reported with the full count.
 */
import t from 'tap';
import ExcelJS from 'exceljs';
import { extractSpreadsheet } from '../../src/extractors/spreadsheet/spreadsheet.ts';
import { countCells } from '../../src/extractors/spreadsheet/xlsx-sheets.ts';
import { chunkDocument } from '../../src/retrieval/chunking.ts';
import { buildChartXlsx, CHART_FACTS } from '../fixtures-gen/chart-xlsx.ts';

const signal = new AbortController().signal;

t.test('embedded chart and chart sheet: title, series, categories, values', async (t) => {
  const doc = await extractSpreadsheet({ bytes: await buildChartXlsx(), filename: 'charts.xlsx', signal });
  const f = CHART_FACTS;
  t.same(doc.metadata.sheet_names, ['Data', f.chartSheet]);
  t.equal(doc.metadata.chart_count, 2);
  t.same(doc.metadata.charts, [
    { sheet: 'Data', type: 'bar', title: f.barTitle, categories: [...f.months], series: [{ name: 'Revenue', values: f.revenue.map(String) }], point_count: 4 },
    { sheet: f.chartSheet, type: 'line', title: f.lineTitle, categories: [...f.months], series: [{ name: 'Cost', values: f.cost.map(String) }], point_count: 4 },
  ]);
  t.match(doc.metadata.sheets, [
    { name: 'Data', type: 'worksheet', tables: 1, charts: 1 },
    { name: f.chartSheet, type: 'chartsheet', tables: 0, charts: 1 },
  ]);
  t.equal(doc.tables.length, 1, 'a chart is not a table');

  const chartPage = doc.pages[1];
  t.same([chartPage.number, chartPage.unit, chartPage.label], [2, 'sheet', f.chartSheet]);
  const chartText = doc.content.slice(chartPage.start, chartPage.end);
  t.equal(
    chartText,
    `## Sheet: ${f.chartSheet}\n\nChart (line): ${f.lineTitle}\n|  | Cost |\n| --- | --- |\n` + f.months.map((m, i) => `| ${m} | ${f.cost[i]} |`).join('\n'),
  );
  t.notOk(chartText.includes('_Empty sheet._'));
  const dataText = doc.content.slice(doc.pages[0].start, doc.pages[0].end);
  t.ok(dataText.includes(`Chart (bar): ${f.barTitle}\n|  | Revenue |`), 'the embedded chart follows its sheet\'s table');
  t.ok(dataText.includes('| Feb | 135.5 |'));

  // Chunks: the chart sheet's data is searchable text on its sheet.
  const chunks = chunkDocument(doc);
  const costChunk = chunks.find((c) => c.text.includes(f.lineTitle));
  t.ok(costChunk, 'a chunk holds the chart sheet');
  t.same([costChunk?.page_start, costChunk?.heading_path[0]], [2, f.chartSheet]);
  t.ok(costChunk?.text.includes('| Apr | 95 |'));
});

/** Three sheets of `rows` data rows x 5 columns (plus a header row each). */
async function threeSheets(rows: number): Promise<Buffer> {
  const wb = new ExcelJS.Workbook();
  for (const name of ['One', 'Two', 'Three']) {
    const ws = wb.addWorksheet(name);
    ws.addRow(['Key', 'A', 'B', 'C', 'D']);
    for (let r = 1; r <= rows; r++) ws.addRow([`${name}-${r}`, r, r * 2, r * 3, `t${r}`]);
  }
  return Buffer.from(await wb.xlsx.writeBuffer());
}

t.test('cell budget: counted before decoding; cut sheets say how big they are', async (t) => {
  const bytes = await threeSheets(99); // 100 rows x 5 = 500 cells per sheet
  const whole = await extractSpreadsheet({ bytes, signal });
  t.same(whole.tables.map((x) => x.rows?.length), [99, 99, 99]);
  t.notOk(whole.metadata.notes, 'nothing cut under the default budget');

  // 1,200 cells: One and Two whole (1,000), Three up to the 200 cells left (40 rows: header + 39).
  const cut = await extractSpreadsheet({ bytes, signal }, { maxCells: 1200 });
  t.same(cut.tables.map((x) => x.rows?.length), [99, 99, 39]);
  t.match(cut.metadata.sheets, [{ name: 'One' }, { name: 'Two' }, { name: 'Three', truncated: true, rows_total: 100, cells_total: 500 }]);
  t.same(cut.metadata.notes, ['Sheet "Three": only the first 40 rows of 100 were read (cell budget of 1,200).']);

  // 400 cells: One cut at 80 rows, Two and Three not decoded at all, and said so in content too.
  const small = await extractSpreadsheet({ bytes, signal }, { maxCells: 400 });
  t.same(small.tables.map((x) => x.sheet), ['One']);
  t.equal(small.tables[0].rows?.length, 79);
  t.match(small.metadata.sheets, [
    { name: 'One', truncated: true, rows_total: 100 },
    { name: 'Two', truncated: true, rows: 0, rows_total: 100, cells_total: 500 },
    { name: 'Three', truncated: true, rows: 0, rows_total: 100, cells_total: 500 },
  ]);
  t.ok(small.content.includes("## Sheet: Two\n\n_Not read: 500 cells in 100 rows, past the workbook's budget of 400 cells._"));
  t.equal(small.pages.length, 3, 'every sheet keeps its page');
});

t.test('countCells: valued cells and rows, styled blanks left out, slices seen whole', async (t) => {
  const xml = Buffer.from('<sheetData><row r="1"><c r="A1"><v>1</v></c><c r="B1" s="2"/><x:c r="C1" t="s"><x:v>0</x:v></x:c></row><row r="2"><c r="A2"><v>2</v></c></row></sheetData>');
  t.same(countCells(xml), { cells: 3, rows: 2 });
  const many = Buffer.from('<row>' + '<c><v>1</v></c>'.repeat(2_000_000) + '</row>');
  t.same(countCells(many), { cells: 2_000_000, rows: 1 }, 'a part over one 16 MB slice');
});
