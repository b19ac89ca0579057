/**
 * Linear pre-pass over HTML before any DOM is built. It follows the parts of the HTML tree builder
 * that decide nesting (implied end tags of p/li/dd/td..., the adoption agency's simple case, the
 * re-opening of unclosed formatting elements) closely enough to measure the tree the parser will
 * build: elements (clones included), depth and the widest child list. Where the page would exceed
 * HTML_MAX_DEPTH or HTML_MAX_OPEN_FORMATTING, the offending start tags (and their end tags) are cut
 * from the source, so the parser sees a flatter page; on every other page the source is unchanged.
 * Where the model is unsure it over-estimates: that can only flatten, never let depth through.
 */
import { RAW_TEXT, scanHtml } from './html-scan.ts';
import { HTML_MAX_DEPTH, HTML_MAX_OPEN_FORMATTING } from '../shared/limits.ts';

export interface HtmlShape {
  /** Elements the parser will create, clones of re-opened formatting elements included. */
  elements: number;
  /** Start and end tags. */
  tags: number;
  maxDepth: number;
  /**
   * Sum of every element's depth: jsdom walks the ancestors on each insertion, so this, not the
   * element count, is its parse cost on deep pages.
   */
  depthSum: number;
  /** Most child nodes (elements and text runs) under one element. */
  maxChildren: number;
  /** Start tags removed because they sat deeper than HTML_MAX_DEPTH. */
  flattened: number;
  /** Formatting start tags removed past HTML_MAX_OPEN_FORMATTING. */
  formattingDropped: number;
}

export interface BoundedHtml {
  html: string;
  shape: HtmlShape;
}

const VOID = new Set([
  'area', 'base', 'basefont', 'bgsound', 'br', 'col', 'embed', 'frame', 'hr', 'image', 'img', 'input', 'keygen',
  'link', 'meta', 'param', 'source', 'track', 'wbr',
]);
const FORMATTING = new Set(['a', 'b', 'big', 'code', 'em', 'font', 'i', 'nobr', 's', 'small', 'strike', 'strong', 'tt', 'u']);
/** Elements that push a marker onto the list of active formatting elements. */
const MARKER = new Set(['td', 'th', 'caption', 'applet', 'marquee', 'object', 'template']);
const SPECIAL = new Set([
  'address', 'applet', 'area', 'article', 'aside', 'base', 'basefont', 'bgsound', 'blockquote', 'body', 'br', 'button',
  'caption', 'center', 'col', 'colgroup', 'dd', 'details', 'dir', 'div', 'dl', 'dt', 'embed', 'fieldset', 'figcaption',
  'figure', 'footer', 'form', 'frame', 'frameset', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'head', 'header', 'hgroup', 'hr',
  'html', 'iframe', 'img', 'input', 'keygen', 'li', 'link', 'listing', 'main', 'marquee', 'menu', 'meta', 'nav',
  'noembed', 'noframes', 'noscript', 'object', 'ol', 'p', 'param', 'plaintext', 'pre', 'script', 'search', 'section',
  'select', 'source', 'style', 'summary', 'table', 'tbody', 'td', 'template', 'textarea', 'tfoot', 'th', 'thead',
  'title', 'tr', 'track', 'ul', 'wbr', 'xmp',
]);
/** Start tags that close an open <p> (in button scope). */
const CLOSES_P = new Set([
  'address', 'article', 'aside', 'blockquote', 'center', 'details', 'dialog', 'dir', 'div', 'dl', 'fieldset',
  'figcaption', 'figure', 'footer', 'header', 'hgroup', 'main', 'menu', 'nav', 'ol', 'p', 'search', 'section',
  'summary', 'ul', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'pre', 'listing', 'form', 'plaintext', 'table', 'hr', 'xmp',
  'li', 'dd', 'dt',
]);
const HEADINGS = new Set(['h1', 'h2', 'h3', 'h4', 'h5', 'h6']);
/** Start tags after which the parser does not re-open formatting elements (block structure). */
const NO_RECONSTRUCT = new Set([...CLOSES_P, 'table', 'tbody', 'thead', 'tfoot', 'tr', 'td', 'th', 'caption', 'col', 'colgroup', 'html', 'head', 'body', 'frameset']);
const SCOPE = ['applet', 'caption', 'html', 'table', 'td', 'th', 'marquee', 'object', 'template'];
const BUTTON_SCOPE = [...SCOPE, 'button'];
const TABLE_SCOPE = ['html', 'table', 'template'];
const LIST_SCOPE = [...SCOPE, 'ol', 'ul'];
const TABLE_PARTS = new Set(['table', 'tbody', 'thead', 'tfoot', 'tr', 'td', 'th']);
/** Elements the parser creates once and never nests (second start tags merge attributes). */
const ROOTS = new Set(['html', 'head', 'body']);

interface Afe {
  name: string;
  key: string;
  entry: Entry | null;
}
interface Entry {
  name: string;
  afe: Afe | null;
  children: number;
  /** Position in the stack (entries only ever leave from the top, so it stays right). */
  index: number;
}
const MARK: Afe = { name: '', key: '', entry: null };

class TreeModel {
  readonly stack: Entry[] = [
    { name: 'html', afe: null, children: 0, index: 0 },
    { name: 'body', afe: null, children: 0, index: 1 },
  ];
  private readonly tops = new Map<string, number[]>([['html', [0]], ['body', [1]]]);
  /** Indices of special elements other than address, div and p (the li/dd/dt stop set). */
  private readonly listStops: number[] = [0, 1];
  /** Indices of special elements. */
  private readonly specials: number[] = [0, 1];
  readonly afe: Afe[] = [];
  elements = 0;
  depthSum = 0;
  maxDepth = 2;
  maxChildren = 0;

  top(name: string): number {
    const t = this.tops.get(name);
    return t && t.length ? t[t.length - 1] : -1;
  }

  topOf(names: readonly string[]): number {
    let best = -1;
    for (const n of names) best = Math.max(best, this.top(n));
    return best;
  }

  inScope(name: string, scope: readonly string[]): boolean {
    const t = this.top(name);
    return t >= 0 && this.topOf(scope) < t;
  }

  specialAbove(index: number): boolean {
    return this.specials.length > 0 && this.specials[this.specials.length - 1] > index;
  }

  listStopAbove(index: number): boolean {
    return this.listStops.length > 0 && this.listStops[this.listStops.length - 1] > index;
  }

  child(): void {
    const parent = this.stack[this.stack.length - 1];
    parent.children++;
    if (parent.children > this.maxChildren) this.maxChildren = parent.children;
  }

  push(name: string, afe: Afe | null = null): Entry {
    this.child();
    const i = this.stack.length;
    const e: Entry = { name, afe, children: 0, index: i };
    this.stack.push(e);
    let t = this.tops.get(name);
    if (!t) this.tops.set(name, (t = []));
    t.push(i);
    if (SPECIAL.has(name)) {
      this.specials.push(i);
      if (name !== 'address' && name !== 'div' && name !== 'p') this.listStops.push(i);
    }
    if (this.stack.length > this.maxDepth) this.maxDepth = this.stack.length;
    this.elements++;
    this.depthSum += this.stack.length;
    return e;
  }

  /** Pops every entry at `index` and above. */
  popTo(index: number): void {
    while (this.stack.length > index && this.stack.length > 2) {
      const e = this.stack.pop()!;
      const i = this.stack.length;
      this.tops.get(e.name)!.pop();
      if (this.specials[this.specials.length - 1] === i) this.specials.pop();
      if (this.listStops[this.listStops.length - 1] === i) this.listStops.pop();
      if (MARKER.has(e.name)) this.clearToMarker();
      else if (e.afe && e.afe.entry === e) e.afe.entry = null;
    }
  }

  clearToMarker(): void {
    while (this.afe.length) {
      const a = this.afe.pop()!;
      if (a === MARK) break;
      if (a.entry) a.entry.afe = null;
    }
  }

  afterMarker(): number {
    let n = 0;
    for (let i = this.afe.length - 1; i >= 0 && this.afe[i] !== MARK; i--) n++;
    return n;
  }

  lastAfe(name: string): number {
    for (let i = this.afe.length - 1; i >= 0 && this.afe[i] !== MARK; i--) if (this.afe[i].name === name) return i;
    return -1;
  }

  removeAfe(i: number): void {
    const [a] = this.afe.splice(i, 1);
    if (a.entry) a.entry.afe = null;
  }

  /** The parser re-opens formatting elements that were closed by a block boundary. */
  reconstruct(): void {
    const last = this.afe[this.afe.length - 1];
    if (!last || last === MARK || last.entry) return;
    let i = this.afe.length - 1;
    while (i >= 0 && this.afe[i] !== MARK && !this.afe[i].entry) i--;
    for (i++; i < this.afe.length; i++) {
      const a = this.afe[i];
      a.entry = this.push(a.name, a);
    }
  }

  /** Noah's Ark clause: at most three identical entries after the last marker. */
  pushAfe(a: Afe): void {
    let same = 0;
    let earliest = -1;
    for (let i = this.afe.length - 1; i >= 0 && this.afe[i] !== MARK; i--) {
      if (this.afe[i].key === a.key) {
        same++;
        earliest = i;
      }
    }
    if (same >= 3) this.removeAfe(earliest);
    this.afe.push(a);
  }
}

/**
 * Measures the page and, where it is too deep or holds too many open formatting elements, cuts
 * the offending tags. Linear: each tag costs O(1) amortised plus O(HTML_MAX_OPEN_FORMATTING).
 */
export function boundHtml(html: string, opts: { maxDepth?: number; maxOpenFormatting?: number } = {}): BoundedHtml {
  const maxDepth = opts.maxDepth ?? HTML_MAX_DEPTH;
  const maxOpen = opts.maxOpenFormatting ?? HTML_MAX_OPEN_FORMATTING;
  const m = new TreeModel();
  const cut: number[] = [];
  const dropped = new Map<string, number>();
  let tags = 0;
  let flattened = 0;
  let formattingDropped = 0;

  const drop = (name: string, start: number, end: number): void => {
    cut.push(start, end);
    dropped.set(name, (dropped.get(name) ?? 0) + 1);
  };

  const closeImplied = (name: string): void => {
    if (CLOSES_P.has(name) && m.inScope('p', BUTTON_SCOPE)) m.popTo(m.top('p'));
    if (HEADINGS.has(name) && HEADINGS.has(m.stack[m.stack.length - 1].name)) m.popTo(m.stack.length - 1);
    if (name === 'li') {
      const t = m.top('li');
      if (t >= 0 && !m.listStopAbove(t)) m.popTo(t);
    } else if (name === 'dd' || name === 'dt') {
      const t = Math.max(m.top('dd'), m.top('dt'));
      if (t >= 0 && !m.listStopAbove(t)) m.popTo(t);
    } else if (name === 'td' || name === 'th' || name === 'tr' || name === 'tbody' || name === 'thead' || name === 'tfoot') {
      const table = m.top('table');
      const cell = Math.max(m.top('td'), m.top('th'));
      if (cell > table) m.popTo(cell);
      if (name !== 'td' && name !== 'th') {
        const row = m.top('tr');
        if (row > table) m.popTo(row);
      }
      if (name === 'tbody' || name === 'thead' || name === 'tfoot') {
        const section = Math.max(m.top('tbody'), m.top('thead'), m.top('tfoot'));
        if (section > table) m.popTo(section);
      }
      // Cells and rows outside a row/section get the implied ones.
      if (table >= 0 && (name === 'td' || name === 'th') && m.top('tr') < table) {
        if (Math.max(m.top('tbody'), m.top('thead'), m.top('tfoot')) < table) m.push('tbody');
        m.push('tr');
      } else if (table >= 0 && name === 'tr' && Math.max(m.top('tbody'), m.top('thead'), m.top('tfoot')) < table) {
        m.push('tbody');
      }
    } else if (name === 'option' || name === 'optgroup') {
      if (m.stack[m.stack.length - 1].name === 'option') m.popTo(m.stack.length - 1);
      if (name === 'optgroup' && m.stack[m.stack.length - 1].name === 'optgroup') m.popTo(m.stack.length - 1);
    } else if (name === 'button' && m.inScope('button', SCOPE)) {
      m.popTo(m.top('button'));
    } else if (name === 'a' || name === 'nobr') {
      const i = m.lastAfe(name);
      if (i >= 0) {
        const e = m.afe[i].entry;
        const at = e ? e.index : -1;
        // Without a block in between the adoption agency simply closes it; with one, it moves
        // nodes about and the depth stays (the model keeps it, an over-estimate).
        if (at >= 0 && !m.specialAbove(at)) m.popTo(at);
        const j = m.lastAfe(name);
        if (j >= 0) m.removeAfe(j);
      }
    }
  };

  scanHtml(html, {
    text() {
      m.reconstruct();
      m.child();
    },
    startTag(name, start, nameEnd, end, selfClosing) {
      tags++;
      if (ROOTS.has(name)) return;
      closeImplied(name);
      if (!NO_RECONSTRUCT.has(name)) m.reconstruct();
      const foreign = m.top('svg') >= 0 || m.top('math') >= 0;
      if (VOID.has(name) || (foreign && selfClosing)) {
        m.child();
        m.elements++;
        m.depthSum += m.stack.length + 1;
        return;
      }
      // Raw-text elements hold only text and close at once: never cut (their text would be re-read as markup).
      if (m.stack.length >= maxDepth && !RAW_TEXT.has(name) && name !== 'plaintext') {
        drop(name, start, end);
        flattened++;
        return;
      }
      if (FORMATTING.has(name)) {
        if (name !== 'a' && m.afterMarker() >= maxOpen) {
          drop(name, start, end);
          formattingDropped++;
          return;
        }
        const a: Afe = { name, key: name + html.slice(nameEnd, end - 1).trim(), entry: null };
        a.entry = m.push(name, a);
        m.pushAfe(a);
        return;
      }
      m.push(name);
      if (MARKER.has(name)) m.afe.push(MARK);
    },
    endTag(name, start, end) {
      tags++;
      const d = dropped.get(name) ?? 0;
      if (d > 0) {
        dropped.set(name, d - 1);
        cut.push(start, end);
        return;
      }
      if (ROOTS.has(name)) return;
      if (name === 'br') {
        m.reconstruct();
        m.child();
        m.elements++;
        return;
      }
      if (name === 'p' && !m.inScope('p', BUTTON_SCOPE)) {
        // The parser inserts an empty <p>.
        m.child();
        m.elements++;
        return;
      }
      if (FORMATTING.has(name)) {
        const i = m.lastAfe(name);
        if (i >= 0) {
          const e = m.afe[i].entry;
          const at = e ? e.index : -1;
          if (at >= 0 && !m.specialAbove(at)) m.popTo(at);
          const j = m.lastAfe(name);
          if (j >= 0) m.removeAfe(j);
          return;
        }
      }
      const t = m.top(name);
      if (t < 0) return;
      if (SPECIAL.has(name)) {
        const scope = TABLE_PARTS.has(name) ? TABLE_SCOPE : name === 'li' ? LIST_SCOPE : SCOPE;
        if (m.topOf(scope) > t) return;
      } else if (m.specialAbove(t)) {
        return;
      }
      m.popTo(t);
    },
  });

  const shape: HtmlShape = { elements: m.elements, tags, maxDepth: m.maxDepth, depthSum: m.depthSum, maxChildren: m.maxChildren, flattened, formattingDropped };
  if (cut.length === 0) return { html, shape };
  const parts: string[] = [];
  let at = 0;
  for (let i = 0; i < cut.length; i += 2) {
    parts.push(html.slice(at, cut[i]));
    at = cut[i + 1];
  }
  parts.push(html.slice(at));
  return { html: parts.join(''), shape };
}
