/**
 * Resource bombs, generated at run time (never committed): each function builds one hostile
 * input in memory, deterministically. Sizes match the table; the zip layouts come from
 * test/fixtures-gen so the suite and the unit tests attack the same guard.
 */
import { createCanvas } from '@napi-rs/canvas';
import zlib from 'node:zlib';
import { buildZip, makeHonestBomb, makeLyingBomb, makeManyEntriesZip, makeOverlappingZip } from '../fixtures-gen/make-office-fixtures.ts';
import { brotliZeros, gzipZeros, zlibZeros } from './compressed-zeros.ts';

const MB = 1024 * 1024;

/** A deterministic PRNG (mulberry32): the same seed gives the same bytes on every machine. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A classic PDF from object bodies (1-based), with an exact cross-reference table. */
export function writePdf(objects: (string | Buffer)[], rootId = 1): Buffer {
  const parts: Buffer[] = [Buffer.from('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n', 'latin1')];
  let at = parts[0]!.byteLength;
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(at);
    const b = Buffer.concat([Buffer.from(`${i + 1} 0 obj\n`, 'latin1'), typeof body === 'string' ? Buffer.from(body, 'latin1') : body, Buffer.from('\nendobj\n')]);
    parts.push(b);
    at += b.byteLength;
  });
  const xref = [`xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`];
  for (const o of offsets) xref.push(`${String(o).padStart(10, '0')} 00000 n \n`);
  xref.push(`trailer\n<< /Size ${objects.length + 1} /Root ${rootId} 0 R >>\nstartxref\n${at}\n%%EOF\n`);
  parts.push(Buffer.from(xref.join(''), 'latin1'));
  return Buffer.concat(parts);
}

const stream = (dict: string, data: Buffer) =>
  Buffer.concat([Buffer.from(`<< ${dict} /Length ${data.byteLength} >>\nstream\n`, 'latin1'), data, Buffer.from('\nendstream', 'latin1')]);

/** The project's embedded-font PDF with its FontFile2 stream relabelled /JBIG2Decode (same length, so the xref stays exact). */
export async function pdfJbig2Font(): Promise<Buffer> {
  const { makeEmbeddedFontPdf } = await import('../fixtures-gen/make-pdf-fixtures.ts');
  const pdf = await makeEmbeddedFontPdf();
  const text = pdf.toString('latin1');
  const ref = /\/FontFile[23]? (\d+) 0 R/.exec(text);
  if (!ref) throw new Error('the embedded-font fixture has no FontFile stream');
  const start = text.indexOf(`\n${ref[1]} 0 obj`);
  const filter = text.indexOf('/FlateDecode', start);
  if (start < 0 || filter < 0 || filter > text.indexOf('stream', start)) throw new Error('FontFile stream is not Flate-encoded');
  const out = Buffer.from(pdf);
  out.write('/JBIG2Decode', filter, 'latin1');
  return out;
}

/** One page drawing one 50,000 x 50,000 RGB image whose Flate stream inflates to ~2.3 GB of zeros. */
export function pdfHugeImage(): Buffer {
  const content = Buffer.from('q 612 0 0 792 0 0 cm /Im1 Do Q');
  return writePdf([
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /XObject << /Im1 5 0 R >> >> /Contents 4 0 R >>',
    stream('', content),
    stream('/Type /XObject /Subtype /Image /Width 50000 /Height 50000 /ColorSpace /DeviceRGB /BitsPerComponent 8 /Filter /FlateDecode', zlibZeros(2300)),
  ]);
}

/** `pages` pages sharing one content stream (~160 bytes a page: 100,000 pages is ~16 MB). */
export function pdfManyPages(pages = 100_000): Buffer {
  const objects: string[] = [];
  const kids: string[] = [];
  // 1 catalog, 2 pages, 3 font, 4 shared content, then the pages.
  for (let i = 0; i < pages; i++) kids.push(`${5 + i} 0 R`);
  objects.push('<< /Type /Catalog /Pages 2 0 R >>', `<< /Type /Pages /Kids [${kids.join(' ')}] /Count ${pages} >>`);
  objects.push('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>');
  const content = 'BT /F1 12 Tf 72 720 Td (A page of the very long report about harbour cranes.) Tj ET';
  objects.push(`<< /Length ${content.length} >>\nstream\n${content}\nendstream`);
  const page = '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents 4 0 R >>';
  for (let i = 0; i < pages; i++) objects.push(page);
  return writePdf(objects);
}

export function htmlManyLinks(links = 300_000): Buffer {
  const parts = ['<!DOCTYPE html><html><head><title>Link farm</title></head><body>\n'];
  for (let i = 0; i < links; i++) parts.push(`<a href="https://site.example/p/${i}">Page ${i}</a>\n`);
  parts.push('</body></html>\n');
  return Buffer.from(parts.join(''));
}

export function htmlUnclosedAnchors(depth = 8000): Buffer {
  const parts = ['<html><body><p>'];
  for (let i = 0; i < depth; i++) parts.push(`<a href="https://n.example/${i}">link ${i} `);
  parts.push('</p></body></html>');
  return Buffer.from(parts.join(''));
}

export function htmlDeep(depth = 100_000): Buffer {
  return Buffer.from(`<html><body>${'<div>'.repeat(depth)}deep text at the bottom${'</div>'.repeat(depth)}</body></html>`);
}

/** One line of `abc,def,` repeated past 100 KB, under a header. */
export function csvLongLine(bytes = 120 * 1024): Buffer {
  return Buffer.from(`name,value\n${'abc,def,'.repeat(Math.ceil(bytes / 8))}\n`);
}

/** A header and one row of 1e6 columns (~15 MB). */
export function csvManyColumns(columns = 1_000_000): Buffer {
  const head: string[] = [];
  const row: string[] = [];
  for (let i = 0; i < columns; i++) {
    head.push(`c${i}`);
    row.push(`v${i}`);
  }
  return Buffer.from(`${head.join(',')}\n${row.join(',')}\n`);
}

/** A quote that never closes, followed by 40 MB of lines. */
export function csvUnterminatedQuote(bytes = 40 * MB): Buffer {
  const line = 'abc def ghi,jkl mno\n';
  return Buffer.from(`id,text\n1,"${line.repeat(Math.ceil(bytes / line.length))}`);
}

const DOCX_TYPES =
  '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">' +
  '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>' +
  '<Default Extension="xml" ContentType="application/xml"/>' +
  '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>';
const DOCX_RELS =
  '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">' +
  '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>';

/**
 * A DOCX whose document.xml inflates to `mb` MB of paragraphs at a compression ratio of ~80, under
 * the zip guard's 100:1 and 300 MB limits: a legitimate, merely huge, document.
 */
export function docxLarge(mb = 280): Buffer {
  const rnd = prng(280);
  const head = Buffer.from('<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>');
  const tail = Buffer.from('</w:body></w:document>');
  const parts: Buffer[] = [head];
  let n = head.byteLength + tail.byteLength;
  const block: string[] = [];
  for (let i = 0; n < mb * MB; i++) {
    // A random reference every eighth paragraph holds the ratio near 80:1.
    const ref = i % 8 === 0 ? ` ref ${Math.floor(rnd() * 2 ** 32).toString(36)}` : '';
    const p = `<w:p><w:r><w:t>The inflated report continues${ref} with the quick brown fox jumping over the lazy dog.</w:t></w:r></w:p>`;
    block.push(p);
    n += p.length;
    if (block.length === 10_000) parts.push(Buffer.from(block.splice(0).join('')));
  }
  parts.push(Buffer.from(block.join('')), tail);
  return buildZip([
    { name: '[Content_Types].xml', data: Buffer.from(DOCX_TYPES) },
    { name: '_rels/.rels', data: Buffer.from(DOCX_RELS) },
    { name: 'word/document.xml', data: Buffer.concat(parts) },
  ]);
}

/** Plain text of `mb` MB: varied sentences, one marker line in the middle for the query. */
export function textLarge(mb = 95): Buffer {
  const words = 'harbour crane pier bollard tide vessel cargo manifest berth quay anchor hull ballast rigging winch ledger invoice'.split(' ');
  const rnd = prng(95);
  const lines: string[] = [];
  for (let i = 0; i < 2000; i++) {
    const w = Array.from({ length: 12 }, () => words[Math.floor(rnd() * words.length)]).join(' ');
    lines.push(`Line ${i}: the ${w}.\n`);
  }
  const block = Buffer.from(lines.join(''));
  const out = Buffer.alloc(mb * MB);
  for (let at = 0; at < out.length; at += block.byteLength) block.copy(out, at);
  out.write('\nThe unique marker sentence mentions a zeppelin over the lighthouse.\n', Math.floor(out.length / 2));
  return out;
}

/** `{"text": [[[...]]]}` nested `depth` deep. */
export function jsonDeep(depth = 100_000): string {
  return `{"text":${'['.repeat(depth)}${']'.repeat(depth)}}`;
}

export function mcpJsonDeep(depth = 100_000): string {
  return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"detect_language","arguments":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}}`;
}

export const MULTIPART_BOUNDARY = 'reliability-boundary-7f3a';

export function multipartTruncated(): Buffer {
  return Buffer.from(
    `--${MULTIPART_BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\n` +
      'The upload stops in the middle of the file and the closing boundary never comes',
  );
}

export function garbage(bytes = 64 * 1024, seed = 7): Buffer {
  const rnd = prng(seed);
  const out = Buffer.alloc(bytes);
  for (let i = 0; i < bytes; i++) out[i] = Math.floor(rnd() * 256);
  return out;
}

function pngChunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.byteLength, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(zlib.crc32(Buffer.concat([head.subarray(4), data])) >>> 0);
  return Buffer.concat([head, data, crc]);
}

/** A PNG declaring 50,000 x 50,000 RGB with 64 MB of (valid, zero) pixel rows: decoders that allocate the canvas first die. */
export function pngHuge(side = 50_000): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(side, 0);
  ihdr.writeUInt32BE(side, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), pngChunk('IHDR', ihdr), pngChunk('IDAT', zlibZeros(64)), pngChunk('IEND', Buffer.alloc(0))]);
}

/** A real small JPEG whose frame header (SOF) is rewritten to 50,000 x 50,000. */
export function jpegHuge(side = 50_000): Buffer {
  const canvas = createCanvas(64, 64);
  const ctx = canvas.getContext('2d');
  ctx.fillStyle = '#ffffff';
  ctx.fillRect(0, 0, 64, 64);
  const jpeg = Buffer.from(canvas.encodeSync('jpeg', 90));
  for (let i = 2; i + 9 < jpeg.length; ) {
    if (jpeg[i] !== 0xff) throw new Error('unexpected JPEG layout');
    const marker = jpeg[i + 1]!;
    if (marker >= 0xc0 && marker <= 0xc3) {
      jpeg.writeUInt16BE(side, i + 5);
      jpeg.writeUInt16BE(side, i + 7);
      return jpeg;
    }
    i += 2 + jpeg.readUInt16BE(i + 2);
  }
  throw new Error('no SOF marker in the generated JPEG');
}

/** `entries` + 1 parts in an otherwise valid DOCX or XLSX shell: one over the 10,000-entry limit. */
export function officeManyEntries(kind: 'docx' | 'xlsx', entries = 10_000): Buffer {
  const specs = [{ name: '[Content_Types].xml', data: Buffer.from(DOCX_TYPES) }];
  for (let i = 0; i < entries; i++) specs.push({ name: `${kind === 'docx' ? 'word' : 'xl'}/media/p${i}.xml`, data: Buffer.from('<a/>') });
  return buildZip(specs);
}

export { brotliZeros, gzipZeros, makeHonestBomb, makeLyingBomb, makeManyEntriesZip, makeOverlappingZip };
