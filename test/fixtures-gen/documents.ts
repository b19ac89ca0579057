/**
 * Generated stand-ins for the third-party corpus in the self-contained suite: small files of every
 * supported kind with content known exactly, built in memory from dependencies (SheetJS for XLSX,
 * legacy XLS and OLE2 containers, iconv-lite for legacy encodings, @napi-rs/canvas for images) and
 * the make-*-fixtures builders beside it. Nothing here reads the corpus. `fixtureFiles()` builds the set
 * once per process; the builders that load pdf-lib, pdfkit or exceljs are imported only when used.
 */
import { createCanvas } from '@napi-rs/canvas';
import iconv from 'iconv-lite';
import * as XLSX from 'xlsx';
import { makeSampleDocx, makeSamplePptx } from './make-office-fixtures.ts';

// ---------------------------------------------------------------- legacy Excel (BIFF8)

export const XLS_FACTS = {
  uuid: '6ff4173b-42a5-4784-9b19-f49caff4d93d',
  /** 1-based sheet row of the UUID row (row 1 is the header). */
  uuidRow: 5,
  sheets: [
    {
      name: 'Ledger',
      rows: [
        ['Alpha', 'Beta', 'Gamma', 'Delta'],
        [11, 'first entry', 3, 4],
        [12, 'second entry', 5, 6],
        [13, 'third entry', 7, 8],
        [58, '6ff4173b-42a5-4784-9b19-f49caff4d93d', 22, 9],
        [14, 'last entry', 9, 10],
      ],
    },
    {
      name: 'Lookup',
      rows: [
        ['Code', 'Meaning'],
        ['A', 'active'],
        ['R', 'retired'],
      ],
    },
  ],
} as const;

/** A two-sheet legacy .xls (BIFF8 in an OLE2 container), written by SheetJS. */
export function makeXls(): Buffer {
  const wb = XLSX.utils.book_new();
  for (const s of XLS_FACTS.sheets) XLSX.utils.book_append_sheet(wb, XLSX.utils.aoa_to_sheet(s.rows.map((r) => [...r])), s.name);
  return Buffer.from(XLSX.write(wb, { bookType: 'biff8', type: 'buffer' }) as Buffer);
}

/** A one-sheet .xlsx written by SheetJS (a different writer from the exceljs fixtures). */
export function makeSheetJsXlsx(): Buffer {
  const wb = XLSX.utils.book_new();
  XLSX.utils.book_append_sheet(wb, XLSX.utils.aoa_to_sheet([['Item', 'Count'], ['Herons', 42]]), 'Counts');
  return Buffer.from(XLSX.write(wb, { bookType: 'xlsx', type: 'buffer' }) as Buffer);
}

/**
 * How Office stores a password-protected OOXML file: an OLE2 compound file holding EncryptionInfo
 * and EncryptedPackage streams instead of a zip. The payload is opaque bytes (nothing decrypts it).
 */
export function makeEncryptedOffice(): Buffer {
  const cfb = XLSX.CFB.utils.cfb_new();
  XLSX.CFB.utils.cfb_add(cfb, '/EncryptionInfo', Buffer.alloc(256, 4));
  XLSX.CFB.utils.cfb_add(cfb, '/EncryptedPackage', Buffer.alloc(8192, 0x5a));
  return Buffer.from(XLSX.CFB.write(cfb, { type: 'buffer' }) as Buffer);
}

// ---------------------------------------------------------------- delimited text

export const CSV_FACTS = {
  headers: ['Index', 'First Name', 'Company', 'City', 'Country', 'Email'],
  rows: [
    ['1', 'Sheryl', 'Rasmussen Group', 'East Leonard', 'Chile', 'sheryl@rasmussen.example.com'],
    ['2', 'Preston', 'Dominguez;Mcmillan and Donovan', 'Bensonview', 'Djibouti', 'preston@dominguez.example.com'],
    ['3', 'Roy', 'Martin-Berg', 'West Priscilla', 'Antigua', 'roy@martin.example.com'],
    ['4', 'Linda', 'Steele Group', 'Port Gwendolyn', 'Norway', 'linda@steele.example.com'],
  ],
};

/** Semicolon-separated, CRLF, one quoted field holding the delimiter. */
export function makeSemicolonCsv(): Buffer {
  const cell = (c: string) => (c.includes(';') ? `"${c}"` : c);
  const lines = [CSV_FACTS.headers, ...CSV_FACTS.rows].map((r) => r.map(cell).join(';'));
  return Buffer.from(lines.join('\r\n') + '\r\n');
}

/** A title row above the header, UTF-16 big-endian with a BOM. */
export function makeUtf16BeCsv(): Buffer {
  const text = 'Stanley Cups,,\r\nTeam,Location,Stanley Cups\r\nBlues,STL,1\r\nFlyers,PHI,2\r\nMaple Leafs,TOR,13\r\n';
  return Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from(text, 'utf16le').swap16()]);
}

/** Shift-JIS (cp932) Japanese CSV with CRLF. */
export function makeShiftJisCsv(): Buffer {
  return iconv.encode('名前,年齢,都市\r\n山田,30,東京\r\n佐藤,25,大阪\r\n', 'cp932');
}

// ---------------------------------------------------------------- text and HTML

export const TEXT_FACTS = {
  english: 'All human beings are born free and equal in dignity and rights.',
  utf16: 'This plain text file is stored as UTF-16 little-endian without a byte order mark.',
};

/** UTF-16 LE without a BOM. */
export function makeUtf16LeText(): Buffer {
  return Buffer.from(`${TEXT_FACTS.utf16}\nA second line follows the first one.\n`, 'utf16le');
}

/** Windows-1252 HTML without any charset declaration. */
export function makeCp1252Html(): Buffer {
  return iconv.encode('<html><head><title>Menu</title></head><body><p>Une journée très chère: niño, 5 €.</p></body></html>', 'win1252');
}

export const HTML_FACTS = {
  title: 'Wetland Birds of the Northern Marsh',
  heading: 'Herons and egrets',
  paragraph: 'The grey heron waits motionless in the shallows before striking at fish.',
  links: [
    'https://birds.example.org/heron',
    'https://birds.example.org/egret',
    'https://maps.example.org/marsh?zoom=12',
    'https://www.example.com/about',
  ],
};

/** A page with navigation and a footer around an article, scripts, a table and links (one repeated). */
export function makeHtmlPage(): Buffer {
  const f = HTML_FACTS;
  const [heron, egret, map, about] = f.links;
  return Buffer.from(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>${f.title}</title><script>var tracking = "do not extract";</script></head>
<body>
<nav><a href="${about}">About us</a> | <a href="${heron}">Herons</a></nav>
<article>
<h1>${f.title}</h1>
<h2>${f.heading}</h2>
<p>${f.paragraph} See the <a href="${heron}">heron page</a> and the <a href="${egret}">egret page</a>.</p>
<p>Birds counted this spring are listed below; the <a href="${map}">marsh map</a> shows the sites.</p>
<table><tr><th>Bird</th><th>Count</th></tr><tr><td>Grey heron</td><td>42</td></tr><tr><td>Little egret</td><td>7</td></tr></table>
</article>
<footer>Copyright the wetland society. <a href="${about}">About</a></footer>
</body></html>
`);
}

// ---------------------------------------------------------------- images

/** Large, plain words so OCR reads them exactly. */
export const OCR_LINES = ['HERON COUNT 2024', 'NORTH MARSH 42 BIRDS'];

/** OCR_LINES as a PNG, drawn by the PDF fixtures' image builder (800 px wide, 44 px text). */
export async function makeOcrPng(): Promise<Buffer> {
  const { makeTextImageAs } = await import('./make-pdf-fixtures.ts');
  return makeTextImageAs('png', OCR_LINES, 44);
}

/** A small image of one line of text, straight from the canvas encoder (no PDF library loaded). */
export function makeImage(format: 'png' | 'jpeg', text = 'FORMAT CHECK 2024'): Buffer {
  const canvas = createCanvas(400, 80);
  const ctx = canvas.getContext('2d');
  ctx.fillStyle = '#ffffff';
  ctx.fillRect(0, 0, 400, 80);
  ctx.fillStyle = '#000000';
  ctx.font = '32px "DejaVu Sans", sans-serif';
  ctx.fillText(text, 16, 52);
  // encodeSync: see makeTextImage in test/fixtures-gen/make-pdf-fixtures.ts.
  return format === 'png' ? canvas.encodeSync('png') : canvas.encodeSync('jpeg', 92);
}

// ---------------------------------------------------------------- the set

export interface FixtureFiles {
  pdf: Buffer;
  docx: Buffer;
  pptx: Buffer;
  xlsx: Buffer;
  xls: Buffer;
  csv: Buffer;
  html: Buffer;
  txt: Buffer;
  png: Buffer;
  jpeg: Buffer;
  encrypted: Buffer;
}

const BUILDERS: { [K in keyof FixtureFiles]: () => Buffer | Promise<Buffer> } = {
  pdf: async () => (await import('./make-pdf-fixtures.ts')).makeMultiPagePdf(),
  docx: makeSampleDocx,
  pptx: makeSamplePptx,
  xlsx: async () => (await import('./make-sheet-fixtures.ts')).buildReportXlsx(),
  xls: makeXls,
  csv: makeSemicolonCsv,
  html: makeHtmlPage,
  txt: () => Buffer.from(`${TEXT_FACTS.english}\nThey are endowed with reason and conscience.\n`),
  png: makeOcrPng,
  jpeg: () => makeImage('jpeg'),
  encrypted: makeEncryptedOffice,
};

export const FIXTURE_KINDS = Object.keys(BUILDERS) as Array<keyof FixtureFiles>;

const built = new Map<keyof FixtureFiles, Promise<Buffer>>();

/** One generated file, built once per process. */
export function fixtureFile(kind: keyof FixtureFiles): Promise<Buffer> {
  let p = built.get(kind);
  if (!p) built.set(kind, (p = Promise.resolve().then(BUILDERS[kind])));
  return p;
}

/** The generated files of the given kinds (each built once per process). */
export async function fixtureSubset<K extends keyof FixtureFiles>(kinds: readonly K[]): Promise<Pick<FixtureFiles, K>> {
  const bytes = await Promise.all(kinds.map((k) => fixtureFile(k)));
  return Object.fromEntries(kinds.map((k, i) => [k, bytes[i]])) as Pick<FixtureFiles, K>;
}

/**
 * Every generated file: a 3-page PDF (MULTI_PAGE), the DOCX and PPTX of DOCX_FACTS / PPTX_FACTS,
 * the report workbook (buildReportXlsx), XLS_FACTS, CSV_FACTS, an HTML page (HTML_FACTS), text, an
 * OCR_LINES PNG, a JPEG and an encrypted Office file. The builders that load pdf-lib, pdfkit or
 * exceljs are imported only when their kind is asked for.
 */
export function fixtureFiles(): Promise<FixtureFiles> {
  return fixtureSubset(FIXTURE_KINDS);
}

/** File names the static server and uploads use for each fixture. */
export const FIXTURE_NAMES: Record<keyof FixtureFiles, string> = {
  pdf: 'report.pdf',
  docx: 'field-report.docx',
  pptx: 'briefing.pptx',
  xlsx: 'sales.xlsx',
  xls: 'ledger.xls',
  csv: 'customers.csv',
  html: 'birds.html',
  txt: 'declaration.txt',
  png: 'count.png',
  jpeg: 'check.jpg',
  encrypted: 'locked.xlsx',
};
