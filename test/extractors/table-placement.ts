/**
 * Cell placement of extracted tables against expected Markdown tables: the share of the expected
 * non-empty cells found in one of our tables with their neighbours where they belong: the
 * nearest non-empty cell to the left (or right) in the same row of ours, and the nearest one above
 * (or below) in the same column of ours. Neighbours rather than absolute indices, so an extra or
 * missing empty column (ground truths differ there) costs nothing, while a value in the wrong
 * column or row costs that value.
 */

export type Grid = string[][];

/** Pipe tables of a Markdown text (separator rows dropped, cells trimmed, whitespace collapsed). */
export function pipeTables(markdown: string): Grid[] {
  const out: Grid[] = [];
  let cur: Grid = [];
  for (const raw of markdown.split('\n')) {
    const line = raw.trim();
    if (line.startsWith('|')) {
      const cells = splitRow(line);
      if (!cells.every((c) => /^:?-+:?$/.test(c))) cur.push(cells);
    } else if (cur.length) {
      out.push(cur);
      cur = [];
    }
  }
  if (cur.length) out.push(cur);
  return out;
}

function splitRow(line: string): string[] {
  const body = line.replace(/^\|/, '').replace(/\|$/, '');
  const cells: string[] = [];
  let cell = '';
  for (let i = 0; i < body.length; i++) {
    if (body[i] === '\\' && i + 1 < body.length) cell += body[++i];
    else if (body[i] === '|') {
      cells.push(norm(cell));
      cell = '';
    } else cell += body[i];
  }
  cells.push(norm(cell));
  return cells;
}

const norm = (s: string) => s.replace(/\s+/g, ' ').trim();

export interface Placement {
  cells: number;
  placed: number;
  /** Expected cells not placed, as "text (row r, col c)". */
  misplaced: string[];
}

export function cellPlacement(expected: Grid[], ours: Grid[]): Placement {
  const result: Placement = { cells: 0, placed: 0, misplaced: [] };
  for (const e of expected) {
    for (let r = 0; r < e.length; r++) {
      for (let c = 0; c < e[r].length; c++) {
        const v = e[r][c];
        if (!v) continue;
        result.cells++;
        const rowAnchor = nearest(e[r], c);
        const colAnchor = nearest(e.map((row) => row[c] ?? ''), r);
        if (ours.some((o) => placedIn(o, v, rowAnchor, colAnchor))) result.placed++;
        else result.misplaced.push(`${v} (row ${r + 1}, col ${c + 1})`);
      }
    }
  }
  return result;
}

/** The nearest non-empty entry before index k, else after it. */
function nearest(line: string[], k: number): string | undefined {
  for (let i = k - 1; i >= 0; i--) if (line[i]) return line[i];
  for (let i = k + 1; i < line.length; i++) if (line[i]) return line[i];
  return undefined;
}

function placedIn(o: Grid, v: string, rowAnchor: string | undefined, colAnchor: string | undefined): boolean {
  for (let r = 0; r < o.length; r++) {
    for (let c = 0; c < o[r].length; c++) {
      if (o[r][c] !== v) continue;
      const rowOk = rowAnchor === undefined || o[r].some((x, k) => k !== c && x === rowAnchor);
      const colOk = colAnchor === undefined || o.some((row, k) => k !== r && row[c] === colAnchor);
      if (rowOk && colOk) return true;
    }
  }
  return false;
}
