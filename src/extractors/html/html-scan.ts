/**
 * A linear HTML lexer: one pass, every character looked at a bounded number of times, no tree.
 * It follows the HTML tokenizer where that decides what is a tag (quoted attribute values may hold
 * `>`, comments, raw-text elements such as <textarea> and <title>) and is lenient elsewhere. The
 * bounding pre-pass (html-bounds.ts) and the plain-text fallback (html-text.ts) are built on it.
 */

export interface TagVisitor {
  text(start: number, end: number): void;
  /** `end` is just past the closing `>`; the attributes lie in html.slice(nameEnd, end - 1). */
  startTag(name: string, start: number, nameEnd: number, end: number, selfClosing: boolean): void;
  endTag(name: string, start: number, end: number): void;
}

/** Elements whose content is text up to their own end tag (RCDATA, RAWTEXT, script data). */
export const RAW_TEXT = new Set(['script', 'style', 'xmp', 'iframe', 'noembed', 'noframes', 'textarea', 'title']);

const rawEnd = new Map<string, RegExp>();
function rawEndRe(name: string): RegExp {
  let re = rawEnd.get(name);
  if (!re) {
    re = new RegExp(`</${name}[\\t\\n\\f\\r />]`, 'gi');
    rawEnd.set(name, re);
  }
  return re;
}

const isAlpha = (c: number): boolean => (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
const isSpace = (c: number): boolean => c === 32 || c === 9 || c === 10 || c === 12 || c === 13;

/** End of the tag name that starts at `i`. */
function nameEnd(html: string, i: number): number {
  const n = html.length;
  while (i < n) {
    const c = html.charCodeAt(i);
    if (isSpace(c) || c === 47 || c === 62) break;
    i++;
  }
  return i;
}

/** Index just past the `>` that ends a tag whose attributes start at `i`, or -1 at end of input. */
function tagEnd(html: string, i: number): number {
  const n = html.length;
  while (i < n) {
    const c = html.charCodeAt(i);
    if (c === 62) return i + 1;
    if (c === 61) {
      i++;
      while (i < n && isSpace(html.charCodeAt(i))) i++;
      const q = html.charCodeAt(i);
      if (q === 34 || q === 39) {
        const close = html.indexOf(q === 34 ? '"' : "'", i + 1);
        if (close < 0) return -1;
        i = close + 1;
      }
      continue;
    }
    i++;
  }
  return -1;
}

export function scanHtml(html: string, v: TagVisitor): void {
  const n = html.length;
  let i = 0;
  let textStart = 0;
  const flush = (end: number): void => {
    if (end > textStart) v.text(textStart, end);
  };
  while (i < n) {
    const lt = html.indexOf('<', i);
    if (lt < 0) break;
    const c = html.charCodeAt(lt + 1);
    if (isAlpha(c)) {
      const ne = nameEnd(html, lt + 1);
      const end = tagEnd(html, ne);
      // A tag cut by the end of input is dropped by the tokenizer, and so is everything after it.
      if (end < 0) {
        flush(lt);
        return;
      }
      const name = html.slice(lt + 1, ne).toLowerCase();
      flush(lt);
      v.startTag(name, lt, ne, end, html.charCodeAt(end - 2) === 47);
      i = textStart = end;
      if (name === 'plaintext') {
        flush(n);
        return;
      }
      if (RAW_TEXT.has(name)) {
        const re = rawEndRe(name);
        re.lastIndex = end;
        const m = re.exec(html);
        if (!m) {
          flush(n);
          return;
        }
        flush(m.index);
        i = textStart = m.index;
      }
      continue;
    }
    if (c === 47) {
      const c2 = html.charCodeAt(lt + 2);
      if (isAlpha(c2)) {
        const ne = nameEnd(html, lt + 2);
        const end = tagEnd(html, ne);
        if (end < 0) {
          flush(lt);
          return;
        }
        flush(lt);
        v.endTag(html.slice(lt + 2, ne).toLowerCase(), lt, end);
        i = textStart = end;
        continue;
      }
      if (c2 === 62) {
        flush(lt);
        i = textStart = lt + 3;
        continue;
      }
      // `</` + anything else: a bogus comment up to the next `>`.
      flush(lt);
      const gt = html.indexOf('>', lt + 2);
      i = textStart = gt < 0 ? n : gt + 1;
      continue;
    }
    if (c === 33) {
      flush(lt);
      let end: number;
      if (html.startsWith('<!--', lt)) {
        if (html.startsWith('<!-->', lt)) end = lt + 5;
        else if (html.startsWith('<!--->', lt)) end = lt + 6;
        else {
          const close = html.indexOf('-->', lt + 4);
          end = close < 0 ? n : close + 3;
        }
      } else {
        const gt = html.indexOf('>', lt + 2);
        end = gt < 0 ? n : gt + 1;
      }
      i = textStart = end;
      continue;
    }
    if (c === 63) {
      flush(lt);
      const gt = html.indexOf('>', lt + 2);
      i = textStart = gt < 0 ? n : gt + 1;
      continue;
    }
    // A `<` that opens nothing is text.
    i = lt + 1;
  }
  flush(n);
}

/**
 * Removes <script> and <style> elements with their bodies, exactly as the regex
 * /<(script|style)\b[^>]*>[\s\S]*?<\/\1\s*>/gi would, in linear time: the regex retries from every
 * later `<script` when an end tag is missing, which is quadratic on a page of unclosed scripts.
 */
export function stripScriptsAndStyles(html: string): string {
  const parts: string[] = [];
  let kept = 0;
  // Positions past which no `>` / no end tag of that name exists (searches never repeat).
  let noGtAfter = Infinity;
  const noCloseAfter: Record<string, number> = { script: Infinity, style: Infinity };
  const open = /<(script|style)(?![A-Za-z0-9_])/gi;
  for (let m = open.exec(html); m; m = open.exec(html)) {
    const name = m[1].toLowerCase();
    const from = m.index + m[0].length;
    if (from >= noGtAfter) break;
    const gt = html.indexOf('>', from);
    if (gt < 0) {
      noGtAfter = from;
      break;
    }
    if (gt + 1 >= noCloseAfter[name]) continue;
    const close = new RegExp(`</${name}\\s*>`, 'gi');
    close.lastIndex = gt + 1;
    const c = close.exec(html);
    if (!c) {
      noCloseAfter[name] = gt + 1;
      continue;
    }
    parts.push(html.slice(kept, m.index));
    kept = c.index + c[0].length;
    open.lastIndex = kept;
  }
  if (kept === 0) return html;
  parts.push(html.slice(kept));
  return parts.join('');
}
