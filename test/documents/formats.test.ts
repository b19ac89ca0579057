/**
 * Detection, dispatch and the advertised formats agree, name by name: every extension and media
 * type the detector accepts leads to an extractor and is advertised under the kind it is read as,
 * and nothing is advertised that the detector does not accept.
 */
import t from 'tap';
import { detectType, formatFromContentType, formatFromFilename } from '../../src/documents/detect-type.ts';
import { DEFAULT_EXTRACTORS } from '../../src/documents/extractor-table.ts';
import { DOCUMENT_KINDS, FORMATS, type DetectedFormat } from '../../src/documents/formats.ts';
import { supportedFormats } from '../../src/tools/formats.ts';
import { tools } from '../../src/tools/index.ts';
import { buildZip } from '../fixtures-gen/make-office-fixtures.ts';

const contentTypes = (main: string) =>
  Buffer.from(
    `<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Override PartName="/x.xml" ContentType="application/vnd.openxmlformats-officedocument.${main}.main+xml"/></Types>`,
  );
const ooxml = (main: string) => buildZip([{ name: '[Content_Types].xml', data: contentTypes(main) }]);
const padded = (head: number[] | Buffer, size = 64) => Buffer.concat([Buffer.from(head), Buffer.alloc(Math.max(0, size - head.length))]);

/** The smallest bytes detection recognises as each format. */
const SAMPLES: Record<DetectedFormat, Buffer> = {
  pdf: Buffer.from('%PDF-1.4\n1 0 obj\n<<>>\nendobj\n%%EOF\n'),
  docx: ooxml('wordprocessingml.document'),
  pptx: ooxml('presentationml.presentation'),
  xlsx: ooxml('spreadsheetml.sheet'),
  xls: Buffer.concat([padded([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1], 512), Buffer.from('Workbook\0', 'utf16le')]),
  csv: Buffer.from('id,name,score\n1,Ada,90\n2,Linus,85\n3,Grace,99\n'),
  png: padded([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  jpeg: padded([0xff, 0xd8, 0xff, 0xe0]),
  gif: padded(Buffer.from('GIF89a')),
  tiff: padded([0x49, 0x49, 0x2a, 0x00]),
  webp: padded(Buffer.from('RIFF\x24\x00\x00\x00WEBPVP8 ', 'latin1')),
  bmp: (() => {
    const b = Buffer.alloc(64);
    b.write('BM', 0, 'latin1');
    b.writeUInt32LE(40, 14); // BITMAPINFOHEADER
    return b;
  })(),
  html: Buffer.from('<!doctype html><html><body><p>Hello</p></body></html>'),
  text: Buffer.from('A sentence of plain text, nothing more.\n'),
  empty: Buffer.alloc(0),
};

const ALL = Object.entries(FORMATS) as [DetectedFormat, (typeof FORMATS)[DetectedFormat]][];

t.test('every format is read by an extractor, and every extractor reads a kind of the table', async (t) => {
  t.same(Object.keys(DEFAULT_EXTRACTORS).sort(), [...DOCUMENT_KINDS].sort());
  for (const [format, spec] of ALL) t.type(DEFAULT_EXTRACTORS[spec.kind], 'function', `${format} -> ${spec.kind}`);
});

t.test('each extension and media type of the table is detected as its format', async (t) => {
  for (const [format, spec] of ALL) {
    t.equal(detectType({ bytes: SAMPLES[format] }).format, format, `${format}: the sample bytes alone`);
    for (const ext of spec.extensions) {
      t.equal(formatFromFilename(`file.${ext}`), format, `.${ext}`);
      t.equal(formatFromFilename(`FILE.${ext.toUpperCase()}`), format, `.${ext} in upper case`);
      t.equal(detectType({ bytes: SAMPLES[format], filename: `file.${ext}` }).kind, spec.kind, `${format} named .${ext}`);
    }
    for (const type of spec.mediaTypes) {
      t.equal(formatFromContentType(`${type}; charset=utf-8`), format, type);
      t.equal(detectType({ bytes: SAMPLES[format], contentType: type }).kind, spec.kind, `${format} served as ${type}`);
    }
  }
});

t.test('the advertised formats are exactly what detection accepts, under the kind it reads them as', async (t) => {
  const advertised = supportedFormats(tools);
  // Every kind an extractor reads is advertised (process_document reads them all).
  t.same(advertised.map((f) => f.format), DOCUMENT_KINDS);
  const detectedExtensions = ALL.flatMap(([, f]) => f.extensions.map((e) => `.${e}`)).sort();
  const detectedTypes = ALL.flatMap(([, f]) => f.mediaTypes).sort();
  t.same(advertised.flatMap((f) => f.extensions).sort(), detectedExtensions, 'no extension detected but unadvertised, or the reverse');
  t.same(advertised.flatMap((f) => f.media_types).sort(), detectedTypes, 'no media type detected but unadvertised, or the reverse');
  for (const f of advertised) {
    for (const ext of f.extensions) t.equal(FORMATS[formatFromFilename(`x${ext}`)!].kind, f.format, `${ext} is read as ${f.format}`);
    for (const type of f.media_types) t.equal(FORMATS[formatFromContentType(type)!].kind, f.format, `${type} is read as ${f.format}`);
  }
  // Names review found detected but not advertised.
  const extensionsOf = (kind: string) => advertised.find((f) => f.format === kind)!.extensions;
  t.ok(extensionsOf('docx').includes('.docm'));
  t.ok(extensionsOf('pptx').includes('.pptm'));
  t.ok(extensionsOf('xlsx').includes('.xltx'));
  t.ok(extensionsOf('text').includes('.json'));
  t.ok(extensionsOf('text').includes('.log'));
});

t.test('names of unsupported formats are neither detected nor advertised', async (t) => {
  const advertised = supportedFormats(tools);
  for (const ext of ['doc', 'ppt', 'odt', 'ods', 'odp', 'rtf', 'epub', 'zip', 'exe', 'svg', 'heic']) {
    t.equal(formatFromFilename(`file.${ext}`), undefined, `.${ext} is not detected`);
    t.notOk(advertised.some((f) => f.extensions.includes(`.${ext}`)), `.${ext} is not advertised`);
  }
  for (const type of ['application/msword', 'application/vnd.oasis.opendocument.text', 'application/zip', 'image/svg+xml']) {
    t.equal(formatFromContentType(type), undefined, `${type} is not detected`);
    t.notOk(advertised.some((f) => f.media_types.includes(type)), `${type} is not advertised`);
  }
});
