/**
 * Limits on JSON from clients (REST and /mcp bodies, MCP stdio lines). Parsing deep JSON is cheap
 * (V8's parser does not recurse), but everything after it does — schema validation, defaults,
 * structuredClone, zod in the MCP SDK — and overflows the stack somewhere past a few thousand
 * levels. Tool inputs are a few levels deep, so a low fixed cap costs no real call anything.
 */

/** Nesting levels of arrays and objects a JSON body may have. */
export const MAX_JSON_DEPTH = 64;

/** Bytes of a JSON body (REST, /mcp) or of one MCP stdio line: detect_language's 100,000 characters fit with room to spare. */
export const MAX_JSON_BODY_BYTES = 2 * 1024 * 1024;

export const MAX_JSON_BODY_LABEL = '2 MiB';

export const TOO_DEEP_MESSAGE = `body is nested too deeply: JSON may nest arrays and objects at most ${MAX_JSON_DEPTH} levels`;

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * True when `text` nests arrays/objects deeper than `max`. One pass, no recursion and no
 * allocation, so it runs before JSON.parse; brackets inside strings do not count, and strings are
 * skipped with indexOf (a body is mostly string). Malformed text is left to the parser to report.
 */
export function jsonNestingExceeds(text: string, max = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i = closingQuote(text, i);
      if (i === -1) return false;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > max) return true;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
    }
  }
  return false;
}

/** The index of the quote closing the string opened at `open`, or -1. Each backslash run is counted once. */
function closingQuote(text: string, open: number): number {
  for (let j = text.indexOf('"', open + 1); j !== -1; j = text.indexOf('"', j + 1)) {
    let backslashes = 0;
    for (let k = j - 1; k > open && text.charCodeAt(k) === BACKSLASH; k--) backslashes++;
    if (backslashes % 2 === 0) return j;
  }
  return -1;
}

/** A RangeError from a too-deep recursion: it means "input too deep", never a message for a client. */
export function isStackOverflow(err: unknown): boolean {
  return err instanceof RangeError && /call stack size/i.test(err.message);
}
