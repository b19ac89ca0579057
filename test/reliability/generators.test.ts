/**
 * The suite's inputs are what their rows say they are: bombs declare the sizes in their names,
 * compression bombs inflate to what they claim, mutants are reproducible from (seed, index).
 */
import zlib from 'node:zlib';
import t from 'tap';
import * as B from './bombs.ts';
import { zlibZeros } from './compressed-zeros.ts';
import { mutants, mutatorsFor, pdfXref, zipEntry } from './mutate.ts';

t.test('compression bombs inflate to their declared size with valid checksums', async (t) => {
  t.equal(zlib.inflateSync(zlibZeros(32)).byteLength, 32 * 1024 * 1024);
  t.equal(zlib.gunzipSync(B.gzipZeros(32)).byteLength, 32 * 1024 * 1024);
  const br = await B.brotliZeros(32);
  t.ok(br.byteLength < 64 * 1024, 'brotli of zeros is tiny');
  t.equal(zlib.brotliDecompressSync(br).byteLength, 32 * 1024 * 1024);
});

t.test('image bombs declare 50,000 x 50,000', async (t) => {
  const png = B.pngHuge();
  t.equal(png.readUInt32BE(16), 50_000);
  t.equal(png.readUInt32BE(20), 50_000);
  const jpeg = B.jpegHuge();
  t.ok(jpeg.includes(Buffer.from([0xc3, 0x50, 0xc3, 0x50])), 'SOF carries 50000 (0xC350) as height and width');
  const pdf = B.pdfHugeImage().toString('latin1');
  t.match(pdf, /\/Width 50000 \/Height 50000/);
  t.ok(pdf.length < 3 * 1024 * 1024, 'the whole PDF stays small');
});

t.test('the many-page PDF has an exact cross-reference table', async (t) => {
  const pdf = B.pdfManyPages(500).toString('latin1');
  t.equal(pdf.match(/\/Type \/Page /g)?.length, 500);
  const startxref = Number(/startxref\n(\d+)/.exec(pdf)![1]);
  t.equal(pdf.slice(startxref, startxref + 4), 'xref');
  const firstOffset = Number(/xref\n0 \d+\n0000000000 65535 f \n(\d{10})/.exec(pdf)![1]);
  t.equal(pdf.slice(firstOffset, firstOffset + 7), '1 0 obj');
});

t.test('the JBIG2 relabelling keeps the file length and hits the font stream', async (t) => {
  const { makeEmbeddedFontPdf } = await import('../fixtures-gen/make-pdf-fixtures.ts');
  const [orig, mutant] = await Promise.all([makeEmbeddedFontPdf(), B.pdfJbig2Font()]);
  t.equal(mutant.byteLength, orig.byteLength);
  t.equal(mutant.toString('latin1').match(/\/JBIG2Decode/g)?.length, 1);
});

t.test('text and CSV bombs have the sizes of the table', async (t) => {
  t.ok(B.csvLongLine().toString().split('\n')[1]!.length >= 100 * 1024);
  const cols = B.csvManyColumns(1000).toString().split('\n')[0]!.split(',');
  t.equal(cols.length, 1000);
  t.equal(B.htmlManyLinks(1000).toString().match(/<a href/g)?.length, 1000);
  t.equal(B.htmlUnclosedAnchors(100).toString().match(/<\/a>/g), null, 'no anchor is closed');
});

t.test('mutants are reproducible and each one stands alone', async (t) => {
  const sources = [
    { name: 'a.pdf', bytes: B.pdfManyPages(3) },
    { name: 'b.txt', bytes: Buffer.from('plain text for the fuzzer '.repeat(50)) },
  ];
  const one = [...mutants(sources, 42, 20)];
  const two = [...mutants(sources, 42, 20)];
  t.same(
    one.map((m) => [m.mutator, m.note, m.bytes.toString('base64')]),
    two.map((m) => [m.mutator, m.note, m.bytes.toString('base64')]),
  );
  const other = [...mutants(sources, 43, 20)];
  t.not(one.map((m) => m.note).join(), other.map((m) => m.note).join(), 'another seed, other mutants');
  const longer = [...mutants(sources, 42, 30)];
  t.same(longer[7]!.bytes, one[7]!.bytes, 'mutant 7 does not depend on the count');
  t.same(mutatorsFor(sources[0]!.bytes), ['bitflip', 'truncate', 'byterun', 'pdf-xref']);
});

t.test('structural mutators damage structure', async (t) => {
  const { buildZip } = await import('../fixtures-gen/make-office-fixtures.ts');
  const zip = buildZip([{ name: 'a.xml', data: Buffer.from('<a>hello</a>'.repeat(100)) }]);
  let changed = 0;
  for (let s = 0; s < 20; s++) if (!zipEntry(zip, B.prng(s)).bytes.equals(zip)) changed++;
  t.ok(changed >= 18, `zip damage changes the archive (${changed}/20)`);
  const pdf = B.pdfManyPages(3);
  let damaged = 0;
  for (let s = 0; s < 20; s++) if (!pdfXref(pdf, B.prng(s)).bytes.equals(pdf)) damaged++;
  t.ok(damaged >= 15, `xref damage changes the PDF (${damaged}/20)`);
});
