/**
 * The eight document tools called through their handlers, on generated files of every kind with
 * known content (uploads and a loopback URL), with every result checked against the tool's own
 * output schema. test/corpus/documents/tools.test.ts runs the same tools on the real corpus.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import t from 'tap';
import { FULL_ACCESS } from '../../src/auth/principal.ts';
import Value from 'typebox/value';
import { CacheRegistry } from '../../src/cache/cache-registry.ts';
import { loadConfig } from '../../src/config.ts';
import { DocumentService } from '../../src/documents/document-service.ts';
import { OcrPool } from '../../src/extractors/ocr/ocr-pool.ts';
import type { UploadedFile } from '../../src/call-context.ts';
import type { AnyTool, ToolContext } from '../../src/tools/define-tool.ts';
import { extractCsvTablesTool } from '../../src/tools/extract-csv-tables.ts';
import { extractDocxTextTool } from '../../src/tools/extract-docx-text.ts';
import { extractImageTextTool } from '../../src/tools/extract-image-text.ts';
import { extractPdfTextTool } from '../../src/tools/extract-pdf-text.ts';
import { extractPptxTextTool } from '../../src/tools/extract-pptx-text.ts';
import { extractXlsxTablesTool } from '../../src/tools/extract-xlsx-tables.ts';
import { processDocumentTool } from '../../src/tools/process-document.ts';
import { querySpreadsheetTool } from '../../src/tools/query-spreadsheet.ts';
import type { Services } from '../../src/services.ts';
import { startLocalServer, type LocalServer } from './fixtures/local-server.ts';
import { DOCX_FACTS, PPTX_FACTS } from '../fixtures-gen/make-office-fixtures.ts';
import { MULTI_PAGE } from '../fixtures-gen/make-pdf-fixtures.ts';
import { salesRow, SALES_ROWS } from '../fixtures-gen/make-sheet-fixtures.ts';
import { CSV_FACTS, FIXTURE_NAMES, fixtureFiles, HTML_FACTS, OCR_LINES, TEXT_FACTS, XLS_FACTS, type FixtureFiles } from '../fixtures-gen/documents.ts';

let files: FixtureFiles;
const file = (kind: keyof FixtureFiles): UploadedFile => ({ bytes: files[kind], filename: FIXTURE_NAMES[kind] });

const config = loadConfig({}, { ALLOW_PRIVATE_NETWORKS: true });
const caches = new CacheRegistry({ ttlMs: 60_000 });
const ocr = new OcrPool({ size: 1, cacheDir: fs.mkdtempSync(path.join(os.tmpdir(), 'ocr-cache-')) });
const documents = new DocumentService({ config, caches, ocr, download: { retryDelaysMs: [10] } });
const services = { config, caches, documents, startedAt: Date.now(), diskCaches: [], healthReporters: [], close: async () => {} } as unknown as Services;
const log = pino({ level: 'silent' });
let server: LocalServer;
t.before(async () => {
  [server, files] = await Promise.all([startLocalServer(), fixtureFiles()]);
});
t.teardown(async () => {
  await server.close();
  await documents.close();
  await ocr.close();
});

/** Calls a tool as the transports do, and checks the result against its output schema. */
async function call(tool: AnyTool, input: Record<string, unknown>, upload?: UploadedFile) {
  const ctx: ToolContext = { signal: AbortSignal.timeout(120_000), log, requestId: 'test', services, principal: FULL_ACCESS, ...(upload ? { upload } : {}) };
  const out = await tool.handler(input, ctx);
  const errors = [...Value.Errors(tool.output, out)].slice(0, 3);
  if (errors.length) throw new Error(`${tool.name} output breaks its schema: ${JSON.stringify(errors)}`);
  return out as Record<string, any>;
}
const codeOf = (p: Promise<unknown>) => p.then(() => 'resolved', (e) => `${e.code}: ${e.message}`);

t.test('process_document: PDF by URL (extensionless), clipped by max_chars', async (t) => {
  server.route('/reports/quarterly', (_q, res) => {
    res.writeHead(200, { 'content-type': 'application/pdf' });
    res.end(files.pdf);
  });
  const full = await call(processDocumentTool, { document_url: `${server.origin}/reports/quarterly` });
  t.equal(full.document_type, 'pdf');
  t.ok(full.content.startsWith(`--- Page 1 ---\n${MULTI_PAGE.pages[0]![0]}`), full.content.slice(0, 60));
  MULTI_PAGE.pages.forEach((lines, i) => {
    t.ok(full.content.includes(`--- Page ${i + 1} ---`), `page ${i + 1} marker`);
    for (const line of lines) t.ok(full.content.includes(line), line);
  });
  t.equal(full.truncated, false);
  t.equal(full.content_length, full.content.length);
  t.equal(full.detected_language, 'en');
  t.equal(full.source, `${server.origin}/reports/quarterly`);
  t.match(full.metadata, { page_count: 3, title: MULTI_PAGE.title, author: MULTI_PAGE.author, file_size: files.pdf.length, filename: 'quarterly' });

  const short = await call(processDocumentTool, { document_url: `${server.origin}/reports/quarterly`, max_chars: 120 });
  t.equal(short.content, full.content.slice(0, 120));
  t.equal(short.truncated, true);
  t.equal(short.content_length, full.content_length);
  t.equal(server.hits.get('/reports/quarterly'), 1, 'the second call came from the cache');
});

t.test('process_document: DOCX, HTML and text uploads', async (t) => {
  const docx = await call(processDocumentTool, {}, file('docx'));
  t.equal(docx.document_type, 'docx');
  t.ok(docx.content.startsWith(`# ${DOCX_FACTS.heading1}\n\n${DOCX_FACTS.paragraph}`), docx.content.slice(0, 100));
  t.ok(docx.content.includes(`## ${DOCX_FACTS.heading2}`));
  t.equal(docx.table_count, 1);
  t.equal(docx.tables[0].content, DOCX_FACTS.table.map((r, i) => `| ${r.join(' | ')} |${i === 0 ? `\n|${' --- |'.repeat(r.length)}` : ''}`).join('\n'));
  t.same(docx.urls.map((u: { url: string }) => u.url), [DOCX_FACTS.link.url]);

  const html = await call(processDocumentTool, {}, file('html'));
  t.equal(html.document_type, 'html');
  t.ok(html.content.includes(HTML_FACTS.paragraph), 'the article text');
  t.notOk(html.content.includes('do not extract'), 'scripts are dropped');
  const urls = html.urls.map((u: { url: string }) => u.url);
  t.ok(urls.every((u: string) => HTML_FACTS.links.includes(u)), urls.join(' '));
  t.ok(urls.includes(HTML_FACTS.links[0]) && urls.includes(HTML_FACTS.links[1]) && urls.includes(HTML_FACTS.links[2]), 'the article links');
  t.equal(new Set(urls).size, urls.length, 'de-duplicated');

  const text = await call(processDocumentTool, {}, file('txt'));
  t.equal(text.document_type, 'text');
  t.ok(text.content.startsWith(TEXT_FACTS.english));
  t.equal(text.detected_language, 'en');
});

t.test('extract_pdf_text / extract_docx_text / extract_pptx_text', async (t) => {
  const pdf = await call(extractPdfTextTool, {}, file('pdf'));
  t.equal(pdf.page_count, 3);
  t.same(pdf.ocr_pages, []);
  t.ok(pdf.text.includes(`--- Page 3 ---\n${MULTI_PAGE.pages[2]![0]}`));
  t.equal(pdf.char_count, pdf.text.length);

  const docx = await call(extractDocxTextTool, {}, file('docx'));
  const f = DOCX_FACTS;
  for (const s of [`# ${f.heading1}`, `## ${f.heading2}`, `### ${f.heading3}`, f.paragraph, f.footnote, ...f.bullets, f.nestedBullet, ...f.numbered, f.link.text, f.imageAlt]) {
    t.ok(docx.text.includes(s), s);
  }
  t.equal(docx.table_count, 1);

  const pptx = await call(extractPptxTextTool, {}, file('pptx'));
  t.equal(pptx.slide_count, PPTX_FACTS.slides.length);
  PPTX_FACTS.slides.forEach((slide, i) => t.ok(pptx.text.includes(`--- Slide ${i + 1} ---\n\n# ${slide.title}`), `slide ${i + 1}: ${slide.title}`));
  for (const s of ['Counts rose this quarter', 'North marsh doubled', '| North marsh | 42 |', 'Open with the headline number.']) t.ok(pptx.text.includes(s), s);
});

t.test('extract tools refuse the wrong kind, naming what the file is', async (t) => {
  t.equal(
    await codeOf(call(extractPdfTextTool, {}, file('docx'))),
    'UNSUPPORTED_FORMAT: Unsupported format for this tool: expected a PDF document, but the file is a Word document (DOCX)',
  );
  t.match(await codeOf(call(extractDocxTextTool, {}, file('pdf'))), /^UNSUPPORTED_FORMAT: .*but the file is a PDF document$/);
  t.match(await codeOf(call(extractPptxTextTool, {}, file('xlsx'))), /but the file is an Excel workbook \(XLSX\)$/);
  t.match(await codeOf(call(extractXlsxTablesTool, {}, file('csv'))), /but the file is a CSV\/TSV table$/);
  t.match(await codeOf(call(extractCsvTablesTool, {}, file('png'))), /but the file is a PNG image$/);
  t.match(await codeOf(call(extractImageTextTool, {}, file('pdf'))), /expected an image .* but the file is a PDF document$/);
  t.match(await codeOf(call(querySpreadsheetTool, { search_value: 'x' }, file('docx'))), /^UNSUPPORTED_FORMAT/);
  t.match(await codeOf(call(extractXlsxTablesTool, {}, file('encrypted'))), /^PROCESSING_ERROR: .*password-protected/);
  t.match(await codeOf(call(processDocumentTool, {})), /^VALIDATION_ERROR/, 'neither URL nor upload');
});

t.test('extract_xlsx_tables on XLSX and XLS; extract_csv_tables', async (t) => {
  const xls = await call(extractXlsxTablesTool, {}, file('xls'));
  t.equal(xls.table_count, 2);
  t.same(
    xls.tables.map((x: { location: string; metadata: { rows: number; columns: number } }) => [x.location, x.metadata.rows, x.metadata.columns]),
    XLS_FACTS.sheets.map((s) => [`sheet:${s.name}`, s.rows.length - 1, s.rows[0].length]),
  );
  t.ok(xls.tables[0].content.startsWith('| Alpha | Beta | Gamma | Delta |\n| --- | --- | --- | --- |\n| 11 | first entry | 3 | 4 |'));
  t.ok(xls.tables[0].content.includes(`| 58 | ${XLS_FACTS.uuid} | 22 | 9 |`));

  const xlsx = await call(extractXlsxTablesTool, {}, file('xlsx'));
  t.same(xlsx.tables.map((x: { location: string }) => x.location), ['sheet:Sales', 'sheet:Inventory', 'sheet:Notes']);
  t.equal(xlsx.tables[0].metadata.rows, SALES_ROWS);
  // tables[] carries every row (the content is only a 20-row preview), and nothing is left to page.
  t.same(xlsx.tables.map((x: { row_count: number; rows: unknown[] }) => [x.row_count, x.rows.length]), [[SALES_ROWS, SALES_ROWS], [3, 3], [xlsx.tables[2].row_count, xlsx.tables[2].row_count]]);
  t.same(xlsx.tables[0].headers, ['Region', 'Product', 'Units', 'Price', 'Total', 'Date']);
  t.same(xlsx.tables[0].rows[SALES_ROWS - 1].slice(0, 3), [salesRow(SALES_ROWS - 1).region, salesRow(SALES_ROWS - 1).product, salesRow(SALES_ROWS - 1).units], 'the last row too');
  t.same([xlsx.next_table_offset, xlsx.next_row_offset], [null, null]);
  const fromSecond = await call(extractXlsxTablesTool, { table_offset: 1, row_offset: 1 }, file('xlsx'));
  t.same(fromSecond.tables.map((x: { location: string }) => x.location), ['sheet:Inventory', 'sheet:Notes']);
  t.same([fromSecond.tables[0].row_offset, fromSecond.tables[0].rows.length, fromSecond.table_count], [1, 2, 3], 'row_offset skips rows of the first listed table');
  const first = salesRow(0);
  t.ok(xlsx.tables[0].content.includes(`| ${first.region} | ${first.product} | ${first.units} | ${first.price} | ${first.units * first.price} | 2024-01-01 |`));
  for (const table of [...xls.tables, ...xlsx.tables]) {
    t.ok(table.content.length <= 5000);
    t.equal(table.table_type, 'spreadsheet');
  }

  const csv = await call(extractCsvTablesTool, {}, file('csv'));
  t.equal(csv.table_count, 1);
  t.match(csv.tables[0].metadata, { delimiter: 'semicolon', rows: CSV_FACTS.rows.length, columns: CSV_FACTS.headers.length });
  t.ok(csv.tables[0].content.includes('| 2 | Preston | Dominguez;Mcmillan and Donovan | Bensonview |'), 'a quoted delimiter stays in its cell');
  t.same([csv.tables[0].row_count, csv.tables[0].headers, csv.tables[0].rows], [CSV_FACTS.rows.length, CSV_FACTS.headers, CSV_FACTS.rows], 'every row');
  // Delimited text named .txt is still a table to the CSV tool.
  const txt = await call(extractCsvTablesTool, {}, { bytes: Buffer.from('name,qty\napple,3\npear,5\n'), filename: 'list.txt' });
  t.equal(txt.table_count, 1);
  t.equal(txt.tables[0].metadata.rows, 2);
});

t.test('query_spreadsheet over all rows of XLS and CSV', async (t) => {
  const x = await call(querySpreadsheetTool, { search_value: XLS_FACTS.uuid.slice(0, 8).toUpperCase() }, file('xls'));
  t.equal(x.match_count, 1);
  t.same(x.matches, [{ sheet: 'Ledger', row_number: XLS_FACTS.uuidRow, row: { Alpha: 58, Beta: XLS_FACTS.uuid, Gamma: 22, Delta: 9 } }]);
  t.same(x.sheets_searched, ['Ledger', 'Lookup']);
  t.equal(x.document_type, 'xls');

  const c = await call(querySpreadsheetTool, { search_value: 'chile' }, file('csv'));
  t.equal(c.match_count, 1);
  t.equal(c.matches[0].row.Country, 'Chile');
  t.equal(c.matches[0].row['First Name'], 'Sheryl');
  t.equal(c.matches[0].row_number, 2);
  t.equal(c.document_type, 'csv');

  const limited = await call(querySpreadsheetTool, { search_value: '.example.com', limit: 2 }, file('csv'));
  t.equal(limited.matches.length, 2);
  t.equal(limited.match_count, CSV_FACTS.rows.length);
  t.equal(limited.truncated, true);
  const byColumn = await call(querySpreadsheetTool, { search_value: 'chile', column: 'City' }, file('csv'));
  t.equal(byColumn.match_count, 0);
  t.match(await codeOf(call(querySpreadsheetTool, { search_value: 'x', column: 'Nope' }, file('csv'))), /^VALIDATION_ERROR: Unknown column/);
});

t.test('extract_image_text: OCR words with confidence', async (t) => {
  const out = await call(extractImageTextTool, {}, file('png'));
  const r = out.ocr_results[0];
  for (const line of OCR_LINES) t.ok(r.text.includes(line), `${line} in ${JSON.stringify(r.text)}`);
  t.ok(r.confidence > 60 && r.confidence <= 100, `confidence ${r.confidence}`);
  t.ok(r.words.length >= OCR_LINES.join(' ').split(' ').length);
  t.ok(r.words.every((w: { confidence: number }) => w.confidence > 0));
  t.match(r.metadata, { format: 'png', width: 800 });
  t.equal(out.char_count, r.text.length);
});
