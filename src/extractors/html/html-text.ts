/**
 * Plain-text reading of a page too large for a DOM (past HTML_MAX_ELEMENTS): one linear scan with
 * html-scan.ts, constant memory beyond the output. Block elements break lines, headings keep their
 * `#`, list items their `-`, table cells are separated by ` | `; links are collected (first N,
 * with the full count). Character references: numeric ones and the common named ones.
 */
import type { ExtractedUrl } from '../shared/types.ts';
import { scanHtml } from './html-scan.ts';
import { resolveHref } from '../shared/html-markdown.ts';

const SKIP = new Set([
  'script', 'style', 'noscript', 'template', 'head', 'title', 'iframe', 'object', 'embed', 'svg', 'math', 'canvas',
  'audio', 'video', 'select', 'textarea', 'button',
]);
const BLOCK = new Set([
  'address', 'article', 'aside', 'blockquote', 'center', 'details', 'dialog', 'dd', 'div', 'dl', 'dt', 'fieldset',
  'figcaption', 'figure', 'footer', 'form', 'header', 'hgroup', 'hr', 'main', 'nav', 'ol', 'p', 'pre', 'section',
  'summary', 'table', 'ul', 'caption', 'menu', 'legend', 'tbody', 'thead', 'tfoot', 'body', 'html',
]);
const NAV = new Set(['nav', 'header', 'footer']);

const NAMED: Record<string, string> = {
  amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0', copy: '©', reg: '®', trade: '™', hellip: '…',
  mdash: '—', ndash: '–', lsquo: '‘', rsquo: '’', ldquo: '“', rdquo: '”', laquo: '«', raquo: '»', bull: '•',
  middot: '·', deg: '°', euro: '€', pound: '£', yen: '¥', cent: '¢', sect: '§', para: '¶', times: '×', divide: '÷',
  shy: '\u00ad', ensp: '\u2002', emsp: '\u2003', thinsp: '\u2009', zwj: '\u200d', zwnj: '\u200c',
};

const ENTITY_RE = /&(?:#(\d{1,7})|#[xX]([0-9a-fA-F]{1,6})|([A-Za-z][A-Za-z0-9]{1,31}));?/g;

export function decodeEntities(s: string): string {
  if (!s.includes('&')) return s;
  return s.replace(ENTITY_RE, (all, dec: string | undefined, hex: string | undefined, name: string | undefined) => {
    if (name !== undefined) return NAMED[name] ?? NAMED[name.toLowerCase()] ?? all;
    const cp = dec !== undefined ? Number.parseInt(dec, 10) : Number.parseInt(hex!, 16);
    return cp > 0 && cp <= 0x10ffff && (cp < 0xd800 || cp > 0xdfff) ? String.fromCodePoint(cp) : '\ufffd';
  });
}

const HREF_RE = /\shref\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))/i;

/** Builds text from pieces: whitespace runs collapse, pending line breaks win over spaces. */
class TextOut {
  private readonly parts: string[] = [];
  private breaks = 0;
  private space = false;
  private started = false;

  text(raw: string): void {
    const s = raw.replace(/[ \t\n\r\f\u00a0]+/g, ' ');
    if (s === ' ' || s === '') {
      if (s === ' ') this.space = true;
      return;
    }
    const lead = s.charCodeAt(0) === 32;
    const body = s.trim();
    if (this.started) {
      if (this.breaks > 0) this.parts.push(this.breaks > 1 ? '\n\n' : '\n');
      else if (this.space || lead) this.parts.push(' ');
    }
    this.parts.push(body);
    this.started = true;
    this.breaks = 0;
    this.space = s.charCodeAt(s.length - 1) === 32;
  }

  /** Literal text after a forced line start (a heading's `# `, a list item's `- `). */
  marker(s: string, breaks: number): void {
    this.lineBreak(breaks);
    if (this.started) this.parts.push(this.breaks > 1 ? '\n\n' : '\n');
    this.parts.push(s);
    this.started = true;
    this.breaks = 0;
    this.space = false;
  }

  lineBreak(n: number): void {
    if (n > this.breaks) this.breaks = n;
    this.space = false;
  }

  toString(): string {
    return this.parts.join('');
  }
}

export interface PlainHtml {
  content: string;
  title: string;
  urls: ExtractedUrl[];
  linkTotal: number;
}

export function htmlToPlainText(html: string, opts: { baseUrl?: string; maxLinks: number }): PlainHtml {
  const out = new TextOut();
  const skip = new Map<string, number>();
  let skipping = 0;
  let nav = 0;
  let title = '';
  let inTitle = false;
  let base = opts.baseUrl;
  let baseSeen = false;
  const urls: ExtractedUrl[] = [];
  const seen = new Set<string>();
  let anchor: { url: string; navigation: boolean; text: string } | null = null;
  let pre = 0;

  const endAnchor = (): void => {
    if (!anchor) return;
    const a = anchor;
    anchor = null;
    if (seen.has(a.url)) return;
    seen.add(a.url);
    if (urls.length < opts.maxLinks) {
      urls.push({ url: a.url, type: a.navigation ? 'navigation' : 'general', context: a.text.replace(/\s+/g, ' ').trim().slice(0, 200) });
    }
  };

  scanHtml(html, {
    text(start, end) {
      if (inTitle) {
        if (title.length < 1000) title += html.slice(start, Math.min(end, start + 1000));
        return;
      }
      if (skipping > 0) return;
      const t = decodeEntities(html.slice(start, end));
      if (anchor && anchor.text.length < 200) anchor.text += t.slice(0, 200);
      if (pre > 0) {
        for (const [i, line] of t.split('\n').entries()) {
          if (i > 0) out.lineBreak(1);
          out.text(line);
        }
      } else out.text(t);
    },
    startTag(name, _start, nameEnd, end) {
      if (name === 'title' && !title) {
        inTitle = true;
        return;
      }
      if (name === 'base' && !baseSeen) {
        baseSeen = true;
        const m = HREF_RE.exec(html.slice(nameEnd - 1, end));
        const href = m ? decodeEntities(m[1] ?? m[2] ?? m[3] ?? '') : '';
        base = resolveHref(href, opts.baseUrl) ?? base;
        return;
      }
      if (SKIP.has(name)) {
        skip.set(name, (skip.get(name) ?? 0) + 1);
        skipping++;
        return;
      }
      if (NAV.has(name)) nav++;
      if (skipping > 0) return;
      if (name === 'a' || name === 'area') {
        endAnchor();
        const m = HREF_RE.exec(html.slice(nameEnd - 1, end));
        const url = m ? resolveHref(decodeEntities(m[1] ?? m[2] ?? m[3] ?? ''), base) : null;
        if (url) {
          anchor = { url, navigation: nav > 0, text: '' };
          if (name === 'area') endAnchor();
        }
        return;
      }
      if (name === 'br') out.lineBreak(1);
      else if (/^h[1-6]$/.test(name)) out.marker(`${'#'.repeat(Number(name[1]))} `, 2);
      else if (name === 'li') out.marker('- ', 1);
      else if (name === 'tr') out.lineBreak(1);
      else if (name === 'td' || name === 'th') out.text(' | ');
      else if (name === 'pre') {
        pre++;
        out.lineBreak(2);
      } else if (BLOCK.has(name)) out.lineBreak(2);
    },
    endTag(name) {
      if (name === 'title' && inTitle) {
        inTitle = false;
        return;
      }
      const s = skip.get(name) ?? 0;
      if (s > 0) {
        skip.set(name, s - 1);
        skipping--;
        return;
      }
      if (NAV.has(name) && nav > 0) nav--;
      if (name === 'a') endAnchor();
      else if (name === 'pre' && pre > 0) {
        pre--;
        out.lineBreak(2);
      } else if (/^h[1-6]$/.test(name) || BLOCK.has(name)) out.lineBreak(2);
      else if (name === 'li' || name === 'tr') out.lineBreak(1);
    },
  });
  endAnchor();
  return { content: out.toString(), title: decodeEntities(title).replace(/\s+/g, ' ').trim(), urls, linkTotal: seen.size };
}
