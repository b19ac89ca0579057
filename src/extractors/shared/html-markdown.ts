/**
 * DOM -> Markdown walk shared by the HTML and DOCX extractors (DOCX arrives as HTML from mammoth).
 * Headings become `#`, lists keep nesting and numbering, data tables become pipe tables (and are
 * reported separately), links are collected rather than inlined so retrieval text stays clean.
 * Works on any DOM with the standard Node/Element interfaces (jsdom here).
 */
import { toPipeTable } from './markdown-table.ts';
import { TABLE_MAX_CELLS, TABLE_MAX_COLUMNS } from './limits.ts';
import type { PageSpan } from './types.ts';

const ELEMENT = 1;
const TEXT = 3;

export interface WalkedTable {
  /** Rows with merged cells spread into every cell they cover; first row is the header. */
  rows: string[][];
  markdown: string;
  index: number;
}

export interface WalkedLink {
  href: string;
  text: string;
  /** Inside nav/header/footer or role=navigation. */
  navigation: boolean;
}

export interface WalkOptions {
  /** Resolve relative hrefs against this; links that stay relative are dropped. */
  baseUrl?: string;
  /** Collect links while walking (DOCX uses this; HTML collects over the whole page instead). */
  collectLinks?: boolean;
  /**
   * Render links as Markdown `[text](href)`. Off by default: targets are reported in urls[], and
   * inline targets would crowd retrieval text (a Wikipedia article grows by a quarter).
   */
  inlineLinks?: boolean;
  /**
   * Tables of one row (2+ columns) are data, not layout. Word authors use such tables for records
   * (a chat export's message row); on web pages one-row tables are mostly layout.
   */
  oneRowTables?: boolean;
}

export interface WalkResult {
  markdown: string;
  tables: WalkedTable[];
  links: WalkedLink[];
  images: Array<{ alt: string; src: string }>;
  headings: number;
}

const SKIP = new Set([
  'script', 'style', 'noscript', 'template', 'head', 'title', 'meta', 'link', 'iframe', 'object',
  'embed', 'svg', 'math', 'canvas', 'audio', 'video', 'select', 'option', 'input', 'textarea', 'button',
]);

const BLOCK = new Set([
  'address', 'article', 'aside', 'blockquote', 'center', 'details', 'dialog', 'dd', 'div', 'dl', 'dt',
  'fieldset', 'figcaption', 'figure', 'footer', 'form', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'header',
  'hgroup', 'hr', 'li', 'main', 'nav', 'ol', 'p', 'pre', 'section', 'summary', 'table', 'ul', 'body',
  'html', 'tbody', 'thead', 'tfoot', 'tr', 'td', 'th', 'caption', 'menu', 'legend',
]);

// Line breaks from <br> survive whitespace collapsing as this private-use sentinel.
const BR = '\uE000';

/**
 * Recursion depth of the walk (element levels) before a subtree is read flat by an iterative scan.
 * HTML arrives bounded to 512 levels (limits.ts); this guards every other caller (DOCX) against a
 * stack overflow on a pathologically deep tree.
 */
export const WALK_MAX_DEPTH = 1000;

interface Ctx {
  depth: number;
  opts: WalkOptions;
  tables: WalkedTable[];
  links: WalkedLink[];
  images: Array<{ alt: string; src: string }>;
  headings: number;
}

function isHidden(el: Element): boolean {
  if (el.hasAttribute('hidden')) return true;
  const style = el.getAttribute('style');
  return style !== null && /display\s*:\s*none|visibility\s*:\s*hidden/i.test(style);
}

/** Absolute http(s)/mailto URL for an href, or null. */
export function resolveHref(href: string | null, baseUrl?: string): string | null {
  if (!href) return null;
  const h = href.trim();
  if (!h || h.startsWith('#') || /^(javascript|data|vbscript):/i.test(h)) return null;
  // canParse first: a thrown TypeError per relative link is slow on link-heavy pages.
  if (!URL.canParse(h, baseUrl)) return null;
  try {
    const u = baseUrl ? new URL(h, baseUrl) : new URL(h);
    if (u.protocol !== 'http:' && u.protocol !== 'https:' && u.protocol !== 'mailto:') return null;
    return u.href;
  } catch {
    return null;
  }
}

function inNavigation(el: Element): boolean {
  for (let cur: Element | null = el; cur; cur = cur.parentElement) {
    const n = cur.localName;
    if (n === 'nav' || n === 'header' || n === 'footer' || cur.getAttribute('role') === 'navigation') return true;
  }
  return false;
}

function collapse(s: string): string {
  return s
    .replace(/[ \t\n\r\f\v\u00a0]+/g, ' ')
    .split(BR)
    .map((l) => l.trim())
    .join('\n')
    .trim();
}

/** Text of a subtree without recursion: visible text, blocks spaced, <br> kept. */
function flatText(root: Node): string {
  const parts: string[] = [];
  let node: Node | null = root;
  while (node) {
    let descend = false;
    if (node.nodeType === TEXT) parts.push(node.nodeValue ?? '');
    else if (node.nodeType === ELEMENT) {
      const el = node as Element;
      const name = el.localName;
      if (name === 'br') parts.push(BR);
      else if (!SKIP.has(name) && !isHidden(el)) {
        if (BLOCK.has(name)) parts.push(' ');
        descend = el.firstChild !== null;
      }
    }
    if (descend) {
      node = node.firstChild;
      continue;
    }
    while (node && node !== root && !node.nextSibling) {
      node = node.parentNode;
      if (node && node.nodeType === ELEMENT && BLOCK.has((node as Element).localName)) parts.push(' ');
    }
    node = node && node !== root ? node.nextSibling : null;
  }
  return parts.join('');
}

/** Inline rendering of a node's content (block children flattened with spaces). */
function inline(node: Node, ctx: Ctx): string {
  if (node.nodeType === TEXT) return node.nodeValue ?? '';
  if (node.nodeType !== ELEMENT) return '';
  if (ctx.depth >= WALK_MAX_DEPTH) return ` ${flatText(node)} `;
  ctx.depth++;
  try {
    return inlineElement(node as Element, ctx);
  } finally {
    ctx.depth--;
  }
}

function inlineElement(el: Element, ctx: Ctx): string {
  const name = el.localName;
  if (SKIP.has(name) || isHidden(el)) return '';
  if (name === 'br') return BR;
  if (name === 'img') {
    const alt = (el.getAttribute('alt') ?? '').trim();
    ctx.images.push({ alt, src: el.getAttribute('src') ?? '' });
    return alt ? ` ${alt} ` : '';
  }
  let s = '';
  for (let c = el.firstChild; c; c = c.nextSibling) s += inline(c, ctx);
  if (name === 'a') {
    // Footnote back-references ("↑") carry no content.
    if (s.trim() === '↑') return '';
    const raw = el.getAttribute('href');
    const href = resolveHref(raw, ctx.opts.baseUrl);
    const text = collapse(s);
    if (ctx.opts.collectLinks && href) ctx.links.push({ href, text, navigation: inNavigation(el) });
    if (ctx.opts.inlineLinks && text && !text.includes(BR)) {
      // Without a base URL a relative target stays as written: still useful words, never fetched.
      const r = (raw ?? '').trim();
      const target = href ?? (r && !r.startsWith('#') && !/^[a-z][a-z0-9+.-]*:/i.test(r) ? r : null);
      if (target && target !== text) return `[${text.replace(/[[\]]/g, '')}](${target.replace(/[()\s]/g, encodeURIComponent)})`;
    }
  }
  if (name === 'code' && s.trim() && el.parentElement?.localName !== 'pre') return `\`${s.trim()}\``;
  if (BLOCK.has(name)) return ` ${s} `;
  return s;
}

function listBlock(el: Element, ctx: Ctx, indent: string): string {
  if (ctx.depth >= WALK_MAX_DEPTH) return `${indent}${collapse(flatText(el))}`;
  ctx.depth++;
  try {
    return listLines(el, ctx, indent);
  } finally {
    ctx.depth--;
  }
}

function listLines(el: Element, ctx: Ctx, indent: string): string {
  const ordered = el.localName === 'ol';
  let n = Number.parseInt(el.getAttribute('start') ?? '1', 10);
  if (!Number.isFinite(n)) n = 1;
  const lines: string[] = [];
  for (let c = el.firstElementChild; c; c = c.nextElementSibling) {
    if (c.localName !== 'li') {
      if (c.localName === 'ul' || c.localName === 'ol') lines.push(listBlock(c, ctx, indent + '  '));
      continue;
    }
    if (isHidden(c)) continue;
    const marker = ordered ? `${n++}.` : '-';
    const childIndent = indent + ' '.repeat(marker.length + 1);
    let text = '';
    const nested: string[] = [];
    for (let g = c.firstChild; g; g = g.nextSibling) {
      const gn = g.nodeType === ELEMENT ? (g as Element).localName : '';
      if (gn === 'ul' || gn === 'ol') nested.push(listBlock(g as Element, ctx, childIndent));
      else if (gn === 'table') nested.push(tableBlock(g as Element, ctx, childIndent));
      else text += inline(g, ctx);
    }
    const body = collapse(text).replace(/\n/g, `\n${childIndent}`);
    if (body || nested.length === 0) lines.push(`${indent}${marker} ${body}`.trimEnd());
    for (const b of nested) if (b) lines.push(b);
  }
  return lines.join('\n');
}

function cellText(cell: Element, ctx: Ctx): string {
  // Lists inside a cell read as "a; b" rather than losing their boundaries.
  const parts: string[] = [];
  let buf = '';
  for (let c = cell.firstChild; c; c = c.nextSibling) {
    if (c.nodeType === ELEMENT && ((c as Element).localName === 'ul' || (c as Element).localName === 'ol')) {
      if (collapse(buf)) parts.push(collapse(buf));
      buf = '';
      const items = [...(c as Element).children].map((li) => collapse(inline(li, ctx))).filter(Boolean);
      if (items.length) parts.push(items.join('; '));
    } else if (c.nodeType === ELEMENT && ((c as Element).localName === 'p' || (c as Element).localName === 'div')) {
      if (collapse(buf)) parts.push(collapse(buf));
      buf = '';
      const t = collapse(inline(c, ctx));
      if (t) parts.push(t);
    } else {
      buf += inline(c, ctx);
    }
  }
  if (collapse(buf)) parts.push(collapse(buf));
  return parts.join(' ').replace(/\n/g, ' ');
}

function rowsOf(table: Element): Element[] {
  const rows: Element[] = [];
  for (let c = table.firstElementChild; c; c = c.nextElementSibling) {
    const n = c.localName;
    if (n === 'tr') rows.push(c);
    else if (n === 'thead' || n === 'tbody' || n === 'tfoot') {
      for (let r = c.firstElementChild; r; r = r.nextElementSibling) if (r.localName === 'tr') rows.push(r);
    }
  }
  return rows;
}

function span(el: Element, attr: string): number {
  const v = Number.parseInt(el.getAttribute(attr) ?? '1', 10);
  return Number.isFinite(v) && v > 0 ? Math.min(v, 1000) : 1;
}

/** Grid with colspan/rowspan spread into every covered cell. */
function tableGrid(table: Element, ctx: Ctx): string[][] {
  const grid: string[][] = [];
  const pending: Array<{ left: number; text: string } | undefined> = [];
  let width = 0;
  for (const tr of rowsOf(table)) {
    // colspan/rowspan can multiply a few bytes into millions of cells: the padded grid is capped.
    if ((grid.length + 1) * Math.max(width, 1) > TABLE_MAX_CELLS) break;
    const row: string[] = [];
    grid.push(row);
    let col = 0;
    const fillPending = (): void => {
      while (pending[col] && pending[col]!.left > 0) {
        row[col] = pending[col]!.text;
        pending[col]!.left--;
        col++;
      }
    };
    for (let cell = tr.firstElementChild; cell; cell = cell.nextElementSibling) {
      if (cell.localName !== 'td' && cell.localName !== 'th') continue;
      fillPending();
      if (col >= TABLE_MAX_COLUMNS) break;
      const text = cellText(cell, ctx);
      const cs = Math.min(span(cell, 'colspan'), TABLE_MAX_COLUMNS - col);
      const rs = span(cell, 'rowspan');
      for (let k = 0; k < cs; k++) {
        row[col] = text;
        if (rs > 1) pending[col] = { left: rs - 1, text };
        col++;
      }
    }
    fillPending();
    // Rowspans reaching past the last cell of this row.
    for (let c = col; c < pending.length; c++) {
      if (pending[c] && pending[c]!.left > 0 && row[c] === undefined) {
        row[c] = pending[c]!.text;
        pending[c]!.left--;
      }
    }
    if (row.length > width) width = row.length;
  }
  return grid.map((r) => Array.from({ length: width }, (_, i) => r[i] ?? ''));
}

function isLayoutTable(table: Element, grid: string[][], oneRowTables = false): boolean {
  if (table.getAttribute('role') === 'presentation') return true;
  const width = grid[0]?.length ?? 0;
  if (grid.length < (oneRowTables ? 1 : 2) || width < 2) return true;
  // Page layout rather than data: headings in cells, long prose cells, or large nested tables.
  if (table.querySelector('h1, h2, h3, h4, h5, h6')) return true;
  if (grid.some((r) => r.some((c) => c.length > 1500))) return true;
  return [...table.querySelectorAll('table')].some((t) => t.querySelectorAll('tr').length > 10);
}

function tableBlock(table: Element, ctx: Ctx, indent = ''): string {
  const grid = tableGrid(table, ctx);
  // Layout tables (one column, one row, nested tables) read as ordinary blocks.
  if (isLayoutTable(table, grid, ctx.opts.oneRowTables)) {
    const out: string[] = [];
    for (const tr of rowsOf(table)) {
      for (let cell = tr.firstElementChild; cell; cell = cell.nextElementSibling) {
        if (cell.localName === 'td' || cell.localName === 'th') blocks(cell, ctx, out);
      }
    }
    return out.join('\n\n');
  }
  // Drop columns and rows that are empty everywhere (spacer cells in web layouts).
  const keepCols = grid[0].map((_, ci) => grid.some((r) => r[ci] !== ''));
  const rows = grid.map((r) => r.filter((_, ci) => keepCols[ci])).filter((r) => r.some((c) => c !== ''));
  if (rows.length === 0) return '';
  const caption = table.querySelector(':scope > caption');
  const md = toPipeTable(rows);
  ctx.tables.push({ rows, markdown: md, index: ctx.tables.length + 1 });
  const cap = caption ? collapse(inline(caption, ctx)) : '';
  const text = cap ? `${cap}\n\n${md}` : md;
  return indent ? text.replace(/\n/g, `\n${indent}`).replace(/^/, indent) : text;
}

/** Walk block structure, appending Markdown blocks to out. */
function blocks(el: Element, ctx: Ctx, out: string[]): void {
  if (ctx.depth >= WALK_MAX_DEPTH) {
    const t = collapse(flatText(el));
    if (t) out.push(t);
    return;
  }
  ctx.depth++;
  try {
    blockChildren(el, ctx, out);
  } finally {
    ctx.depth--;
  }
}

function blockChildren(el: Element, ctx: Ctx, out: string[]): void {
  let buf = '';
  const flush = (): void => {
    const t = collapse(buf);
    if (t) out.push(t);
    buf = '';
  };
  for (let c = el.firstChild; c; c = c.nextSibling) {
    if (c.nodeType !== ELEMENT) {
      if (c.nodeType === TEXT) buf += c.nodeValue ?? '';
      continue;
    }
    const e = c as Element;
    const name = e.localName;
    if (SKIP.has(name) || isHidden(e)) continue;
    if (!BLOCK.has(name)) {
      buf += inline(e, ctx);
      continue;
    }
    flush();
    if (/^h[1-6]$/.test(name)) {
      const t = collapse(inline(e, ctx)).replace(/\n/g, ' ');
      if (t) {
        out.push(`${'#'.repeat(Number(name[1]))} ${t}`);
        ctx.headings++;
      }
    } else if (name === 'ul' || name === 'ol' || name === 'menu') {
      const l = listBlock(e, ctx, '');
      if (l.trim()) out.push(l);
    } else if (name === 'table') {
      const t = tableBlock(e, ctx);
      if (t.trim()) out.push(t);
    } else if (name === 'pre') {
      const t = (e.textContent ?? '').replace(/\s+$/, '');
      if (t.trim()) out.push('```\n' + t + '\n```');
    } else if (name === 'hr') {
      out.push('---');
    } else if (name === 'blockquote') {
      const inner: string[] = [];
      blocks(e, ctx, inner);
      if (inner.length) out.push(inner.join('\n\n').replace(/^/gm, '> '));
    } else if (name === 'p' || name === 'dt' || name === 'dd' || name === 'figcaption' || name === 'summary') {
      const t = collapse(inline(e, ctx));
      if (t) out.push(t);
    } else {
      blocks(e, ctx, out);
    }
  }
  flush();
}

/** Render an element (document body, article root) as Markdown. */
export function walkToMarkdown(root: Element, opts: WalkOptions = {}): WalkResult {
  const ctx: Ctx = { depth: 0, opts, tables: [], links: [], images: [], headings: 0 };
  const out: string[] = [];
  blocks(root, ctx, out);
  return { markdown: out.join('\n\n'), tables: ctx.tables, links: ctx.links, images: ctx.images, headings: ctx.headings };
}

/**
 * Section spans of Markdown content, split before every heading of level <= maxLevel (labelled
 * with the heading text). Content before the first heading is its own section. Empty content -> [].
 */
export function sectionsByHeadings(markdown: string, maxLevel: number): PageSpan[] {
  if (!markdown) return [];
  const re = new RegExp(`^#{1,${maxLevel}} (.+)$`, 'gm');
  const starts: Array<{ at: number; label?: string }> = [];
  for (let m = re.exec(markdown); m; m = re.exec(markdown)) starts.push({ at: m.index, label: m[1].trim() });
  if (starts.length === 0 || starts[0].at > 0) starts.unshift({ at: 0 });
  return starts.map((s, i) => ({
    number: i + 1,
    unit: 'section' as const,
    ...(s.label ? { label: s.label.slice(0, 200) } : {}),
    start: s.at,
    end: i + 1 < starts.length ? starts[i + 1].at : markdown.length,
  }));
}
