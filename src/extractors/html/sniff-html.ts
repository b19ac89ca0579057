/** Whether text is HTML by its first bytes, for type detection (html/index.ts). */

/** The WHATWG MIME-sniffing HTML signatures, after leading whitespace and comments. */
export function looksLikeHtml(text: string): boolean {
  let s = text.replace(/^\uFEFF/, '').trimStart();
  if (/^<\?xml[^>]*\?>/i.test(s)) s = s.replace(/^<\?xml[^>]*\?>/i, '').trimStart();
  while (s.startsWith('<!--')) {
    const end = s.indexOf('-->');
    if (end < 0) return false;
    s = s.slice(end + 3).trimStart();
  }
  return /^<(!doctype\s+html|html|head|body|script|iframe|h1|div|font|table|a|style|title|b|br|p)[\s/>]/i.test(s);
}
