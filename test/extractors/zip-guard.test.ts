/**
 * The zip guard: central-directory limits, the actual-output cap, and bombs of every layout, on
 * generated archives. The corpus packages are in test/corpus/extractors/zip-guard.test.ts.
 */
import zlib from 'node:zlib';
import t from 'tap';
import { assertSafeZip, inspectZip, ooxmlKind, readZipEntries, readZipEntry } from '../../src/extractors/shared/zip.ts';
import { extractDocx } from '../../src/extractors/docx/docx.ts';
import { extractPptx } from '../../src/extractors/pptx/pptx.ts';
import {
  buildZip,
  makeHonestBomb,
  makeLyingBomb,
  makeManyEntriesZip,
  makeOverlappingZip,
  makeSampleDocx,
  makeSamplePptx,
  makeShapesPptx,
  makeStructuresDocx,
  makeTextboxDocx,
  toStrictOoxml,
} from '../fixtures-gen/make-office-fixtures.ts';
import { buildEncryptedWorkbook, buildInflatedXlsx, buildReportXlsx } from '../fixtures-gen/make-sheet-fixtures.ts';

const signal = new AbortController().signal;

async function errorOf(fn: () => unknown): Promise<unknown> {
  try {
    await fn();
    return undefined;
  } catch (err) {
    return err;
  }
}

async function codeOf(fn: () => unknown): Promise<string | undefined> {
  return ((await errorOf(fn)) as { code?: string } | undefined)?.code;
}

t.test('a 10 GiB bomb whose headers lie fails fast with bounded memory', async (t) => {
  const bomb = makeLyingBomb(10);
  t.ok(bomb.length < 16 * 1024 * 1024, 'the bomb itself is small');
  const rss = process.memoryUsage().rss;
  // Fails fast: inflation stops one byte past the declared 1 MiB (zlib's ERR_BUFFER_TOO_LARGE is
  // the cause), rather than inflating the 10 GiB and comparing sizes afterwards.
  for (const [what, fn] of [
    ['assertSafeZip', () => assertSafeZip(bomb)],
    ['extractDocx', () => extractDocx({ bytes: bomb, signal })],
    ['readZipEntry', () => readZipEntry(bomb, 'word/document.xml', 500 * 1024 * 1024)],
  ] as const) {
    const err = await errorOf(fn);
    t.match(err, { code: 'PROCESSING_ERROR', message: /inflates beyond its declared size/, cause: { code: 'ERR_BUFFER_TOO_LARGE' } }, `${what} stops at the cap`);
  }
  const growth = (process.memoryUsage().rss - rss) / 1024 / 1024;
  t.ok(growth < 64, `RSS growth stays small (${growth.toFixed(1)} MiB)`);
});

t.test('a 10 GiB bomb with honest headers is refused from the central directory', async (t) => {
  const bomb = makeHonestBomb(10);
  const rss = process.memoryUsage().rss;
  t.equal(await codeOf(() => inspectZip(bomb)), 'PAYLOAD_TOO_LARGE');
  t.equal(await codeOf(() => extractDocx({ bytes: bomb, signal })), 'PAYLOAD_TOO_LARGE');
  t.equal(await codeOf(() => ooxmlKind(bomb)), 'PAYLOAD_TOO_LARGE', 'type detection reports it too');
  t.ok((process.memoryUsage().rss - rss) / 1024 / 1024 < 64, 'RSS growth stays small');
});

t.test('more than 10,000 entries is refused; the limit is configurable', async (t) => {
  const zip = makeManyEntriesZip(10_001);
  t.equal(await codeOf(() => inspectZip(zip)), 'PAYLOAD_TOO_LARGE');
  t.equal(await codeOf(() => extractPptx({ bytes: zip, signal })), 'PAYLOAD_TOO_LARGE');
  t.equal(inspectZip(makeManyEntriesZip(50), { maxEntries: 50 }).length, 50);
});

t.test('entries sharing one compressed stream (non-recursive bomb) are refused', async (t) => {
  const zip = makeOverlappingZip(1000);
  t.equal(await codeOf(() => inspectZip(zip)), 'PROCESSING_ERROR');
  t.equal(ooxmlKind(zip), null);
});

t.test('per-entry and overall compression ratio above 100:1 is refused', async (t) => {
  const zeros = Buffer.alloc(8 * 1024 * 1024);
  const zip = buildZip([{ name: 'a.bin', data: zeros }]);
  t.equal(await codeOf(() => inspectZip(zip)), 'PAYLOAD_TOO_LARGE');
  t.equal(inspectZip(zip, { maxRatio: 10_000 }).length, 1, 'allowed with a higher limit');
  // Small repetitive parts (styles, empty sheets) may exceed the ratio without being dangerous.
  const small = buildZip([{ name: 'styles.xml', data: Buffer.alloc(100_000, 'a') }]);
  t.equal(assertSafeZip(small).length, 1);
});

t.test('declared total over the limit is refused before anything is inflated', async (t) => {
  const zip = buildZip([{ name: 'a.txt', data: Buffer.from('x'.repeat(2000)) }]);
  t.equal(await codeOf(() => inspectZip(zip, { maxTotalUncompressed: 1000 })), 'PAYLOAD_TOO_LARGE');
});

t.test('readZipEntry caps the actual output and reads good entries exactly', async (t) => {
  const text = Buffer.from('hello zip '.repeat(100));
  const zip = buildZip([
    { name: 'a.txt', data: text },
    { name: 'b.txt', data: Buffer.from('stored'), store: true },
  ]);
  t.same(readZipEntry(zip, 'a.txt', 10_000), text);
  t.same(readZipEntry(zip, 'b.txt', 100).toString(), 'stored');
  t.equal(await codeOf(() => readZipEntry(zip, 'a.txt', 10)), 'PAYLOAD_TOO_LARGE', 'declared size over the cap');
  t.equal(await codeOf(() => readZipEntry(zip, 'missing.txt', 10)), 'PROCESSING_ERROR');
  const m = readZipEntries(zip, (n) => n.startsWith('b'));
  t.same([...m.keys()], ['b.txt']);
  // An entry that produces more than it declared (actual > declared) is refused.
  const liar = buildZip([{ name: 'a.txt', deflated: zlib.deflateRawSync(text), declaredSize: 10, crc: 0 }]);
  t.equal(await codeOf(() => readZipEntry(liar, 'a.txt', 10_000)), 'PROCESSING_ERROR');
});

t.test('broken archives give PROCESSING_ERROR, never a crash', async (t) => {
  const good = await makeSampleDocx();
  t.equal(await codeOf(() => inspectZip(good.subarray(0, good.length - 30))), 'PROCESSING_ERROR', 'truncated EOCD');
  t.equal(await codeOf(() => inspectZip(Buffer.from('PK\u0003\u0004 not really a zip at all, no directory'))), 'PROCESSING_ERROR');
  t.equal(await codeOf(() => extractDocx({ bytes: good.subarray(0, 2000), signal })), 'PROCESSING_ERROR');
  const corrupted = Buffer.from(good);
  const e = inspectZip(good).find((x) => x.name === 'word/document.xml')!;
  corrupted.fill(0xff, e.dataOffset, e.dataOffset + Math.min(64, e.compressedSize));
  t.equal(await codeOf(() => extractDocx({ bytes: corrupted, signal })), 'PROCESSING_ERROR', 'garbage deflate data');
  t.equal(await codeOf(() => extractDocx({ bytes: Buffer.from('plain text'), signal })), 'PROCESSING_ERROR');
});

t.test('ooxmlKind reads [Content_Types].xml', async (t) => {
  t.equal(ooxmlKind(await makeSampleDocx()), 'docx');
  t.equal(ooxmlKind(await makeSamplePptx()), 'pptx');
  t.equal(ooxmlKind(Buffer.from('%PDF-1.7')), null);
  t.equal(ooxmlKind(buildZip([{ name: 'readme.txt', data: Buffer.from('hi') }])), null, 'a plain zip is not OOXML');
  const bare = buildZip([{ name: 'xl/workbook.xml', data: Buffer.from('<workbook/>') }]);
  t.equal(ooxmlKind(bare), 'xlsx', 'falls back to the main part name');
  // Packages as Word, PowerPoint, Excel and other writers lay them out.
  const packages: Array<[string, Buffer, string]> = [
    ['docx (docx library)', await makeStructuresDocx(), 'docx'],
    ['docx rewritten by our zip writer', await makeTextboxDocx(), 'docx'],
    ['Strict OOXML docx', await toStrictOoxml(await makeSampleDocx()), 'docx'],
    ['pptx without root relationships', await makeShapesPptx(), 'pptx'],
    ['xlsx (exceljs)', await buildReportXlsx(), 'xlsx'],
    ['xlsx with an inflated dimension', await buildInflatedXlsx(), 'xlsx'],
  ];
  for (const [label, bytes, kind] of packages) {
    t.equal(ooxmlKind(bytes), kind, label);
    t.ok(assertSafeZip(bytes).length > 0, `${label} passes the guard`);
  }
  // Password-protected OOXML is an OLE2 container, not a zip.
  const encrypted = buildEncryptedWorkbook();
  t.equal(ooxmlKind(encrypted), null);
  t.equal(await codeOf(() => assertSafeZip(encrypted)), 'PROCESSING_ERROR');
});
