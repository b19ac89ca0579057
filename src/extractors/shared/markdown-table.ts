/**
 * Pipe-table (GitHub Markdown) rendering shared by every extractor that emits tables. The first row
 * is the header. Cells are escaped so that a `|` or a line break inside a cell cannot break the grid.
 */
import { collapseWhitespace } from './whitespace.ts';

export interface PipeTableOptions {
  /** Render at most this many data rows (after the header); the rest are summarised in a final line. */
  maxRows?: number;
  /** Stop adding rows once the rendering would exceed this many characters. */
  maxChars?: number;
  /** Header to use when the first row is data (e.g. generated column names). */
  header?: string[];
}

const ESCAPED = /[\\|]/;

/** Escape one cell: backslashes and pipes escaped, whitespace runs (newlines included) collapsed. */
export function escapeCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  const text = String(value);
  // Most cells have neither; the replaces would copy each of them all the same.
  const escaped = ESCAPED.test(text) ? text.replace(/\\/g, '\\\\').replace(/\|/g, '\\|') : text;
  return collapseWhitespace(escaped);
}

function line(cells: string[]): string {
  return `| ${cells.join(' | ')} |`;
}

/**
 * Render rows as a pipe table. Ragged rows are padded to the widest row. Returns '' for no rows.
 * With `maxRows`/`maxChars`, a trailing line "… N more rows" says what was cut.
 */
export function toPipeTable(rows: unknown[][], opts: PipeTableOptions = {}): string {
  const all = opts.header ? [opts.header, ...rows] : rows;
  if (all.length === 0) return '';
  // A loop, not Math.max(...rows): spreading 100k+ rows overflows the call stack.
  let width = 1;
  for (const r of all) if (r.length > width) width = r.length;
  const norm = (r: unknown[]): string[] => {
    const out = new Array<string>(width);
    for (let i = 0; i < width; i++) out[i] = escapeCell(r[i]);
    return out;
  };
  const lines = [line(norm(all[0])), line(new Array<string>(width).fill('---'))];
  const data = all.slice(1);
  const maxRows = opts.maxRows ?? Infinity;
  const maxChars = opts.maxChars ?? Infinity;
  let length = lines[0].length + 1 + lines[1].length;
  let shown = 0;
  for (const r of data) {
    if (shown >= maxRows) break;
    const l = line(norm(r));
    if (length + 1 + l.length > maxChars) break;
    lines.push(l);
    length += 1 + l.length;
    shown++;
  }
  if (shown < data.length) lines.push(`… ${data.length - shown} more rows`);
  return lines.join('\n');
}
