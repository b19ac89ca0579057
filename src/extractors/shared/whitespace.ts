/** Anything `s.replace(/\s+/g, ' ').trim()` changes: whitespace other than a space, two spaces in a row, or a space at an end. */
const UNTIDY = /[^\S ]| {2}|^ | $/;
const RUNS = /\s+/g;

/**
 * `s.replace(/\s+/g, ' ').trim()`, returning `s` itself when that would give the same string: the
 * replace rebuilds every string with a space in it, and the PDF layout and table writers tidy
 * every line and cell of a document (most of them already tidy).
 */
export function collapseWhitespace(s: string): string {
  return UNTIDY.test(s) ? s.replace(RUNS, ' ').trim() : s;
}

/**
 * Whether a UTF-16 code unit is one JavaScript's \s matches: ASCII tab to carriage return and
 * space, and the Unicode space separators, line and paragraph separators and BOM above it
 * (test/extractors/whitespace.test.ts checks every code unit against /\s/). A regular expression
 * per character was slower than the replace it stands for on non-Latin pages.
 */
function isSpaceUnit(c: number): boolean {
  if (c < 0x80) return c === 0x20 || (c >= 0x09 && c <= 0x0d);
  if (c < 0x2000) return c === 0xa0 || c === 0x1680;
  return c <= 0x200a || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff;
}

/** `s.replace(/\s+/g, '').length` without building that string (asked of every PDF page's text). */
export function nonSpaceLength(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) if (!isSpaceUnit(s.charCodeAt(i))) n++;
  return n;
}
