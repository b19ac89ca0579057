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
