import t from 'tap';
import {
  buildEmptyXlsx,
  buildEncryptedWorkbook,
  buildInflatedXlsx,
  buildLayoutXlsx,
  buildLegacyXls,
  buildReportXlsx,
  buildSegmentReportXlsx,
  LEGACY_XLS,
  salesRow,
  SALES_ROWS,
  SEGMENT_REPORT,
} from '../fixtures-gen/make-sheet-fixtures.ts';
import { extractSpreadsheet, isoDate, type SheetTable } from '../../src/extractors/spreadsheet/spreadsheet.ts';
import { within } from '../poll.ts';

const signal = new AbortController().signal;
const extract = (bytes: Buffer) => extractSpreadsheet({ bytes, filename: 'x.xlsx', signal });

t.test('generated report.xlsx: headers, types, merges, formulas, dates, truncation, sheets', async (t) => {
  const doc = await extract(await buildReportXlsx());
  t.equal(doc.kind, 'xlsx');
  t.same(doc.metadata.sheet_names, ['Sales', 'Inventory', 'Notes']);
  t.same(doc.metadata.common_columns, ['Product']);
  t.equal(doc.tables.length, 3);

  const sales = doc.tables[0] as SheetTable;
  t.equal(sales.location, 'sheet:Sales');
  t.equal(sales.table_type, 'spreadsheet');
  t.same(sales.headers, ['Region', 'Product', 'Units', 'Price', 'Total', 'Date']);
  t.equal(sales.rows?.length, SALES_ROWS, 'every row in tables[]');
  // Row by row: merged Region spread to each covered cell, Total from the cached formula result, ISO dates.
  sales.rows?.forEach((row, i) => {
    const d = salesRow(i);
    t.same(row, [d.region, d.product, d.units, d.price, d.units * d.price, d.date.toISOString().slice(0, 10)], `row ${i + 1}`);
  });
  t.same(sales.row_numbers?.slice(0, 2), [4, 5]);
  t.equal(sales.row_numbers?.at(-1), 33);
  t.match(sales.metadata, {
    sheet: 'Sales',
    rows: 30,
    columns: 6,
    header_row: 3,
    title: 'Quarterly sales report',
    column_types: { Region: 'text', Product: 'text', Units: 'numeric', Price: 'numeric', Total: 'numeric', Date: 'datetime' },
    density: 1,
  });
  t.ok(sales.content.length <= 5000);
  t.ok(sales.content.includes('_Showing 20 of 30 rows._'));

  const [salesPage, invPage, notesPage] = doc.pages;
  t.same(doc.pages.map((p) => [p.number, p.unit, p.label]), [[1, 'sheet', 'Sales'], [2, 'sheet', 'Inventory'], [3, 'sheet', 'Notes']]);
  const salesText = doc.content.slice(salesPage.start, salesPage.end);
  t.ok(salesText.startsWith('## Sheet: Sales\n\nQuarterly sales report\n\n| Region | Product | Units | Price | Total | Date |\n| --- |'));
  t.ok(salesText.includes('| North | Gadget | 11 | 3.5 | 38.5 | 2024-01-02 |'));
  t.ok(salesText.includes('| East | Widget | 28 | 4.5 | 126 | 2024-01-19 |'), 'row 19 shown');
  t.ok(salesText.includes('| East | Gadget | 29 | 5.5 | 159.5 | 2024-01-20 |'), 'row 20 shown');
  t.notOk(salesText.includes('2024-01-21'), 'row 21 not in content');
  t.ok(salesText.endsWith('_30 rows × 6 columns; showing the first 20._'));

  const inv = doc.tables[1];
  t.same(inv.rows, [
    ['Widget', 120, '2024-02-29T13:45:30'],
    ['Gadget', 0, '2024-03-01T08:00:00'],
    ['Gizmo', 42, '2024-03-02T23:59:00'],
  ]);
  t.match(inv.metadata.column_types, { Product: 'text', Stock: 'numeric', Updated: 'datetime' });
  t.equal(
    doc.content.slice(invPage.start, invPage.end),
    '## Sheet: Inventory\n\n| Product | Stock | Updated |\n| --- | --- | --- |\n| Widget | 120 | 2024-02-29T13:45:30 |\n| Gadget | 0 | 2024-03-01T08:00:00 |\n| Gizmo | 42 | 2024-03-02T23:59:00 |\n\n_3 rows × 3 columns._',
  );
  t.ok(doc.content.slice(notesPage.start, notesPage.end).includes('Contact: finance@example.com'));
});

t.test('generated layout.xlsx: side-by-side and stacked tables are separate tables', async (t) => {
  const doc = await extract(await buildLayoutXlsx());
  t.same(
    doc.tables.map((x) => [x.location, x.headers, x.rows]),
    [
      ['sheet:Layout!A1:C4', ['Name', 'Age', 'City'], [['Ann', 31, 'Oslo'], ['Bob', 42, 'Rome'], ['Cid', 27, 'Lima']]],
      ['sheet:Layout!F1:G3', ['Code', 'Label'], [['A1', 'Alpha'], ['B2', 'Beta']]],
      ['sheet:Layout!A7:B9', ['Metric', 'Value'], [['Mean age', 33.333333333333336], ['Count', 3]]],
    ],
  );
  t.ok(doc.content.includes('| Mean age | 33.3333333333333 |'), 'float noise trimmed in content');
});

t.test('ISO dates carry no zone and drop midnight', async (t) => {
  t.equal(isoDate(new Date(Date.UTC(2024, 0, 5))), '2024-01-05');
  t.equal(isoDate(new Date(Date.UTC(2024, 0, 5, 13, 45, 29, 999))), '2024-01-05T13:45:30');
});

t.test('corrupt input is a coded error', async (t) => {
  await t.rejects(extract(Buffer.from('hello, this is not a workbook')), { code: 'PROCESSING_ERROR' });
  const good = await buildReportXlsx();
  await t.rejects(extract(good.subarray(0, 2000)), { code: /PROCESSING_ERROR|PAYLOAD_TOO_LARGE/ });
  const ole = Buffer.alloc(4096);
  Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]).copy(ole);
  await t.rejects(extract(ole), { code: 'PROCESSING_ERROR' });
});

t.test('an aborted signal stops extraction', async (t) => {
  const ac = new AbortController();
  ac.abort();
  await t.rejects(extractSpreadsheet({ bytes: await buildReportXlsx(), signal: ac.signal }));
});

// Generated stand-ins for the real workbooks of test/corpus/extractors/spreadsheet.test.ts.

t.test('legacy .xls (BIFF8): sheets, a 31-character sheet name, the 20-row content cap, a merged title', async (t) => {
  const f = LEGACY_XLS;
  const doc = await extractSpreadsheet({ bytes: buildLegacyXls(), filename: 'ledger.xls', signal });
  t.equal(doc.kind, 'xls');
  t.same(doc.metadata.sheet_names, [...f.sheets, f.third.name]);
  t.same(
    doc.tables.map((x) => [x.location, x.rows?.length, x.headers?.length, x.metadata.header_row]),
    [
      [`sheet:${f.sheets[0]}`, 23, 4, 1],
      [`sheet:${f.sheets[1]}`, 4, 4, 1],
      [`sheet:${f.third.name}`, 3, 2, 3],
    ],
  );
  t.same(doc.tables[0].headers, f.header);
  t.same(doc.tables[0].rows, Array.from({ length: f.rowCount }, (_, i) => f.row(i)));
  t.same(doc.tables[1].rows?.[3], [13, 14, 15, 'affc7dad-52dc-4b98-9b5d-51e65d8a8ad0']);
  t.same(doc.tables[2].rows, f.third.rows);
  t.equal(doc.tables[2].metadata.title, f.third.title, 'the merged title row is read once, as the title');
  t.ok(doc.content.includes(`## Sheet: ${f.sheets[1]}\n\n| ColA | ColB | ColC | ColD |`));
  t.ok(doc.content.includes('| 58 | 6ff4173b-42a5-4784-9b19-f49caff4d93d | 22 | 9 |'));
  t.ok(doc.content.includes('_23 rows × 4 columns; showing the first 20._'));
  t.ok(doc.content.includes(`## Sheet: ${f.third.name}\n\n${f.third.title}\n\n| Abbreviation | Question Type |`));
});

t.test('a printed-report sheet: titles apart, blank spacer columns dropped, stacked tables, footnotes as text', async (t) => {
  const f = SEGMENT_REPORT;
  const doc = await extract(await buildSegmentReportXlsx());
  const headers = ['Column 1', ...f.headers.map((h) => h.replace(/\s+/g, ' ').trim())];
  t.same(
    doc.tables.map((x) => [x.location, x.rows?.length, x.headers?.length, x.metadata.header_row]),
    [
      [`sheet:${f.sheet}!A7:J14`, 6, 8, 7],
      [`sheet:${f.sheet}!A18:J25`, 6, 8, 18],
    ],
    'footnote rows are not a table',
  );
  t.same(doc.tables[0].headers, headers);
  t.same(doc.tables[0].rows, f.rows);
  t.same(doc.tables[1].rows?.[5], ['Total', ...f.rows[5].slice(1).map((v) => Math.round((v as number) * 0.9))]);
  t.match(doc.tables[0].metadata.column_types, { 'Column 1': 'text', 'Sales (a)': 'numeric', 'Depreciation and amortization': 'numeric' });
  t.equal(doc.tables[0].metadata.title, `${f.titles.join(' ')} ${f.unit} January–June 2024`);
  t.equal(doc.tables[1].metadata.title, `${f.unit} January–June 2023`);
  const text = doc.content;
  t.ok(text.startsWith(`## Sheet: ${f.sheet}\n\n${f.titles.join('\n')}\n${f.unit} January–June 2024\n\n|  | Sales (a) |`), 'titles kept as text');
  t.ok(text.endsWith(`_6 rows × 8 columns._\n\n${f.footnotes.join('\n')}`), 'footnotes kept as text after the last table');
});

t.test('an empty workbook says so; an encrypted one is a PROCESSING_ERROR saying why', async (t) => {
  const empty = await extract(await buildEmptyXlsx());
  t.equal(empty.content, '## Sheet: Sheet1\n\n_Empty sheet._');
  t.equal(empty.tables.length, 0);
  await t.rejects(extract(buildEncryptedWorkbook()), { code: 'PROCESSING_ERROR', message: /password-protected/ });
});

t.test('a declared used range of a million rows is not walked', async (t) => {
  // Declared A1:XFD1048576 (17 billion cells): a walk of the declared range would not end within
  // the deadline on any machine, so finishing at all shows the dense store was read instead.
  for (const ref of ['A1:C1048496', 'A1:XFD1048576']) {
    const doc = await within(extract(await buildInflatedXlsx(ref)), `reading a sheet that declares ${ref}`);
    t.equal(doc.content, '## Sheet: Sheet1\n\n| first | second | third |\n| --- | --- | --- |\n| 1 | 2 | 3 |\n| 4 | 5 | 6 |\n\n_2 rows × 3 columns._', ref);
  }
});
