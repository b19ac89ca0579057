/**
 * What counting a workbook's cells before decoding costs (sheet-budget.ts): the pre-count alone
 * (inflate each worksheet part, scan for valued <c> elements) beside the whole XLSX extraction,
 * on a generated workbook of ROWS rows x 10 columns.
 *
 *   npx tsx scripts/bench/sheet-budget.bench.ts [rows=100000]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { extractSpreadsheet } from '../../src/extractors/spreadsheet/spreadsheet.ts';
import { countWorkbookCells, listSheets, packageOf } from '../../src/extractors/spreadsheet/xlsx-sheets.ts';
import { assertSafeZip, DEFAULT_ZIP_LIMITS } from '../../src/extractors/shared/zip.ts';
import { runStandalone, SectionBuilder, summarize } from './harness.ts';

await runStandalone(async () => {
  const rows = Number(process.argv[2] ?? 100_000);
  const runs = 3;
  const b = new SectionBuilder('sheet-budget', 'Workbook cell pre-count', { rows, columns: 10, runs });
  const file = path.join(os.tmpdir(), `sheet-budget-${rows}.xlsx`);
  if (!fs.existsSync(file)) {
    const wb = new ExcelJS.stream.xlsx.WorkbookWriter({ filename: file });
    const ws = wb.addWorksheet('Data');
    ws.addRow(['id', 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'note']).commit();
    for (let r = 1; r <= rows; r++) ws.addRow([r, r * 2, r * 3, r % 7, r / 3, `k${r % 100}`, r, r + 1, r + 2, `row ${r}`]).commit();
    await wb.commit();
  }
  const bytes = fs.readFileSync(file);
  const ms = (t0: number) => performance.now() - t0;

  const count: number[] = [];
  const whole: number[] = [];
  let cells = 0;
  for (let i = 0; i < runs; i++) {
    let t0 = performance.now();
    const entries = assertSafeZip(bytes);
    const pkg = packageOf(bytes, entries);
    cells = [...countWorkbookCells(pkg, listSheets(pkg), DEFAULT_ZIP_LIMITS.maxTotalUncompressed).values()].reduce((n, c) => n + c.cells, 0);
    count.push(ms(t0));
    t0 = performance.now();
    await extractSpreadsheet({ bytes, signal: new AbortController().signal });
    whole.push(ms(t0));
  }
  const pre = summarize(count);
  const all = summarize(whole);
  b.table('Pre-count beside the whole extraction (medians)', ['workbook', 'cells', 'file MB', 'pre-count ms', 'extraction ms', 'share of extraction']).rows.push([
    `${rows} rows x 10 columns`,
    cells,
    +(bytes.length / 1e6).toFixed(1),
    pre.median_ms,
    all.median_ms,
    +(pre.median_ms / all.median_ms).toFixed(3),
  ]);
  b.section.data = { precount_ms: pre.ms, extraction_ms: all.ms };
  return b.finish();
});
