/**
 * A small born-digital PDF written by hand: pages of Helvetica text lines (one of the 14 standard
 * fonts, so nothing is embedded), an info dictionary and an exact cross-reference table. It needs
 * no PDF library, so tests that only need "a PDF with known text" load nothing heavy.
 */

export const MINIMAL_PDF = {
  title: 'Minimal Fixture Report',
  author: 'Fixture Writer',
  /** Per page: a heading (18 pt) and body lines (12 pt). */
  pages: [
    ['Harbour inspection notes', 'The north pier was inspected on a calm morning.', 'Two bollards need new paint before winter.'],
    ['Crane maintenance', 'Crane seven received a new hydraulic hose.'],
  ],
};

/** A PDF literal string: backslashes and parentheses escaped (the text is ASCII). */
const literal = (s: string) => `(${s.replace(/[\\()]/g, (c) => `\\${c}`)})`;

export function makeMinimalPdf(spec: { title: string; author: string; pages: string[][] } = MINIMAL_PDF): Buffer {
  // Object numbers: 1 catalog, 2 pages, 3 font, 4 info, then a page and its content per page.
  const pageIds = spec.pages.map((_, i) => 5 + i * 2);
  const objects = new Map<number, string>();
  objects.set(1, '<< /Type /Catalog /Pages 2 0 R >>');
  objects.set(2, `<< /Type /Pages /Kids [${pageIds.map((id) => `${id} 0 R`).join(' ')}] /Count ${pageIds.length} >>`);
  objects.set(3, '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>');
  objects.set(4, `<< /Title ${literal(spec.title)} /Author ${literal(spec.author)} /CreationDate (D:20240314120000Z) >>`);
  spec.pages.forEach((lines, i) => {
    const ops = lines.map((line, k) => `BT /F1 ${k === 0 ? 18 : 12} Tf 72 ${720 - k * 24} Td ${literal(line)} Tj ET`).join('\n');
    objects.set(pageIds[i]!, `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents ${pageIds[i]! + 1} 0 R >>`);
    objects.set(pageIds[i]! + 1, `<< /Length ${Buffer.byteLength(ops, 'latin1')} >>\nstream\n${ops}\nendstream`);
  });
  let out = '%PDF-1.4\n%\xe2\xe3\xcf\xd3\n';
  const offsets: number[] = [];
  const count = objects.size;
  for (let id = 1; id <= count; id++) {
    offsets[id] = Buffer.byteLength(out, 'latin1');
    out += `${id} 0 obj\n${objects.get(id)}\nendobj\n`;
  }
  const xref = Buffer.byteLength(out, 'latin1');
  out += `xref\n0 ${count + 1}\n0000000000 65535 f \n`;
  for (let id = 1; id <= count; id++) out += `${String(offsets[id]).padStart(10, '0')} 00000 n \n`;
  out += `trailer\n<< /Size ${count + 1} /Root 1 0 R /Info 4 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}
