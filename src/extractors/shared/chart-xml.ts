/**
 * DrawingML charts (c:chartSpace parts, shared by PPTX and XLSX): chart kinds, title, and each
 * series' name, categories and values from the caches Office stores next to the formulas, so the
 * numbers are read without evaluating the workbook. Rendered as a caption and a pipe table.
 */
import { isToolError } from '../../errors.ts';
import { toPipeTable } from './markdown-table.ts';
import { readPart, type Package } from './ooxml-parts.ts';
import { attr, child, descendants, path as xpath, textOf, type XmlNode } from './xml.ts';

/** Points rendered per chart in content (metadata keeps every cached point). */
export const CHART_CONTENT_MAX_POINTS = 200;
const CHART_TABLE_MAX_CHARS = 5000;

export interface ChartSeries {
  name: string;
  /** Cached values by point index, as written (numbers stay text: "12.5"). */
  values: string[];
}

export interface ChartData {
  /** Plot kinds without the "Chart" suffix: bar, line, pie, scatter... */
  kinds: string[];
  title: string;
  categories: string[];
  series: ChartSeries[];
}

function points(n: XmlNode | undefined): Map<number, string> {
  const m = new Map<number, string>();
  for (const pt of descendants(n, 'pt')) m.set(Number(attr(pt, 'idx') ?? m.size), textOf(child(pt, 'v')).trim());
  return m;
}

function dense(m: Map<number, string>, n: number): string[] {
  return Array.from({ length: n }, (_, i) => m.get(i) ?? '');
}

/** The chart of a chartSpace part; null when the part has no chart. */
export function parseChart(root: XmlNode | undefined): ChartData | null {
  const chart = xpath(root, 'chartSpace', 'chart');
  if (!chart) return null;
  const title = descendants(child(chart, 'title'), 't').map((t) => textOf(t)).join('').trim();
  const plot = child(chart, 'plotArea');
  const kinds = (plot?.children ?? []).filter((c) => c.local.endsWith('Chart')).map((c) => c.local.replace(/Chart$/, ''));
  const series = descendants(plot, 'ser');
  const cats = points(child(series[0], 'cat') ?? child(series[0], 'xVal'));
  const cols = series.map((s) => ({
    name: [...points(child(s, 'tx')).values()].join(' ') || textOf(xpath(s, 'tx', 'v')).trim(),
    vals: points(child(s, 'val') ?? child(s, 'yVal')),
  }));
  const n = Math.max(cats.size, ...cols.map((c) => c.vals.size), 0);
  return {
    kinds,
    title,
    categories: cats.size ? dense(cats, n) : [],
    series: cols.map((c, i) => ({ name: c.name || `Series ${i + 1}`, values: dense(c.vals, n) })),
  };
}

/** Reads and parses a chart part; an unreadable part is no chart (a too-large one still fails). */
export function readChart(pkg: Package, part: string): ChartData | null {
  try {
    return parseChart(readPart(pkg, part));
  } catch (err) {
    if (isToolError(err) && err.code === 'PAYLOAD_TOO_LARGE') throw err;
    return null;
  }
}

/** "Chart (bar): Title" and, when it has data, a pipe table: categories down, one column per series. */
export function chartLines(chart: ChartData): string[] {
  const lines = [`Chart${chart.kinds.length ? ` (${chart.kinds.join(', ')})` : ''}${chart.title ? `: ${chart.title}` : ''}`];
  const n = Math.max(chart.categories.length, ...chart.series.map((s) => s.values.length), 0);
  if (chart.series.length === 0 || n === 0) return lines;
  const rows: string[][] = [['', ...chart.series.map((s) => s.name)]];
  for (let i = 0; i < Math.min(n, CHART_CONTENT_MAX_POINTS); i++) rows.push([chart.categories[i] ?? '', ...chart.series.map((s) => s.values[i] ?? '')]);
  lines.push(toPipeTable(rows, { maxChars: CHART_TABLE_MAX_CHARS }));
  return lines;
}
