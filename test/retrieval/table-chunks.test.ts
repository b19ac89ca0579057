import t, { type Test } from 'tap';
import { createHash } from 'node:crypto';
import ExcelJS from 'exceljs';
import pino from 'pino';
import { extractSpreadsheet } from '../../src/extractors/spreadsheet/spreadsheet.ts';
import { extractCsv } from '../../src/extractors/csv/csv.ts';
import { cellText } from '../../src/extractors/shared/table-pipeline.ts';
import { escapeCell } from '../../src/extractors/shared/markdown-table.ts';
import type { ExtractedTable, ProcessedDocument } from '../../src/extractors/shared/types.ts';
import { chunkDocument, chunkingProfile, indexTextOf, MAX_CHUNK_CHARS } from '../../src/retrieval/chunking.ts';
import { MAX_CELL_CHARS } from '../../src/retrieval/table-chunks.ts';
import { buildLexicalIndex, searchChunks } from '../../src/retrieval/search.ts';
import { Analyzer } from '../../src/retrieval/tokenizer.ts';
import { RetrievalService } from '../../src/retrieval/retrieval-service.ts';
import type { DocumentAccess } from '../../src/retrieval/contracts.ts';
import { CacheRegistry } from '../../src/cache/cache-registry.ts';
import type { Chunk } from '../../src/retrieval/types.ts';
import { buildLayoutXlsx, buildReportXlsx, salesRow, SALES_ROWS } from '../fixtures-gen/make-sheet-fixtures.ts';
import { makeSemicolonCsv, makeShiftJisCsv, makeUtf16BeCsv, makeXls } from '../fixtures-gen/documents.ts';
const signal = new AbortController().signal;

const ROWS = 5000;
const REGIONS = ['North', 'South', 'East', 'West'];
const HEADERS = ['Order ID', 'Customer', 'Region', 'Quantity', 'Unit price', 'Order date', 'Notes'];

/** Data row i (1-based) of the generated order sheet; row 4,321 alone carries "Zanzibar". */
function order(i: number) {
  return {
    id: `ORD-${String(i).padStart(6, '0')}`,
    customer: `Customer ${i % 997}`,
    region: REGIONS[i % 4],
    quantity: ((i * 7) % 100) + 1,
    price: Math.round((i * 13) % 1000) / 4,
    date: new Date(Date.UTC(2024, 0, 1 + (i % 365))),
    notes: i === 4321 ? 'Ship to Zanzibar harbour' : i % 10 === 0 ? 'Priority delivery' : null,
  };
}

/** The row as a table line, written out here from the data (not by the code under test). */
function orderLine(i: number): string {
  const o = order(i);
  return `| ${o.id} | ${o.customer} | ${o.region} | ${o.quantity} | ${o.price} | ${o.date.toISOString().slice(0, 10)} | ${o.notes ?? ''} |`;
}

let ordersWorkbook: Promise<Buffer> | null = null;

/** Built once per file run (writing 5,000 rows with exceljs takes a couple of seconds). */
function ordersXlsx(): Promise<Buffer> {
  ordersWorkbook ??= buildOrdersXlsx();
  return ordersWorkbook;
}

let ordersExtracted: Promise<ProcessedDocument> | null = null;

/** The workbook extracted once per file run (two tests read the same 5,000 rows; neither changes the document). */
function ordersDoc(): Promise<ProcessedDocument> {
  ordersExtracted ??= ordersXlsx().then((bytes) => extractSpreadsheet({ bytes, filename: 'orders.xlsx', signal }));
  return ordersExtracted;
}

async function buildOrdersXlsx(): Promise<Buffer> {
  const wb = new ExcelJS.Workbook();
  const ws = wb.addWorksheet('Orders');
  ws.addRow(HEADERS);
  for (let i = 1; i <= ROWS; i++) {
    const o = order(i);
    ws.addRow([o.id, o.customer, o.region, o.quantity, o.price, o.date, o.notes]);
  }
  const notes = wb.addWorksheet('Read me');
  notes.addRow(['Orders exported from the shop on 2024-12-31.']);
  return Buffer.from(await wb.xlsx.writeBuffer());
}

function ordersCsv(): Buffer {
  const lines = ['Order export 2024', '', HEADERS.join(',')];
  for (let i = 1; i <= ROWS; i++) {
    const o = order(i);
    lines.push([o.id, o.customer, o.region, o.quantity, o.price, o.date.toISOString().slice(0, 10), o.notes ?? ''].join(','));
  }
  return Buffer.from(lines.join('\r\n') + '\r\n');
}

const HEADER_LINE = `| ${HEADERS.join(' | ')} |`;

/** Table lines (below the header and its separator) of a table chunk. */
function rowLines(c: Chunk): string[] {
  const lines = c.text.split('\n');
  const sep = lines.findIndex((l) => /^\|( --- \|)+$/.test(l));
  return sep < 0 ? [] : lines.slice(sep + 1);
}

function assertOffsets(t: Test, chunks: Chunk[]): void {
  const index = indexTextOf(chunks);
  let previousEnd = -2;
  for (const c of chunks) {
    if (index.slice(c.char_start, c.char_end) !== c.text) t.fail(`chunk ${c.chunk_index}: offsets are not its place in the index text`);
    if (c.char_start !== previousEnd + 2) t.fail(`chunk ${c.chunk_index}: offsets do not follow the previous chunk`);
    previousEnd = c.char_end;
  }
  t.pass(`offsets of ${chunks.length} chunks point into the index text`);
}

/** Every order row in exactly one chunk, each chunk self-describing. */
function assertOrdersCovered(t: Test, chunks: Chunk[], sheet: string, size: number): void {
  const seen = new Map<string, number>();
  const tables = chunks.filter((c) => c.content_type === 'table' && c.heading_path[0] === sheet);
  t.ok(tables.length > ROWS / 40, `${tables.length} table chunks`);
  for (const c of tables) {
    const lines = c.text.split('\n');
    if (lines[0] !== `## Sheet: ${sheet}`) t.fail(`chunk ${c.chunk_index} does not open with the sheet name`);
    if (!lines.includes(HEADER_LINE)) t.fail(`chunk ${c.chunk_index} lacks the header row`);
    if (c.text.length > size) t.fail(`chunk ${c.chunk_index} has ${c.text.length} chars (size ${size})`);
    if (c.page_start !== c.page_end || c.page_start === null) t.fail(`chunk ${c.chunk_index} sheet number`);
    for (const l of rowLines(c)) seen.set(l, (seen.get(l) ?? 0) + 1);
  }
  let missing = 0;
  let repeated = 0;
  for (let i = 1; i <= ROWS; i++) {
    const n = seen.get(orderLine(i)) ?? 0;
    if (n === 0) missing++;
    if (n > 1) repeated++;
  }
  t.equal(missing, 0, 'every data row is in a chunk, rendered as in the content');
  t.equal(repeated, 0, 'no row is in two chunks (row groups do not overlap)');
  t.equal(seen.size, ROWS, 'nothing else sits in the table rows');
}

async function lexicalTop(chunks: Chunk[], query: string): Promise<Chunk> {
  const analyzer = new Analyzer();
  const lexical = buildLexicalIndex(chunks, analyzer);
  const res = await searchChunks({ query, chunks, lexical, mode: 'lexical', topK: 5 });
  return chunks[res.hits[0].index];
}

t.test('a 5,000-row workbook: every row chunked once, every chunk self-describing, row 4,321 findable', async (t) => {
  const doc = await ordersDoc();
  t.equal(doc.tables[0].rows?.length, ROWS);
  t.ok(doc.content.length < 5000, 'the content itself is only a preview');
  const t0 = performance.now();
  const chunks = chunkDocument(doc);
  const ms = performance.now() - t0;
  t.comment(`chunked in ${ms.toFixed(0)} ms (speed is measured by npm run bench, not asserted)`);

  const { size } = chunkingProfile('xlsx', 300_000);
  t.equal(size, 1800, 'the size follows the full rendering (> 100,000 chars), not the preview');
  assertOrdersCovered(t, chunks, 'Orders', size);
  assertOffsets(t, chunks);
  t.ok(chunks.every((c, i) => c.chunk_index === i && c.total_chunks === chunks.length && c.doc_type === 'xlsx'));
  for (const c of chunks.filter((x) => x.heading_path[0] === 'Orders')) {
    if (c.page_start !== 1 || c.content_type !== 'table') t.fail(`chunk ${c.chunk_index}: sheet 1, a table`);
  }

  // The second sheet (one column of text) is its own chunk with its own sheet number.
  const readMe = chunks.filter((c) => c.heading_path[0] === 'Read me');
  t.equal(readMe.length, 1);
  t.equal(readMe[0].page_start, 2);
  t.equal(readMe[0].text, '## Sheet: Read me\n\n| Orders exported from the shop on 2024-12-31. |\n| --- |');

  const byId = await lexicalTop(chunks, 'ORD-004321');
  t.ok(byId.text.split('\n').includes(orderLine(4321)), 'the order id finds its row at rank 1');
  const byWords = await lexicalTop(chunks, 'which order ships to Zanzibar?');
  t.ok(byWords.text.split('\n').includes('| ORD-004321 | Customer 333 | South | 48 | 43.25 | 2024-11-02 | Ship to Zanzibar harbour |'), 'a word of row 4,321 finds it at rank 1');
  t.equal(byWords.importance_score, 0.85); // 0.5 + heading + numbers
});

t.test('retrieve_chunks pipeline: a 5,000-row sheet is indexed row by row', async (t) => {
  const doc = await ordersDoc();
  const url = 'https://files.example/orders.xlsx';
  const sha = createHash('sha256').update(doc.content).digest('hex');
  const documents: DocumentAccess = {
    async fetch() {
      return { url, sha256: sha, source: url };
    },
    async load() {
      return { key: url, contentSha256: sha, source: url, doc };
    },
  };
  const svc = new RetrievalService({ documents, caches: new CacheRegistry({ ttlMs: 60_000 }) });
  const log = pino({ level: 'silent' });
  const res = await svc.retrieve({ sources: [{ url }], query: 'ORD-004321', topK: 3 }, { signal, log });
  t.equal(res.total_chunks_indexed, chunkDocument(doc).length);
  t.ok(res.total_chunks_indexed > 200, `${res.total_chunks_indexed} chunks indexed (the preview alone gave 8)`);
  t.ok(res.results[0].text.includes(orderLine(4321)));
  t.same(res.results[0].heading_path, ['Orders']);
  t.equal(res.results[0].content_type, 'table');
});

t.test('a 5,000-row CSV with a title line: rows, header, title and row count', async (t) => {
  const doc = await extractCsv({ bytes: ordersCsv(), filename: 'orders.csv', signal });
  t.equal(doc.tables[0].rows?.length, ROWS);
  const chunks = chunkDocument(doc);
  const { size } = chunkingProfile('csv', 300_000);
  assertOrdersCovered(t, chunks, 'orders.csv', size);
  assertOffsets(t, chunks);
  // The title row is the table's title in every chunk, and the sheet's text says how many rows.
  t.same(chunks[0].text, '## Sheet: orders.csv\n\nOrder export 2024\n\n_5000 rows × 7 columns._');
  t.equal(chunks[0].content_type, 'heading');
  t.ok(chunks.slice(1).every((c) => c.text.startsWith(`## Sheet: orders.csv\n\nOrder export 2024\n\n${HEADER_LINE}\n`)));
  t.ok(chunks.every((c) => c.page_start === 1 && c.page_end === 1 && c.doc_type === 'csv'));
  const hit = await lexicalTop(chunks, 'Zanzibar harbour');
  t.ok(hit.text.split('\n').includes(orderLine(4321)));
});

t.test('the report fixture: title, merged regions, dates, three sheets', async (t) => {
  const doc = await extractSpreadsheet({ bytes: await buildReportXlsx(), signal });
  const chunks = chunkDocument(doc);
  assertOffsets(t, chunks);
  t.equal(chunks[0].text, '## Sheet: Sales\n\nQuarterly sales report\n\n_30 rows × 6 columns._');
  const sales = chunks.filter((c) => c.content_type === 'table' && c.heading_path[0] === 'Sales');
  const lines = sales.flatMap(rowLines);
  t.equal(lines.length, SALES_ROWS);
  for (let i = 0; i < SALES_ROWS; i++) {
    const r = salesRow(i);
    const expected = `| ${r.region} | ${r.product} | ${r.units} | ${r.price} | ${r.units * r.price} | ${r.date.toISOString().slice(0, 10)} |`;
    if (lines[i] !== expected) t.fail(`row ${i}: ${lines[i]} != ${expected}`);
  }
  t.ok(sales.every((c) => c.text.startsWith('## Sheet: Sales\n\nQuarterly sales report\n\n| Region | Product | Units | Price | Total | Date |\n| --- |')));
  const inventory = chunks.find((c) => c.heading_path[0] === 'Inventory')!;
  t.equal(inventory.page_start, 2);
  t.match(inventory.text, /\| Widget \| 120 \| 2024-02-29T13:45:30 \|/);
  t.equal(chunks[chunks.length - 1].page_start, 3);
});

function syntheticSheet(name: string, headers: string[], rows: ExtractedTable['rows']): ProcessedDocument {
  const content = `## Sheet: ${name}`;
  return {
    kind: 'xlsx',
    content,
    metadata: {},
    tables: [{ content: '', table_type: 'spreadsheet', location: `sheet:${name}`, metadata: { sheet: name }, headers, rows, row_numbers: rows!.map((_, i) => i + 2), sheet: name }],
    images: [],
    urls: [],
    pages: [{ number: 1, unit: 'sheet', label: name, start: 0, end: content.length }],
  };
}

t.test('50,000 rows chunk fast and in bounded pieces', async (t) => {
  const rows: NonNullable<ExtractedTable['rows']> = [];
  for (let i = 1; i <= 50_000; i++) rows.push([`K${i}`, `Item ${i % 313}`, i * 3, i % 7 === 0, i % 2 ? '2024-05-01' : null]);
  const doc = syntheticSheet('Big', ['Key', 'Item', 'Amount', 'Flag', 'Date'], rows);
  const t0 = performance.now();
  const chunks = chunkDocument(doc);
  const ms = performance.now() - t0;
  t.comment(`50,000 rows chunked in ${ms.toFixed(0)} ms`);
  const keys = new Set<string>();
  for (const c of chunks) for (const l of rowLines(c)) keys.add(l.split(' | ')[0].slice(2));
  t.equal(keys.size, 50_000, 'every row is in a chunk');
  t.ok(chunks.every((c) => c.text.length <= 1800));
  t.match(chunks[0].text, /^## Sheet: Big\n\n\| Key \| Item \| Amount \| Flag \| Date \|\n\| --- \| --- \| --- \| --- \| --- \|\n\| K1 \| Item 1 \| 3 \| FALSE \| 2024-05-01 \|\n\| K2 \| Item 2 \| 6 \| FALSE \| {2}\|\n/);
});

t.test('wide rows: column groups keep every cell, repeat the key column, stay within the limit', async (t) => {
  const headers = Array.from({ length: 120 }, (_, c) => (c === 0 ? 'Sample' : `Measurement number ${c}`));
  const rows: NonNullable<ExtractedTable['rows']> = [];
  for (let r = 0; r < 30; r++) rows.push(headers.map((_, c) => (c === 0 ? `S${r}` : c === 7 && r === 3 ? 'x'.repeat(4000) : r * 1000 + c)));
  const doc = syntheticSheet('Wide', headers, rows);
  const chunks = chunkDocument(doc);
  t.ok(chunks.every((c) => c.text.length <= MAX_CHUNK_CHARS));
  t.ok(chunks.every((c) => c.text.startsWith('## Sheet: Wide\n\n| Sample | ')), 'every group leads with the key column');
  const cells = new Map<string, string>();
  for (const c of chunks) {
    const lines = c.text.split('\n');
    const head = lines[2].slice(2, -2).split(' | ');
    for (const l of rowLines(c)) {
      const vals = l.slice(2, -2).split(' | ');
      head.forEach((h, i) => cells.set(`${vals[0]}/${h}`, vals[i]));
    }
  }
  let wrong = 0;
  rows.forEach((row) => headers.forEach((h, c) => {
    const expected = c === 7 && row[0] === 'S3' ? `${'x'.repeat(MAX_CELL_CHARS - 1)}…` : cellText(row[c]);
    if (cells.get(`${row[0]}/${h}`) !== expected) wrong++;
  }));
  t.equal(wrong, 0, 'every cell of every row is in a chunk (an enormous cell clipped)');
});

t.test('empty workbook, table without rows, pipes in cells', async (t) => {
  const emptyBook = new ExcelJS.Workbook();
  emptyBook.addWorksheet('Sheet1');
  const empty = await extractSpreadsheet({ bytes: Buffer.from(await emptyBook.xlsx.writeBuffer()), signal });
  const chunks = chunkDocument(empty);
  t.same(chunks.map((c) => [c.text, c.page_start, c.heading_path]), [['## Sheet: Sheet1\n\n_Empty sheet._', 1, ['Sheet1']]]);

  const headerOnly = chunkDocument(syntheticSheet('H', ['A', 'B'], []));
  t.same(headerOnly.map((c) => c.text), ['## Sheet: H\n\n| A | B |\n| --- | --- |']);

  const piped = chunkDocument(syntheticSheet('P', ['Expr', 'Note'], [['a|b', 'line one\nline two']]));
  t.equal(piped[0].text, '## Sheet: P\n\n| Expr | Note |\n| --- | --- |\n| a\\|b | line one line two |');
});

/** Each table row as the content renders it: cellText, pipes escaped. */
function fullLine(row: NonNullable<ExtractedTable['rows']>[number], width: number): string {
  const cells: string[] = [];
  for (let c = 0; c < width; c++) cells.push(escapeCell(cellText(row[c] ?? null)).slice(0, MAX_CELL_CHARS));
  return `| ${cells.join(' | ')} |`;
}

t.test('generated spreadsheets and CSVs chunk without error and cover every row', async (t) => {
  const files: Array<[string, () => Promise<ProcessedDocument>]> = [
    ['report.xlsx', async () => extractSpreadsheet({ bytes: await buildReportXlsx(), signal })],
    ['layout.xlsx', async () => extractSpreadsheet({ bytes: await buildLayoutXlsx(), signal })],
    ['ledger.xls', async () => extractSpreadsheet({ bytes: makeXls(), signal })],
    ['customers.csv', async () => extractCsv({ bytes: makeSemicolonCsv(), filename: 'customers.csv', signal })],
    ['cups-utf16.csv', async () => extractCsv({ bytes: makeUtf16BeCsv(), filename: 'cups-utf16.csv', signal })],
    ['names-sjis.csv', async () => extractCsv({ bytes: makeShiftJisCsv(), filename: 'names-sjis.csv', signal })],
  ];
  for (const [file, extract] of files) {
    const doc = await extract();
    const chunks = chunkDocument(doc);
    t.ok(chunks.length > 0, `${file}: ${chunks.length} chunks`);
    if (chunks.some((c) => c.text.length > MAX_CHUNK_CHARS || !c.text.trim())) t.fail(`${file}: chunk over the limit or blank`);
    assertOffsets(t, chunks);
    let missing = 0;
    let rows = 0;
    for (const table of doc.tables) {
      const lines = new Set(chunks.filter((c) => c.heading_path[0] === table.sheet && c.content_type === 'table').flatMap(rowLines));
      for (const row of table.rows!) {
        rows++;
        if (!lines.has(fullLine(row, table.headers!.length))) missing++;
      }
    }
    t.ok(rows > 0, `${file}: ${rows} rows in ${doc.tables.length} tables`);
    t.equal(missing, 0, `${file}: every row is in a chunk`);
  }
});
