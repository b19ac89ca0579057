/**
 * Per-chunk signals: the importance score (base 0.5, +0.2 headings, +0.15 numbers / currency /
 * percentages, +0.1 keywords, -0.2 under 50 chars; clamped to [0, 1], 2 decimals) and the content
 * type (table, list, heading, text).
 */
import type { ChunkContentType } from './types.ts';

const MD_HEADING_LINE = /^#{1,6}[ \t]+\S/m;
// A short first line without closing punctuation, in Title Case or CAPITALS, followed by more text.
const TITLE_FIRST_LINE = /^(?:[\p{Lu}\d][\p{L}\d'’&/-]*(?:[ \t]+(?:[\p{Lu}\d][\p{L}\d'’&/-]*|of|and|the|for|in|on|to|a|an|with|or|by|at|vs\.?)){0,11})[ \t]*:?\r?\n\s*\S/u;
// Both run on lower-cased text without the /i flag: case-insensitive matching of these
// alternations was most of chunking's CPU (scripts/bench/chunking.bench.ts).
const NUMERIC_SIGNAL =
  /[$€£¥₹]\s?\d|\d\s?%|\b\d{1,3}(?:,\d{3})+(?:\.\d+)?\b|\b\d+\.\d+\b|\b\d{2,}\b|\b(?:usd|eur|gbp|jpy)\s?\d/;
const KEYWORDS =
  /\b(?:important|importantly|key|critical|essential|significant(?:ly)?|summary|summari[sz]e[ds]?|conclusions?|results?|findings?|recommend(?:s|ed|ation|ations)?|must|required|requirements?|note|warning|caution|deadline|objectives?|goals?|total|overview|abstract|decision|action items?)\b/;
const DIGIT = /\d/;

const TABLE_LINE = /^\s*\|.*\|\s*$/;
const LIST_LINE = /^\s*(?:[-*+•◦▪‣●○–]|\d{1,3}[.)]|[a-zA-Z][.)]|\([a-zA-Z0-9]{1,3}\))\s+\S/;
const HEADING_LINE = /^#{1,6}[ \t]+\S/;
const PAGE_MARKER_LINE = /^-{3} (?:Page|Slide|Sheet) [^\n]* -{3}$/;

export function hasHeading(text: string): boolean {
  return MD_HEADING_LINE.test(text) || TITLE_FIRST_LINE.test(text.trimStart());
}

export function importanceScore(text: string): number {
  let score = 0.5;
  if (hasHeading(text)) score += 0.2;
  const lower = text.toLowerCase();
  // Every numeric signal but "percent" needs a digit; most prose chunks are decided by that check.
  if (DIGIT.test(text) ? NUMERIC_SIGNAL.test(lower) || lower.includes('percent') : /\bpercent\b/.test(lower)) score += 0.15;
  if (KEYWORDS.test(lower)) score += 0.1;
  if (text.trim().length < 50) score -= 0.2;
  return Math.round(Math.min(1, Math.max(0, score)) * 100) / 100;
}

export function contentType(text: string): ChunkContentType {
  const lines = text.split('\n').filter((l) => l.trim() && !PAGE_MARKER_LINE.test(l.trim()));
  if (lines.length === 0) return 'text';
  const share = (re: RegExp) => lines.filter((l) => re.test(l)).length / lines.length;
  if (share(TABLE_LINE) >= 0.5) return 'table';
  const headings = lines.filter((l) => HEADING_LINE.test(l)).length;
  if (headings === lines.length) return 'heading';
  if (HEADING_LINE.test(lines[0]) && lines.slice(1).join(' ').length < 100 && share(LIST_LINE) < 0.5) return 'heading';
  if (lines.length >= 2 && share(LIST_LINE) >= 0.5) return 'list';
  return 'text';
}
