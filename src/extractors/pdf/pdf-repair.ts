/**
 * Last-resort repair for truncated PDFs (downloads cut short, partial copies). pdf.js rebuilds a
 * lost cross-reference table by scanning for objects, but gives up when no trailer names the
 * document catalog. Appending a trailer that points at the catalog found in the bytes (and
 * closing a stream cut mid-way) lets it recover every page whose objects survived.
 */
const CATALOG = /(\d+)\s+(\d+)\s+obj\s*<<(?:(?!endobj)[\s\S]){0,2000}?\/Type\s*\/Catalog\b/g;

export function repairTruncatedPdf(bytes: Buffer): Buffer | null {
  const text = bytes.toString('latin1');
  let last: RegExpExecArray | null = null;
  for (const m of text.matchAll(CATALOG)) last = m as RegExpExecArray;
  if (!last) return null;
  const tail = `\nendstream\nendobj\ntrailer\n<< /Root ${last[1]} ${last[2]} R >>\n%%EOF\n`;
  return Buffer.concat([bytes, Buffer.from(tail, 'latin1')]);
}
