/** document.xml annotation (number markers, equations as text) and the in-memory zip rebuild. */
import zlib from 'node:zlib';
import t from 'tap';
import { MARK_CLOSE, MARK_OPEN, annotateDocumentXml, bulletLabelledLevels } from '../../src/extractors/docx/docx-annotate.ts';
import { readNumberingDefinitions } from '../../src/extractors/docx/docx-numbering.ts';
import { rewriteZip } from '../../src/extractors/docx/zip-rewrite.ts';
import { inspectZip, readZipEntries } from '../../src/extractors/shared/zip.ts';
import { buildZip } from '../fixtures-gen/make-office-fixtures.ts';

const NS =
  'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" ' +
  'xmlns:m="http://schemas.openxmlformats.org/officeDocument/2006/math" ' +
  'xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006"';
const doc = (body: string, ns = NS) => `<?xml version="1.0"?><w:document ${ns}><w:body>${body}</w:body></w:document>`;
const numbered = (numId: string, ilvl: number, text: string) =>
  `<w:p><w:pPr><w:numPr><w:ilvl w:val="${ilvl}"/><w:numId w:val="${numId}"/></w:numPr></w:pPr><w:r><w:t>${text}</w:t></w:r></w:p>`;
const marker = (i: number) => `<w:r><w:t>${MARK_OPEN}${i}${MARK_CLOSE}</w:t></w:r>`;

const DEFS = readNumberingDefinitions(
  Buffer.from(
    '<w:numbering xmlns:w="x">' +
      '<w:abstractNum w:abstractNumId="0"><w:lvl w:ilvl="0"><w:numFmt w:val="decimal"/><w:lvlText w:val="%1."/></w:lvl>' +
      '<w:lvl w:ilvl="1"><w:numFmt w:val="lowerLetter"/><w:lvlText w:val="%2)"/></w:lvl></w:abstractNum>' +
      '<w:abstractNum w:abstractNumId="1"><w:lvl w:ilvl="0"><w:numFmt w:val="bullet"/><w:lvlText w:val="•"/></w:lvl></w:abstractNum>' +
      '<w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num><w:num w:numId="2"><w:abstractNumId w:val="1"/></w:num>' +
      '</w:numbering>',
  ),
);

t.test('markers go right after the paragraph properties of numbered paragraphs only', async (t) => {
  const empty = '<w:p><w:pPr><w:numPr><w:ilvl w:val="0"/><w:numId w:val="1"/></w:numPr></w:pPr></w:p>';
  const xml = doc(numbered('1', 0, 'One') + '<w:p><w:r><w:t>plain</w:t></w:r></w:p>' + numbered('2', 0, 'Dot') + numbered('1', 1, 'Sub') + '<w:p/>' + empty + numbered('1', 0, 'Three'));
  const a = annotateDocumentXml(xml, DEFS);
  t.ok(a.changed);
  t.same(a.labels.map((l) => l.text), ['1.', 'a)', '3.'], 'bullets and empty paragraphs get no marker, but empty ones count');
  t.match(a.xml, `</w:pPr>${marker(0)}<w:r><w:t>One</w:t>`);
  t.match(a.xml, `</w:pPr>${marker(1)}<w:r><w:t>Sub</w:t>`);
  t.equal(a.xml.split(MARK_OPEN).length - 1, 3);
});

t.test('pretty-printed paragraphs are numbered too', async (t) => {
  const xml = doc('\n  <w:p>\n    <w:pPr>\n      <w:numPr><w:ilvl w:val="0"/><w:numId w:val="1"/></w:numPr>\n    </w:pPr>\n    <w:r><w:t>One</w:t></w:r>\n  </w:p>');
  const a = annotateDocumentXml(xml, DEFS);
  t.same(a.labels.map((l) => l.text), ['1.']);
  t.match(a.xml, `</w:pPr>${marker(0)}\n    <w:r><w:t>One</w:t>`);
});

t.test('tracked property changes do not count; text-box copies in mc:Choice are skipped', async (t) => {
  const changed =
    '<w:p><w:pPr><w:pPrChange w:id="1"><w:pPr><w:numPr><w:ilvl w:val="0"/><w:numId w:val="1"/></w:numPr></w:pPr></w:pPrChange></w:pPr><w:r><w:t>was numbered</w:t></w:r></w:p>';
  const box = (inner: string) =>
    `<w:p><w:r><mc:AlternateContent><mc:Choice Requires="wps"><w:txbxContent>${inner}</w:txbxContent></mc:Choice>` +
    `<mc:Fallback><w:pict><w:txbxContent>${inner}</w:txbxContent></w:pict></mc:Fallback></mc:AlternateContent></w:r></w:p>`;
  const a = annotateDocumentXml(doc(changed + box(numbered('1', 0, 'In box')) + numbered('1', 0, 'After')), DEFS);
  t.same(a.labels.map((l) => l.text), ['1.', '2.'], 'the box paragraph is counted once, then the next item');
  t.match(a.xml, `<mc:Fallback><w:pict><w:txbxContent><w:p><w:pPr><w:numPr><w:ilvl w:val="0"/><w:numId w:val="1"/></w:numPr></w:pPr>${marker(0)}`);
});

t.test('equations become text runs: $$display$$ and $inline$, XML-escaped', async (t) => {
  const para = '<w:p><m:oMathPara><m:oMath><m:r><m:t>a&lt;b</m:t></m:r></m:oMath></m:oMathPara></w:p>';
  const inline =
    '<w:p><w:r><w:t xml:space="preserve">Area </w:t></w:r><m:oMath><m:sSup><m:e><m:r><m:t>r</m:t></m:r></m:e><m:sup><m:r><m:t>2</m:t></m:r></m:sup></m:sSup></m:oMath><m:oMath/></w:p>';
  const a = annotateDocumentXml(doc(para + inline), null);
  t.equal(a.equations, 2);
  t.match(a.xml, '<w:p><w:r><w:t xml:space="preserve">$$a&lt;b$$</w:t></w:r></w:p>');
  t.match(a.xml, '<w:t xml:space="preserve">Area </w:t></w:r><w:r><w:t xml:space="preserve">$r^{2}$</w:t></w:r></w:p>');
  t.notMatch(a.xml, /oMath/);
});

t.test('an equation kept only in mc:Choice replaces the picture fallback', async (t) => {
  const alt =
    '<w:p><mc:AlternateContent><mc:Choice Requires="m"><m:oMathPara><m:oMath><m:r><m:t>x=1</m:t></m:r></m:oMath></m:oMathPara></mc:Choice>' +
    '<mc:Fallback><w:r><w:drawing/></w:r></mc:Fallback></mc:AlternateContent></w:p>';
  const a = annotateDocumentXml(doc(alt), null);
  t.equal(a.xml, doc('<w:p><w:r><w:t xml:space="preserve">$$x=1$$</w:t></w:r></w:p>'));
});

t.test('other prefixes work; documents without a prefixed namespace are left alone', async (t) => {
  const ns = 'xmlns:ww="http://purl.oclc.org/ooxml/wordprocessingml/main"';
  const xml = `<ww:document ${ns}><ww:body><ww:p><ww:pPr><ww:numPr><ww:ilvl ww:val="0"/><ww:numId ww:val="1"/></ww:numPr></ww:pPr><ww:r><ww:t>x</ww:t></ww:r></ww:p></ww:body></ww:document>`;
  const a = annotateDocumentXml(xml, DEFS);
  t.same(a.labels.map((l) => l.text), ['1.']);
  t.match(a.xml, `</ww:pPr><ww:r><ww:t>${MARK_OPEN}0${MARK_CLOSE}</ww:t></ww:r><ww:r><ww:t>x</ww:t>`);
  const plain = '<document xmlns="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><body/></document>';
  t.same(annotateDocumentXml(plain, DEFS), { xml: plain, labels: [], equations: 0, pageBreaks: null, changed: false });
});

t.test('labelled list levels become bullet levels for mammoth; plain counters and bullets stay', async (t) => {
  const lvl = (i: number, body: string) => `<w:lvl w:ilvl="${i}">${body}</w:lvl>`;
  const xml =
    '<w:numbering xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">' +
    '<w:abstractNum w:abstractNumId="0">' +
    lvl(0, '<w:start w:val="1"/><w:numFmt w:val="decimal"/><w:lvlText w:val="%1."/>') +
    lvl(1, '<w:numFmt w:val="decimal"/><w:lvlText w:val="%1.%2."/>') +
    lvl(2, '<mc:AlternateContent><mc:Choice Requires="w14"><w:numFmt w:val="custom" w:format="001"/></mc:Choice><mc:Fallback><w:numFmt w:val="lowerLetter"/></mc:Fallback></mc:AlternateContent><w:lvlText w:val="%3)"/>') +
    lvl(3, '<w:numFmt w:val="bullet"/><w:lvlText w:val="o"/>') +
    '</w:abstractNum><w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num></w:numbering>';
  const defs = readNumberingDefinitions(Buffer.from(xml));
  const out = bulletLabelledLevels(xml, defs);
  t.match(out, lvl(0, '<w:start w:val="1"/><w:numFmt w:val="decimal"/><w:lvlText w:val="%1."/>'));
  t.match(out, lvl(1, '<w:numFmt w:val="bullet"/><w:lvlText w:val="%1.%2."/>'));
  t.match(out, '<mc:Choice Requires="w14"><w:numFmt w:val="bullet"/></mc:Choice><mc:Fallback><w:numFmt w:val="bullet"/></mc:Fallback>');
  t.match(out, lvl(3, '<w:numFmt w:val="bullet"/><w:lvlText w:val="o"/>'));
  t.match(out, '<w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num>');
  const noFmt = xml.replace('<w:numFmt w:val="decimal"/><w:lvlText w:val="%1.%2."/>', '<w:lvlText w:val="%1.%2."/>');
  t.match(bulletLabelledLevels(noFmt, readNumberingDefinitions(Buffer.from(noFmt))), lvl(1, '<w:numFmt w:val="bullet"/><w:lvlText w:val="%1.%2."/>'), 'a level without numFmt gets one');
});

t.test('rewriteZip replaces one entry, copies the others byte for byte, keeps CRCs right', async (t) => {
  const original = buildZip([
    { name: 'a.xml', data: Buffer.from('<a>'.repeat(500)) },
    { name: 'word/document.xml', data: Buffer.from('<old/>') },
    { name: 'img.bin', data: Buffer.from([1, 2, 3, 4]), store: true },
  ]);
  const entries = inspectZip(original);
  const fresh = Buffer.from('<new>ü</new>');
  const out = rewriteZip(original, entries, new Map([['word/document.xml', fresh]]));
  const back = inspectZip(out);
  t.same(back.map((e) => e.name), ['a.xml', 'word/document.xml', 'img.bin']);
  const data = readZipEntries(out);
  t.same(data.get('word/document.xml'), fresh);
  t.same(data.get('a.xml'), Buffer.from('<a>'.repeat(500)));
  t.same(data.get('img.bin'), Buffer.from([1, 2, 3, 4]));
  for (const e of back) {
    const crc = out.readUInt32LE(e.localHeaderOffset + 14);
    t.equal(crc, zlib.crc32(data.get(e.name)!) >>> 0, `${e.name}: CRC`);
  }
  t.equal(back.find((e) => e.name === 'a.xml')!.method, 8, 'unchanged entries keep their compression');
});

/** One deflated entry written the streaming way: zero CRC in the local header, then a data descriptor. */
function zipWithDescriptor(name: string, data: Buffer): Buffer {
  const n = Buffer.from(name);
  const body = zlib.deflateRawSync(data);
  const crc = zlib.crc32(data) >>> 0;
  const lh = Buffer.alloc(30);
  lh.writeUInt32LE(0x04034b50, 0);
  lh.writeUInt16LE(20, 4);
  lh.writeUInt16LE(0x808, 6);
  lh.writeUInt16LE(8, 8);
  lh.writeUInt16LE(n.length, 26);
  const dd = Buffer.alloc(16);
  dd.writeUInt32LE(0x08074b50, 0);
  dd.writeUInt32LE(crc, 4);
  dd.writeUInt32LE(body.length, 8);
  dd.writeUInt32LE(data.length, 12);
  const cd = Buffer.alloc(46);
  cd.writeUInt32LE(0x02014b50, 0);
  cd.writeUInt16LE(20, 4);
  cd.writeUInt16LE(20, 6);
  cd.writeUInt16LE(0x808, 8);
  cd.writeUInt16LE(8, 10);
  cd.writeUInt32LE(crc, 16);
  cd.writeUInt32LE(body.length, 20);
  cd.writeUInt32LE(data.length, 24);
  cd.writeUInt16LE(n.length, 28);
  const cdOffset = lh.length + n.length + body.length + dd.length;
  const eocd = Buffer.alloc(22);
  eocd.writeUInt32LE(0x06054b50, 0);
  eocd.writeUInt16LE(1, 8);
  eocd.writeUInt16LE(1, 10);
  eocd.writeUInt32LE(cd.length + n.length, 12);
  eocd.writeUInt32LE(cdOffset, 16);
  return Buffer.concat([lh, n, body, dd, cd, n, eocd]);
}

t.test('rewriteZip takes the CRC of a streamed entry from its data descriptor', async (t) => {
  const data = Buffer.from('<styles>'.repeat(40));
  const original = zipWithDescriptor('word/styles.xml', data);
  const out = rewriteZip(original, inspectZip(original), new Map());
  const [e] = inspectZip(out);
  t.equal(out.readUInt32LE(e.localHeaderOffset + 14), zlib.crc32(data) >>> 0);
  t.same(readZipEntries(out).get('word/styles.xml'), data);
});
