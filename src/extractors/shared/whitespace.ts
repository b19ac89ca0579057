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

const SPACE = /\s/;

/** `s.replace(/\s+/g, '').length` without building that string (asked of every PDF page's text). */
export function nonSpaceLength(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c > 0x20 && c < 0x7f) n++;
    else if (c < 0x80 ? !(c === 0x20 || (c >= 0x09 && c <= 0x0d)) : !SPACE.test(String.fromCharCode(c))) n++;
  }
  return n;
}
