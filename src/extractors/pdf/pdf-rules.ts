/**
 * Ruling lines of a PDF page from its pdf.js operator list: stroked horizontal/vertical path
 * pieces, thin filled bars and the edges of rectangles, in device space (the viewport applied),
 * so ruled tables can be cut along the lines their author drew. Curves and clipping paths are no
 * rulings and are skipped.
 */
import { multiplyMatrix, type Matrix, type Rule } from './pdf-geometry.ts';
import type { PdfPage } from './pdf-render.ts';

/** pdf.js (5.x) operator codes used here; see OPS in pdf.js. */
export interface PdfOps {
  save: number;
  restore: number;
  transform: number;
  constructPath: number;
  paintFormXObjectBegin: number;
  paintFormXObjectEnd: number;
  endPath: number;
  clip: number;
  eoClip: number;
}

/** Path pieces shorter than this (device units) are no rulings (dots, glyph outlines). */
const MIN_RULE_LENGTH = 4;
/** A filled shape thinner than this is a bar drawn as a line. */
const MAX_BAR_THICKNESS = 2.5;
/** Rules kept per page at most (a chart or a hatched drawing must not cost quadratic time later). */
export const MAX_RULES_PER_PAGE = 2000;


const apply = (m: Matrix, x: number, y: number): [number, number] => [m[0] * x + m[2] * y + m[4], m[1] * x + m[3] * y + m[5]];

/**
 * Rules from an operator list. `viewport` maps PDF user space to device space. Returns [] for
 * operator-list formats this code does not know (older pdf.js builds), never throws on odd data.
 */
export function rulesFromOperatorList(fnArray: ArrayLike<number>, argsArray: unknown[], ops: PdfOps, viewport: number[]): Rule[] {
  const rules: Rule[] = [];
  let ctm: Matrix = viewport.slice(0, 6) as Matrix;
  const stack: Matrix[] = [];
  for (let i = 0; i < fnArray.length && rules.length < MAX_RULES_PER_PAGE; i++) {
    const fn = fnArray[i];
    const args = argsArray[i] as unknown[] | null;
    if (fn === ops.save) stack.push(ctm);
    else if (fn === ops.restore) ctm = stack.pop() ?? ctm;
    else if (fn === ops.transform && Array.isArray(args) && args.length >= 6) ctm = multiplyMatrix(ctm, args.slice(0, 6).map(Number) as Matrix);
    else if (fn === ops.paintFormXObjectBegin) {
      stack.push(ctm);
      const m = Array.isArray(args) ? (args[0] as ArrayLike<number> | null) : null;
      if (m && m.length >= 6) ctm = multiplyMatrix(ctm, Array.from(m).slice(0, 6) as Matrix);
    } else if (fn === ops.paintFormXObjectEnd) ctm = stack.pop() ?? ctm;
    else if (fn === ops.constructPath && Array.isArray(args)) {
      const paint = args[0];
      if (paint === ops.endPath || paint === ops.clip || paint === ops.eoClip) continue;
      const data = Array.isArray(args[1]) ? (args[1][0] as ArrayLike<number> | null) : null;
      if (data && typeof data.length === 'number') pathRules(data, ctm, rules);
    }
  }
  return rules.filter((r) => Number.isFinite(r.at) && Number.isFinite(r.a0) && Number.isFinite(r.a1));
}

/** Walks pdf.js path data (moveTo 0, lineTo 1, curveTo 2, quadraticCurveTo 3, closePath 4). */
function pathRules(data: ArrayLike<number>, ctm: Matrix, out: Rule[]): void {
  let start: [number, number] | null = null;
  let cur: [number, number] | null = null;
  let sub: Array<[number, number]> = [];
  const flush = () => {
    // A thin closed shape (a bar drawn as a filled rectangle) is one rule along its long side.
    if (sub.length >= 3) {
      const xs = sub.map((p) => p[0]);
      const ys = sub.map((p) => p[1]);
      const w = Math.max(...xs) - Math.min(...xs);
      const h = Math.max(...ys) - Math.min(...ys);
      if (h <= MAX_BAR_THICKNESS && w >= MIN_RULE_LENGTH) {
        out.push({ dir: 'h', at: (Math.max(...ys) + Math.min(...ys)) / 2, a0: Math.min(...xs), a1: Math.max(...xs) });
        return;
      }
      if (w <= MAX_BAR_THICKNESS && h >= MIN_RULE_LENGTH) {
        out.push({ dir: 'v', at: (Math.max(...xs) + Math.min(...xs)) / 2, a0: Math.min(...ys), a1: Math.max(...ys) });
        return;
      }
    }
    for (let k = 1; k < sub.length; k++) edge(sub[k - 1], sub[k], out);
  };
  let i = 0;
  while (i < data.length) {
    const op = data[i++];
    if (op === 0) {
      flush();
      cur = start = apply(ctm, data[i], data[i + 1]);
      sub = [cur];
      i += 2;
    } else if (op === 1) {
      cur = apply(ctm, data[i], data[i + 1]);
      sub.push(cur);
      i += 2;
    } else if (op === 2) {
      cur = apply(ctm, data[i + 4], data[i + 5]);
      flush();
      sub = [cur];
      i += 6;
    } else if (op === 3) {
      cur = apply(ctm, data[i + 2], data[i + 3]);
      flush();
      sub = [cur];
      i += 4;
    } else if (op === 4) {
      if (start && cur && (start[0] !== cur[0] || start[1] !== cur[1])) sub.push(start);
      flush();
      sub = start ? [start] : [];
      cur = start;
    } else return;
    if (out.length >= MAX_RULES_PER_PAGE) return;
  }
  flush();
}

function edge(p: [number, number], q: [number, number], out: Rule[]): void {
  const dx = Math.abs(p[0] - q[0]);
  const dy = Math.abs(p[1] - q[1]);
  if (dy <= 0.5 && dx >= MIN_RULE_LENGTH) out.push({ dir: 'h', at: (p[1] + q[1]) / 2, a0: Math.min(p[0], q[0]), a1: Math.max(p[0], q[0]) });
  else if (dx <= 0.5 && dy >= MIN_RULE_LENGTH) out.push({ dir: 'v', at: (p[0] + q[0]) / 2, a0: Math.min(p[1], q[1]), a1: Math.max(p[1], q[1]) });
}

/** The ruling lines of a page in device space (viewport at scale 1); [] when the page cannot list its operators. */
export async function pageRules(page: PdfPage, pdfjs: { OPS: unknown }): Promise<Rule[]> {
  const ops = pdfjs.OPS as unknown as PdfOps;
  const list = await page.getOperatorList();
  return rulesFromOperatorList(list.fnArray, list.argsArray, ops, page.getViewport({ scale: 1 }).transform);
}
