/**
 * Plain text, Markdown, JSON and XML: decoded by BOM and heuristics (see decode-text.ts), line
 * endings normalised, and kept as written. Minified JSON is pretty-printed so that it chunks on
 * structure instead of one endless line. Markdown gets section spans from its headings.
 */
import type { ExtractInput, ProcessedDocument } from './types.ts';
import { decodeText } from './decode-text.ts';
import { sectionsByHeadings } from './html-markdown.ts';

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

/** JSON Lines: every non-empty line is its own JSON value. */
function isJsonLines(text: string): boolean {
  const lines = text.split('\n').filter((l) => l.trim());
  if (lines.length < 2) return false;
  try {
    for (const l of lines.slice(0, 50)) JSON.parse(l);
    return true;
  } catch {
    return false;
  }
}

export async function extractText(input: ExtractInput): Promise<ProcessedDocument> {
  input.signal.throwIfAborted();
  const decoded = decodeText(input.bytes, { contentType: input.contentType });
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
      const longest = text.split('\n').reduce((m, l) => Math.max(m, l.length), 0);
      if (longest > 500) text = JSON.stringify(value, null, 2);
    } catch {
      metadata.json_valid = false;
      if (isJsonLines(text)) metadata.json_lines = true;
    }
  }
  metadata.char_count = text.length;
  metadata.line_count = text ? text.split('\n').length : 0;
  metadata.word_count = (text.match(/[\p{L}\p{N}]+/gu) ?? []).length;
  if (!text.trim()) metadata.empty = true;

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
