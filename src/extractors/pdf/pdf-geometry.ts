/**
 * Geometry shared by the PDF reading-order reconstruction (pdf-layout.ts) and the table detector
 * (pdf-tables.ts): text boxes in their text frame (x along the text, y down), line segments built
 * from them, ruling lines. Coordinates are device units at scale 1 (PDF points).
 */

import { collapseWhitespace } from '../shared/whitespace.ts';

export interface Box {
  str: string;
  x0: number;
  x1: number;
  base: number;
  h: number;
  rtl: boolean;
  line: number;
  /** A whitespace-only item was drawn just before this one: the words are separate even if the gap is tiny. */
  spaceBefore?: boolean;
}

export interface Seg {
  boxes: Box[];
  x0: number;
  x1: number;
  top: number;
  bottom: number;
  base: number;
  h: number;
  line: number;
  text: string;
  words: number;
  rtl: boolean;
}

/** A horizontal or vertical ruling line (stroke, thin fill or rectangle edge) in device space. */
export interface Rule {
  /** 'h': y is fixed, runs from a0 to a1 along x; 'v': x is fixed, runs from a0 to a1 along y. */
  dir: 'h' | 'v';
  at: number;
  a0: number;
  a1: number;
}

export const ASCENT = 0.8;
export const DESCENT = 0.2;
/** Gap between items (in ems) above which a space is inserted. */
export const SPACE_GAP_EM = 0.12;

export function median(values: number[]): number {
  const n = values.length;
  if (!n) return 0;
  // One or two values (most lines' segments): what the sort below would pick, without the copy.
  if (n === 1) return values[0];
  if (n === 2) return values[1] < values[0] ? values[0] : values[1];
  // A typed array sorts numbers natively, without a comparator call per comparison (a page's box
  // heights, hundreds of values). It orders -0 before 0 and NaN last, where the comparator keeps
  // input order: a zero median or a NaN anywhere takes the comparator's sort.
  const typed = Float64Array.from(values).sort();
  const m = typed[n >> 1];
  if (m !== 0 && !Number.isNaN(typed[n - 1])) return m;
  return [...values].sort((a, b) => a - b)[n >> 1];
}

const WHITE = /\s/;

/** Boxes of one line (left to right) as one segment: words joined with a space where there is a visible gap. */
export function toSegment(boxes: Box[]): Seg {
  // One pass for the direction, the bounds and the tallest box (Math.min/max as the spread forms had it).
  let rtlCount = 0;
  let x0 = Infinity;
  let x1 = -Infinity;
  let top = Infinity;
  let bottom = -Infinity;
  let tallest = boxes[0];
  for (const b of boxes) {
    if (b.rtl) rtlCount++;
    x0 = Math.min(x0, b.x0);
    x1 = Math.max(x1, b.x1);
    top = Math.min(top, b.base - ASCENT * b.h);
    bottom = Math.max(bottom, b.base + DESCENT * b.h);
    if (b.h > tallest.h) tallest = b;
  }
  const rtl = rtlCount > 0 && rtlCount * 2 >= boxes.length;
  const order = rtl ? [...boxes].sort((a, b) => b.x1 - a.x1) : boxes;
  let text = '';
  let prev: Box | null = null;
  for (const b of order) {
    if (prev) {
      const gap = rtl ? prev.x0 - b.x1 : b.x0 - prev.x1;
      const h = Math.max(prev.h, b.h);
      // Touching runs of opposite direction (Latin words inside Arabic/Hebrew) are separate words.
      const dirChange = prev.rtl !== b.rtl && gap > -SPACE_GAP_EM * h;
      const spaced = gap > SPACE_GAP_EM * h || dirChange || (!rtl && b.spaceBefore);
      // The last character only (a `\s$` test scans the whole line built so far, on every run).
      if (spaced && !WHITE.test(text.charAt(text.length - 1)) && !WHITE.test(b.str.charAt(0))) text += ' ';
    }
    text += b.str;
    prev = b;
  }
  text = collapseWhitespace(text);
  return { boxes, x0, x1, top, bottom, base: tallest.base, h: tallest.h, line: tallest.line, text, words: wordCount(text), rtl };
}

/** Words of a tidy text (single spaces, none at the ends): its spaces plus one; 0 when empty. */
function wordCount(text: string): number {
  if (!text) return 0;
  let spaces = 0;
  for (let i = text.indexOf(' '); i !== -1; i = text.indexOf(' ', i + 1)) spaces++;
  return spaces + 1;
}

/** A pdf.js affine transform [a b c d e f]. */
export type Matrix = [number, number, number, number, number, number];

/** Affine matrix product m x n (pdf.js [a b c d e f] convention). */
export function multiplyMatrix(m: ArrayLike<number>, n: ArrayLike<number>): Matrix {
  return [
    m[0]! * n[0]! + m[2]! * n[1]!,
    m[1]! * n[0]! + m[3]! * n[1]!,
    m[0]! * n[2]! + m[2]! * n[3]!,
    m[1]! * n[2]! + m[3]! * n[3]!,
    m[0]! * n[4]! + m[2]! * n[5]! + m[4]!,
    m[1]! * n[4]! + m[3]! * n[5]! + m[5]!,
  ];
}
