/**
 * Plain text, Markdown, JSON and XML: decoded by BOM and heuristics (see decode-text.ts), line
 * endings normalised, and kept as written. Minified JSON is pretty-printed so that it chunks on
 * structure instead of one endless line. Markdown gets section spans from its headings.
 */
import type { ExtractInput, ProcessedDocument } from '../shared/types.ts';
import { decodeText } from '../shared/decode-text.ts';
import { sectionsByHeadings } from '../shared/html-markdown.ts';
import { resolveLimits } from '../shared/limits.ts';

export type TextFormat = 'text' | 'markdown' | 'json' | 'xml';

/** Largest JSON we re-indent; beyond it parsing costs more than the layout is worth. */
const JSON_PRETTY_MAX_CHARS = 10 * 1024 * 1024;

function extOf(filename?: string): string {
  const m = /\.([a-z0-9]+)$/i.exec(filename ?? '');
  return m ? m[1].toLowerCase() : '';
}

/** Which text format this is, from extension and Content-Type first, then the content itself. */
export function textFormat(text: string, filename?: string, contentType?: string): TextFormat {
  const ext = extOf(filename);
  const ct = (contentType ?? '').toLowerCase();
  if (ext === 'json' || ext === 'jsonl' || ext === 'ndjson' || /[/+]json\b/.test(ct)) return 'json';
  if (ext === 'xml' || /[/+]xml\b/.test(ct)) return 'xml';
  if (ext === 'md' || ext === 'markdown' || ext === 'mdx' || ct.includes('markdown')) return 'markdown';
  const head = text.slice(0, 2000).trimStart();
  if (/^<\?xml\b/i.test(head)) return 'xml';
  if ((head.startsWith('{') || head.startsWith('[')) && looksLikeJson(text)) return 'json';
  if (ext === 'txt' || ext === 'text' || ext === 'log') return 'text';
  // Markdown without a telling name: ATX headings plus other Markdown structure.
  const headings = (head.match(/^#{1,6} \S/gm) ?? []).length;
  const structure = (head.match(/^(\s*[-*+] \S|\s*\d+\. \S|```|\|.*\|\s*$)/gm) ?? []).length;
  if (headings >= 2 || (headings >= 1 && structure >= 2)) return 'markdown';
  return 'text';
}

function looksLikeJson(text: string): boolean {
  if (text.length > JSON_PRETTY_MAX_CHARS) return /^\s*[[{]\s*["[{\d\]}-]/.test(text);
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** The first `max` non-empty lines, without splitting the whole text. */
function firstLines(text: string, max: number): string[] {
  const out: string[] = [];
  let at = 0;
  while (at <= text.length && out.length < max) {
    let nl = text.indexOf('\n', at);
    if (nl < 0) nl = text.length;
    const line = text.slice(at, nl);
    if (line.trim()) out.push(line);
    at = nl + 1;
  }
  return out;
}

/** JSON Lines: every non-empty line is its own JSON value. */
function isJsonLines(text: string): boolean {
  const lines = firstLines(text, 50);
  if (lines.length < 2) return false;
  try {
    for (const l of lines) JSON.parse(l);
    return true;
  } catch {
    return false;
  }
}

/** Lines and the longest one, counted without materialising every line. */
function lineStats(text: string): { count: number; longest: number } {
  if (!text) return { count: 0, longest: 0 };
  let count = 0;
  let longest = 0;
  let at = 0;
  for (;;) {
    const nl = text.indexOf('\n', at);
    const end = nl < 0 ? text.length : nl;
    if (end - at > longest) longest = end - at;
    count++;
    if (nl < 0) return { count, longest };
    at = nl + 1;
  }
}

function countWords(text: string): number {
  const re = /[\p{L}\p{N}]+/gu;
  let n = 0;
  // test() advances lastIndex without building a match array per word.
  while (re.test(text)) n++;
  return n;
}

/** A first line that stands alone as a title: at most this long. */
const TITLE_MAX_CHARS = 200;
const TITLE_MAX_WORDS = 30;

/**
 * The first line of a plain-text file when it reads as its title, the way people write one: a
 * short line followed by a blank line and more text, one sentence at most (a trailing period is
 * common in article titles), not a list item, a quote or a line of code.
 */
export function firstLineTitle(text: string): string | null {
  // Only the head is read: a 100 MB file without line breaks is not scanned for a title.
  const m = /^([^\n]*)\n[ \t]*\n\s*\S/.exec(text.slice(0, TITLE_MAX_CHARS + 1024));
  if (!m) return null;
  const line = m[1].trim();
  if (line.length < 3 || line.length > TITLE_MAX_CHARS) return null;
  if (line.split(/\s+/).length > TITLE_MAX_WORDS) return null;
  if (!/\p{L}/u.test(line)) return null;
  // Two sentences, a list item, a quote, code or markup are text, not a title.
  if (/[.!?]\s+\S/.test(line) || /^([-*+>#|]|\d+[.)]\s)/.test(line) || /[{};=<>]/.test(line)) return null;
  return line.replace(/[\s:]+$/, '');
}

export async function extractText(input: ExtractInput): Promise<ProcessedDocument> {
  input.signal.throwIfAborted();
  const { textMaxChars } = resolveLimits(input.limits);
  const decoded = decodeText(input.bytes, { contentType: input.contentType, maxChars: textMaxChars });
  // Normalise line endings, drop NULs, and trim blank lines at either end.
  let text = decoded.text
    .replace(/\r\n?/g, '\n')
    .replace(/\u0000/g, '')
    .replace(/^(?:[ \t]*\n)+/, '')
    .trimEnd();
  const format = textFormat(text, input.filename, input.contentType);

  const metadata: Record<string, unknown> = { format, encoding: decoded.encoding };
  if (format === 'json' && text.length <= JSON_PRETTY_MAX_CHARS) {
    try {
      const value: unknown = JSON.parse(text);
      metadata.json_valid = true;
      if (lineStats(text).longest > 500) text = JSON.stringify(value, null, 2);
    } catch {
      metadata.json_valid = false;
      if (isJsonLines(text)) metadata.json_lines = true;
    }
  }
  const title = format === 'text' ? firstLineTitle(text) : null;
  if (title) {
    metadata.title = title;
    metadata.title_from = 'first_line';
  }
  metadata.char_count = text.length;
  metadata.line_count = lineStats(text).count;
  metadata.word_count = countWords(text);
  if (!/\S/.test(text)) metadata.empty = true;
  if (decoded.truncated) {
    metadata.truncated = true;
    metadata.notes = [`Only the first ${textMaxChars} characters were read (TEXT_MAX_CHARS).`];
  }

  return {
    kind: 'text',
    content: text,
    metadata,
    tables: [],
    images: [],
    urls: [],
    pages: format === 'markdown' ? sectionsByHeadings(text, 2) : [],
  };
}
