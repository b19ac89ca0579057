import t from 'tap';
import { detectType, looksLikeText } from '../../src/documents/detect-type.ts';
import { looksLikeDelimited } from '../../src/extractors/csv/sniff-csv.ts';
import { looksLikeHtml } from '../../src/extractors/html/sniff-html.ts';
import { filenameFromDisposition, filenameFromUrl } from '../../src/documents/filename.ts';
import { buildZip, makeSampleDocx, makeSamplePptx } from '../fixtures-gen/make-office-fixtures.ts';
import {
  makeCp1252Html,
  makeEncryptedOffice,
  makeHtmlPage,
  makeImage,
  makeSemicolonCsv,
  makeSheetJsXlsx,
  makeShiftJisCsv,
  makeUtf16BeCsv,
  makeUtf16LeText,
  makeXls,
  TEXT_FACTS,
} from '../fixtures-gen/documents.ts';
import { makeMinimalPdf } from '../fixtures-gen/minimal-pdf.ts';

// Generated once per file, with the light builders (no PDF library or exceljs is loaded here).
const files: Record<string, Buffer> = {
  pdf: makeMinimalPdf(),
  xlsx: makeSheetJsXlsx(),
  xls: makeXls(),
  png: makeImage('png'),
  jpeg: makeImage('jpeg'),
  html: makeHtmlPage(),
  txt: Buffer.from(`${TEXT_FACTS.english}\n`),
  csv: makeSemicolonCsv(),
  encrypted: makeEncryptedOffice(),
  docx: Buffer.alloc(0),
  pptx: Buffer.alloc(0),
};
t.before(async () => {
  [files.docx, files.pptx] = await Promise.all([makeSampleDocx(), makeSamplePptx()]);
});
const codeOf = (fn: () => unknown) => {
  try {
    fn();
    return 'no error';
  } catch (err) {
    return (err as { code?: string }).code;
  }
};

/** A minimal stored (uncompressed) zip, for archives that are not OOXML. */
function storedZip(files: Record<string, string>): Buffer {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc32 = (b: Buffer) => {
    let c = 0xffffffff;
    for (const x of b) c = crcTable[(c ^ x) & 0xff]! ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const [name, text] of Object.entries(files)) {
    const data = Buffer.from(text);
    const nameBuf = Buffer.from(name);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt32LE(crc32(data), 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(nameBuf.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt32LE(crc32(data), 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(nameBuf.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, nameBuf, data);
    centrals.push(central, nameBuf);
    offset += 30 + nameBuf.length + data.length;
  }
  const cd = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(Object.keys(files).length, 8);
  end.writeUInt16LE(Object.keys(files).length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, end]);
}

t.test('magic bytes of generated files decide, whatever the name says', async (t) => {
  const cases: Array<[string, Buffer, string, string]> = [
    ['pdf', files.pdf, 'pdf', 'pdf'],
    ['docx', files.docx, 'docx', 'docx'],
    ['pptx', files.pptx, 'pptx', 'pptx'],
    ['xlsx', files.xlsx, 'xlsx', 'xlsx'],
    ['xls', files.xls, 'xls', 'xls'],
    ['png', files.png, 'image', 'png'],
    ['jpeg', files.jpeg, 'image', 'jpeg'],
  ];
  for (const [name, bytes, kind, format] of cases) {
    // A misleading name and type must not matter: bytes come first.
    const d = detectType({ bytes, filename: 'download.txt', contentType: 'text/plain' });
    t.equal(d.kind, kind, name);
    t.equal(d.format, format, name);
    t.equal(d.by, 'magic', name);
  }
  // A deflated OOXML package (as Office writes it) is recognised as well as a stored one.
  const types =
    '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>';
  const deflatedDocx = buildZip([
    { name: '[Content_Types].xml', data: Buffer.from(types) },
    { name: 'word/document.xml', data: Buffer.from('<w:document/>'.repeat(50)) },
  ]);
  t.equal(detectType({ bytes: deflatedDocx, filename: 'x.bin' }).format, 'docx');
});

t.test('text formats without any hint (extensionless URLs)', async (t) => {
  const sniffed: Array<[string, Buffer, string]> = [
    ['html page', files.html, 'html'],
    ['cp1252 html without a charset', makeCp1252Html(), 'html'],
    ['utf-8 text', files.txt, 'text'],
    ['utf-16 le text without a BOM', makeUtf16LeText(), 'text'],
    ['text after blank lines', Buffer.from('\n\nAn article starts after two blank lines.\nIt goes on here.\n'), 'text'],
    ['semicolon csv', files.csv, 'csv'],
    ['header shorter than the rows', Buffer.from('a,b,c\n1,2,3,4\n5,6,7,8\n9,10,11,12\n'), 'csv'],
    ['utf-16 be csv with a BOM', makeUtf16BeCsv(), 'csv'],
    ['shift-jis csv', makeShiftJisCsv(), 'csv'],
  ];
  for (const [name, bytes, format] of sniffed) t.equal(detectType({ bytes }).format, format, name);
  t.equal(detectType({ bytes: Buffer.alloc(0) }).format, 'empty');
  t.equal(detectType({ bytes: Buffer.alloc(0) }).kind, 'text');
});

t.test('Content-Type then extension decide for text', async (t) => {
  const prose = Buffer.from('Just a line of words.\nAnother line.\n');
  t.equal(detectType({ bytes: prose, contentType: 'text/csv; charset=utf-8' }).format, 'csv');
  t.equal(detectType({ bytes: prose, contentType: 'text/csv' }).by, 'content-type');
  t.equal(detectType({ bytes: prose, filename: 'x.tsv' }).format, 'csv');
  t.equal(detectType({ bytes: prose, filename: 'x.csv' }).by, 'extension');
  t.equal(detectType({ bytes: prose, contentType: 'text/html' }).format, 'html');
  t.equal(detectType({ bytes: prose, filename: 'page.htm' }).format, 'html');
  t.equal(detectType({ bytes: prose, contentType: 'application/vnd.ms-excel' }).format, 'csv', 'CSV mislabelled as Excel');
  t.equal(detectType({ bytes: prose, contentType: 'application/octet-stream' }).format, 'text');
  const html = Buffer.from('<!DOCTYPE html><html><body><p>x</p></body></html>');
  t.equal(detectType({ bytes: html, contentType: 'text/plain' }).format, 'html', 'HTML served as text/plain is still sniffed');
  t.equal(detectType({ bytes: html, filename: 'notes.txt' }).format, 'text', 'an explicit .txt keeps markup as text');
  t.equal(detectType({ bytes: html, filename: 'report.pdf' }).format, 'html', 'an HTML error page behind a .pdf link');
});

t.test('image magic for every raster kind', async (t) => {
  const gif = Buffer.concat([Buffer.from('GIF89a'), Buffer.alloc(20)]);
  const tiffLE = Buffer.from([0x49, 0x49, 0x2a, 0x00, 8, 0, 0, 0, ...new Array(20).fill(0)]);
  const tiffBE = Buffer.from([0x4d, 0x4d, 0x00, 0x2a, 0, 0, 0, 8, ...new Array(20).fill(0)]);
  const webp = Buffer.concat([Buffer.from('RIFF'), Buffer.from([0x20, 0, 0, 0]), Buffer.from('WEBPVP8 '), Buffer.alloc(20)]);
  const bmp = Buffer.alloc(60);
  bmp.write('BM', 0, 'latin1');
  bmp.writeUInt32LE(60, 2);
  bmp.writeUInt32LE(54, 10);
  bmp.writeUInt32LE(40, 14);
  for (const [bytes, format] of [
    [gif, 'gif'],
    [tiffLE, 'tiff'],
    [tiffBE, 'tiff'],
    [webp, 'webp'],
    [bmp, 'bmp'],
  ] as const) {
    const d = detectType({ bytes });
    t.equal(d.kind, 'image', format);
    t.equal(d.format, format);
  }
  t.equal(detectType({ bytes: Buffer.from('BMW annual report, 2024. Revenue grew.') }).format, 'text', '"BM" text is not a bitmap');
});

t.test('BOMs', async (t) => {
  const utf8 = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('héllo')]);
  const utf16le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('<html><body>x</body></html>', 'utf16le')]);
  const utf16be = Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from('plain words here', 'utf16le').swap16()]);
  t.equal(detectType({ bytes: utf8 }).format, 'text');
  t.equal(detectType({ bytes: utf16le }).format, 'html', 'UTF-16 HTML is sniffed after decoding');
  t.equal(detectType({ bytes: utf16be }).format, 'text');
});

t.test('unsupported binary is refused, never decoded as text', async (t) => {
  const random = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919 + 13) % 256));
  t.equal(codeOf(() => detectType({ bytes: random })), 'UNSUPPORTED_FORMAT');
  t.match(
    (() => {
      try {
        detectType({ bytes: random, contentType: 'application/pdf' });
      } catch (err) {
        return (err as Error).message;
      }
    })(),
    /declared as a PDF document/,
  );
  const elf = Buffer.concat([Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0]), Buffer.alloc(200)]);
  t.equal(codeOf(() => detectType({ bytes: elf, filename: 'a.txt' })), 'UNSUPPORTED_FORMAT');
  t.equal(codeOf(() => detectType({ bytes: storedZip({ 'readme.txt': 'hello' }) })), 'UNSUPPORTED_FORMAT', 'a plain zip');
  const odt = storedZip({ mimetype: 'application/vnd.oasis.opendocument.text', 'content.xml': '<x/>' });
  t.match(
    (() => {
      try {
        detectType({ bytes: odt });
      } catch (err) {
        return (err as Error).message;
      }
    })(),
    /OpenDocument/,
  );
  t.equal(codeOf(() => detectType({ bytes: files.encrypted })), 'PROCESSING_ERROR', 'encrypted OOXML says so');
  t.equal(codeOf(() => detectType({ bytes: files.encrypted, filename: 'locked.xlsx' })), 'PROCESSING_ERROR', 'whatever the name');
});

t.test('OOXML kind comes from the package, not the name', async (t) => {
  const ct = (main: string) =>
    `<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Override PartName="/x.xml" ContentType="application/vnd.openxmlformats-officedocument.${main}.main+xml"/></Types>`;
  t.equal(detectType({ bytes: storedZip({ '[Content_Types].xml': ct('wordprocessingml.document') }), filename: 'a.xlsx' }).format, 'docx');
  t.equal(detectType({ bytes: storedZip({ '[Content_Types].xml': ct('spreadsheetml.sheet') }) }).format, 'xlsx');
  t.equal(detectType({ bytes: storedZip({ '[Content_Types].xml': ct('presentationml.presentation') }) }).format, 'pptx');
});

t.test('sniff helpers', async (t) => {
  t.ok(looksLikeHtml('  <!-- x --> <!doctype html><p>'));
  t.ok(looksLikeHtml('<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml">'));
  t.notOk(looksLikeHtml('<?xml version="1.0"?><rss>'));
  t.notOk(looksLikeHtml('<abc>'));
  t.ok(looksLikeText(Buffer.from('Grüße, naïve café', 'latin1')));
  t.ok(looksLikeText(Buffer.from('UTF-16 without a byte order mark', 'utf16le')));
  t.notOk(looksLikeText(Buffer.from([1, 2, 3, 4, 5, 0, 0, 9, 200, 201, 0, 7])));
  t.notOk(looksLikeDelimited('Hello, world, and more.\nThis is prose, with commas, many, of them.\nAnother line.\nAnd, yes, another.\n'));
  t.ok(looksLikeDelimited('a\tb\n1\t2\n3\t4\n'));
});

t.test('file names from headers and URLs', async (t) => {
  t.equal(filenameFromDisposition('attachment; filename="report.pdf"'), 'report.pdf');
  t.equal(filenameFromDisposition("attachment; filename*=UTF-8''na%C3%AFve%20r%C3%A9sum%C3%A9.docx; filename=x.docx"), 'naïve résumé.docx');
  t.equal(filenameFromDisposition('inline; filename=../../etc/passwd'), 'passwd', 'paths are stripped');
  t.equal(filenameFromDisposition('inline'), undefined);
  t.equal(filenameFromUrl('https://example.com/files/Q3%20report.xlsx?dl=1'), 'Q3 report.xlsx');
  t.equal(filenameFromUrl('https://example.com/download'), 'download');
  t.equal(filenameFromUrl('https://example.com/'), undefined);
  // An extensionless name with no Content-Type falls back to the bytes.
  t.equal(detectType({ bytes: files.pdf, filename: 'download' }).format, 'pdf');
});
