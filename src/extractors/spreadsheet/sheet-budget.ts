/**
 * The cell budget of a workbook, applied before SheetJS decodes it. SheetJS builds every cell of
 * every sheet it parses, so a workbook of 50 million cells would be built whole before any check
 * after the read could stop it. The cells of each XLSX worksheet are counted on the inflated XML
 * first (xlsx-sheets.ts); sheets are then read in order while they fit the budget, the first one
 * that does not fit is read up to the rows that do, and the rest are not decoded at all.
 *
 * Truncation rather than refusal: the rows that fit are still worth reading (a header and the
 * first 100,000 rows answer most questions), and every cut is reported with the full count
 * (sheets[].truncated, rows_total, cells_total and a note), so nothing is dropped silently.
 */
import type { CellCount, WorkbookSheet } from './xlsx-sheets.ts';

export interface SheetReadPlan {
  /** Sheets decoded whole (chart sheets included: they hold no cells). */
  whole: string[];
  /** The sheet decoded up to `rows` rows (SheetJS's sheetRows), with its full size. */
  partial: { name: string; rows: number; total: CellCount } | null;
  /** Sheets not decoded, with their size. */
  skipped: Map<string, CellCount>;
  /** Full sizes of every counted sheet. */
  counts: Map<string, CellCount>;
}

export function planSheetReads(sheets: WorkbookSheet[], counts: Map<string, CellCount>, budget: number): SheetReadPlan {
  const plan: SheetReadPlan = { whole: [], partial: null, skipped: new Map(), counts };
  let left = budget;
  for (const s of sheets) {
    const count = counts.get(s.name);
    if (!count || count.cells <= left) {
      plan.whole.push(s.name);
      left -= count?.cells ?? 0;
    } else if (left > 0 && plan.partial === null && count.rows > 0) {
      const perRow = count.cells / count.rows;
      plan.partial = { name: s.name, rows: Math.max(1, Math.floor(left / perRow)), total: count };
      left = 0;
    } else {
      plan.skipped.set(s.name, count);
      left = 0;
    }
  }
  return plan;
}
