/**
 * Tables in generated PDFs, through extractPdf: a ruled grid with a wrapped cell, a borderless
 * invoice with empty cells and a section row, a two-level header, and pages that must stay text
 * (prose, a two-column page). Each table lands in tables[] with its rows and columns and stands as
 * a pipe table in the content; its chunk is a table chunk.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { PDFDocument, StandardFonts, type PDFFont, type PDFPage } from 'pdf-lib';
import { OcrPool } from '../../src/extractors/ocr/ocr-pool.ts';
import { extractPdf } from '../../src/extractors/pdf/pdf.ts';
import { chunkDocument } from '../../src/retrieval/chunking.ts';
import { makeTwoColumnPdf } from '../fixtures-gen/make-pdf-fixtures.ts';
import { buildTestApp } from '../helper.ts';

const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pdf-tables-ocr-'));
const ocr = new OcrPool({ size: 1, cacheDir });
t.teardown(async () => {
  await ocr.close();
  fs.rmSync(cacheDir, { recursive: true, force: true });
});
const run = (bytes: Buffer) => extractPdf({ bytes, filename: 'x.pdf', signal: AbortSignal.timeout(60_000) }, { ocr });

async function pdf(draw: (page: PDFPage, font: PDFFont) => void): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  draw(doc.addPage([612, 792]), font);
  return Buffer.from(await doc.save({ useObjectStreams: false }));
}

const RULED = [
  ['Part', 'Supplier', 'Price'],
  ['Bolt M6', 'Acme Fasteners', '0.12'],
  ['Hinge', 'Northwind wrapped supplier name', '3.40'],
  ['Gasket', 'Contoso', '1.05'],
];

/** A grid drawn with lines; cell text 3 pt from the rules (gaps far below an em). */
function ruledTable(page: PDFPage, font: PDFFont): void {
  const xs = [72, 140, 230, 280];
  const ys = [700, 684, 668, 640, 624];
  for (const x of xs) page.drawLine({ start: { x, y: ys[0] }, end: { x, y: ys[ys.length - 1] }, thickness: 0.8 });
  for (const y of ys) page.drawLine({ start: { x: xs[0], y }, end: { x: xs[xs.length - 1], y }, thickness: 0.8 });
  RULED.forEach((row, r) =>
    row.forEach((cell, c) => {
      const top = ys[r] - 11;
      if (cell.startsWith('Northwind')) {
        page.drawText('Northwind wrapped', { x: xs[c] + 3, y: top, size: 9, font });
        page.drawText('supplier name', { x: xs[c] + 3, y: top - 12, size: 9, font });
      } else page.drawText(cell, { x: xs[c] + 3, y: top, size: 9, font });
    }),
  );
}

t.test('a ruled table: cells from the grid, a wrapped cell stays one cell', async (t) => {
  const doc = await run(await pdf(ruledTable));
  t.equal(doc.tables.length, 1);
  const table = doc.tables[0];
  t.match(table, { table_type: 'pdf', location: 'page:1', metadata: { page: 1, detection: 'ruled', columns: 3, rows: 3 } });
  t.same(table.headers, RULED[0]);
  t.same(table.rows, RULED.slice(1));
  t.ok(doc.content.includes('| Hinge | Northwind wrapped supplier name | 3.40 |'), 'pipe table in the content');
  t.equal(table.content.split('\n')[0], '| Part | Supplier | Price |');
});

const INVOICE = {
  header: ['Description', 'Qty', 'Unit price', 'Amount'],
  rows: [
    ['Oil change', '1', '49.00', '49.00'],
    ['Brake pads', '2', '', '120.00'],
    ['Labour', '', '', ''],
    ['', 'Diagnostics', '', '80.00'],
    ['Discount', '', '-10%', '-24.90'],
    ['Total', '', '', '224.10'],
  ],
};

/** A borderless invoice: aligned columns, empty cells, a section row, a centred title above it. */
function invoice(page: PDFPage, font: PDFFont): void {
  page.drawText('Workshop Invoice 2024-117', { x: 200, y: 740, size: 14, font });
  page.drawText('Itemised charges', { x: 230, y: 716, size: 10, font });
  const xs = [72, 200, 280, 380];
  [INVOICE.header, ...INVOICE.rows].forEach((row, r) =>
    row.forEach((cell, c) => {
      if (cell) page.drawText(cell, { x: xs[c], y: 700 - r * 14, size: 10, font });
    }),
  );
  page.drawText('Payment is due within thirty days of the invoice date. Thank you for your business and', { x: 72, y: 580, size: 10, font });
  page.drawText('we look forward to seeing your vehicle again at the next scheduled service interval.', { x: 72, y: 566, size: 10, font });
}

t.test('a borderless invoice: every cell in its column, empty cells kept, prose after it stays text', async (t) => {
  const doc = await run(await pdf(invoice));
  t.equal(doc.tables.length, 1);
  const table = doc.tables[0];
  t.match(table.metadata, { detection: 'aligned', columns: 4 });
  t.same(table.headers, INVOICE.header);
  t.same(table.rows, INVOICE.rows);
  t.match(doc.content, /Workshop Invoice 2024-117\n+Itemised charges\n\n\| Description \| Qty \| Unit price \| Amount \|/);
  t.match(doc.content, /\| Brake pads \| 2 \| {2}\| 120\.00 \|/);
  t.match(doc.content, /\| Total \| {2}\| {2}\| 224\.10 \|\n\nPayment is due within thirty days/);
  const chunks = chunkDocument(doc);
  const tableChunk = chunks.find((c) => c.text.includes('| Brake pads |'));
  t.ok(tableChunk, 'the table is in a chunk');
  t.equal(tableChunk?.content_type, 'table');
});

/** A two-level header: "Sales" centred over Q1..Q3, "Region" and "Total" beside them. */
function twoLevel(page: PDFPage, font: PDFFont): void {
  const xs = [72, 160, 220, 280, 350];
  page.drawText('Region', { x: xs[0], y: 706, size: 10, font });
  page.drawText('Sales', { x: 225, y: 712, size: 10, font });
  page.drawText('Total', { x: xs[4], y: 706, size: 10, font });
  ['Q1', 'Q2', 'Q3'].forEach((q, k) => page.drawText(q, { x: xs[1 + k], y: 700, size: 10, font }));
  [
    ['North', '10', '12', '14', '36'],
    ['South', '8', '9', '11', '28'],
    ['West', '5', '', '7', '12'],
  ].forEach((row, r) => row.forEach((cell, c) => cell && page.drawText(cell, { x: xs[c], y: 684 - r * 14, size: 10, font })));
}

t.test('a two-level header: the group label spreads over its columns, two header rows', async (t) => {
  const doc = await run(await pdf(twoLevel));
  t.equal(doc.tables.length, 1);
  const table = doc.tables[0];
  t.equal(table.metadata.header_rows, 2);
  t.same(table.headers, ['Region', 'Sales Q1', 'Sales Q2', 'Sales Q3', 'Total']);
  t.same(table.rows, [
    ['North', '10', '12', '14', '36'],
    ['South', '8', '9', '11', '28'],
    ['West', '5', '', '7', '12'],
  ]);
  t.ok(doc.content.includes('| Region | Sales | Sales | Sales | Total |\n| --- | --- | --- | --- | --- |\n| Region | Q1 | Q2 | Q3 | Total |'));
});

t.test('prose and a two-column page do not become tables', async (t) => {
  const prose = await pdf((page, font) => {
    const lines = [
      'Tables are detected only where short cells line up in columns across several lines.',
      'Ordinary paragraphs such as this one run across the page in long lines of words,',
      'and even a line with a wide gap      in the middle is no table on its own at all.',
      'The detector must leave such text exactly as it was read before this change.',
    ];
    lines.forEach((l, i) => page.drawText(l, { x: 72, y: 700 - i * 14, size: 10, font }));
  });
  const a = await run(prose);
  t.same(a.tables, []);
  t.notMatch(a.content, /\|/);
  const b = await run(await makeTwoColumnPdf());
  t.same(b.tables, []);
  t.notMatch(b.content, /\|/);
});

t.test('over REST: process_document lists the table with its rows, retrieve_chunks finds its row', async (t) => {
  const app = await buildTestApp(t);
  const headers = { 'content-type': 'application/pdf', 'content-disposition': 'attachment; filename="invoice.pdf"' };
  const bytes = await pdf(invoice);
  const res = await app.inject({ method: 'POST', url: '/v1/documents/process', headers, payload: bytes });
  t.equal(res.statusCode, 200, res.body);
  const body = res.json();
  t.equal(body.table_count, 1);
  t.match(body.tables[0], { table_type: 'pdf', location: 'page:1' });
  t.match(body.tables[0].content, /\| Brake pads \| 2 \| {2}\| 120\.00 \|/);
  const hits = await app.inject({ method: 'POST', url: '/v1/documents/retrieve?query=brake%20pads', headers, payload: bytes });
  t.equal(hits.statusCode, 200, hits.body);
  t.match(hits.json().results[0].text, /\| Brake pads \| 2 \|/);
});
