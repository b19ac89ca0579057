/**
 * Charts of an XLSX workbook, by sheet: chart sheets (xl/chartsheets/sheetN.xml) and charts
 * embedded in worksheets, both reached through the sheet's drawing part
 * (sheet -> drawing -> chart relationships). Only the small parts are read: a worksheet's own
 * XML (which may be huge) is never parsed here, since its relationships name its drawing.
 */
import { isToolError } from '../../errors.ts';
import { readChart, type ChartData } from '../shared/chart-xml.ts';
import { readPart, readRels, relKind, type Package } from '../shared/ooxml-parts.ts';
import { attr, descendants } from '../shared/xml.ts';
import type { WorkbookSheet } from './xlsx-sheets.ts';

export interface SheetCharts {
  /** 'chartsheet' for a sheet that is one chart, 'worksheet' otherwise. */
  kind: 'chartsheet' | 'worksheet';
  charts: ChartData[];
}

/** Charts of the drawing parts a sheet's relationships name, in anchor order. */
function sheetCharts(pkg: Package, sheetPart: string): ChartData[] {
  const out: ChartData[] = [];
  for (const rel of readRels(pkg, sheetPart).values()) {
    if (rel.external || relKind(rel) !== 'drawing') continue;
    const drawingRels = readRels(pkg, rel.target);
    for (const ref of descendants(readPart(pkg, rel.target), 'chart')) {
      const target = drawingRels.get(attr(ref, 'r:id') ?? '');
      if (!target || target.external) continue;
      const chart = readChart(pkg, target.target);
      if (chart) out.push(chart);
    }
  }
  return out;
}

/**
 * Charts by sheet name (sheets without charts are left out). Charts add to a workbook's reading;
 * a package whose chart parts cannot be followed is read without them (a too-large part still
 * fails the call).
 */
export function readWorkbookCharts(pkg: Package, sheets: WorkbookSheet[]): Map<string, SheetCharts> {
  const found = new Map<string, SheetCharts>();
  if (![...pkg.entries.keys()].some((name) => name.includes('/charts/'))) return found;
  try {
    for (const sheet of sheets) {
      const charts = sheetCharts(pkg, sheet.part);
      const kind = sheet.kind === 'chartsheet' ? 'chartsheet' : 'worksheet';
      if (charts.length || kind === 'chartsheet') found.set(sheet.name, { kind, charts });
    }
  } catch (err) {
    if (isToolError(err) && err.code === 'PAYLOAD_TOO_LARGE') throw err;
  }
  return found;
}
