/**
 * The eight document tools called through their handlers, on real corpus files (uploads and a
 * loopback URL), with every result checked against the tool's own output schema. The
 * self-contained test/documents/tools.test.ts runs the same tools on generated files.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import t from 'tap';
import { FULL_ACCESS } from '../../../src/auth/principal.ts';
import Value from 'typebox/value';
import { CacheRegistry } from '../../../src/cache/cache-registry.ts';
import { loadConfig } from '../../../src/config.ts';
import { DocumentService } from '../../../src/documents/document-service.ts';
import { OcrPool } from '../../../src/extractors/ocr/ocr-pool.ts';
import type { UploadedFile } from '../../../src/call-context.ts';
import type { AnyTool, ToolContext } from '../../../src/tools/define-tool.ts';
import { extractCsvTablesTool } from '../../../src/tools/extract-csv-tables.ts';
import { extractDocxTextTool } from '../../../src/tools/extract-docx-text.ts';
import { extractImageTextTool } from '../../../src/tools/extract-image-text.ts';
import { extractPdfTextTool } from '../../../src/tools/extract-pdf-text.ts';
import { extractPptxTextTool } from '../../../src/tools/extract-pptx-text.ts';
import { extractXlsxTablesTool } from '../../../src/tools/extract-xlsx-tables.ts';
import { processDocumentTool } from '../../../src/tools/process-document.ts';
import { querySpreadsheetTool } from '../../../src/tools/query-spreadsheet.ts';
import type { Services } from '../../../src/services.ts';
import { startLocalServer, type LocalServer } from '../../documents/fixtures/local-server.ts';
import { readCorpus, readCorpusText } from '../data-dirs.ts';

const file = (rel: string): UploadedFile => ({ bytes: readCorpus(rel), filename: path.basename(rel) });
const expected = (rel: string) => JSON.parse(readCorpusText(`${rel}.expected.json`)) as { must_include: string[] };

const config = loadConfig({}, { ALLOW_PRIVATE_NETWORKS: true });
const caches = new CacheRegistry({ ttlMs: 60_000 });
const ocr = new OcrPool({ size: 1, cacheDir: fs.mkdtempSync(path.join(os.tmpdir(), 'ocr-cache-')) });
const documents = new DocumentService({ config, caches, ocr, download: { retryDelaysMs: [10] } });
const services = { config, caches, documents, startedAt: Date.now(), diskCaches: [], healthReporters: [], close: async () => {} } as unknown as Services;
const log = pino({ level: 'silent' });
let server: LocalServer;
t.before(async () => {
  server = await startLocalServer();
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
  server.route('/papers/autogen', (_q, res) => {
    res.writeHead(200, { 'content-type': 'application/pdf' });
    res.end(file('pdf/test.pdf').bytes);
  });
  const full = await call(processDocumentTool, { document_url: `${server.origin}/papers/autogen` });
  t.equal(full.document_type, 'pdf');
  t.match(full.content, /--- Page 1 ---/);
  for (const s of expected('pdf/test.pdf').must_include) t.ok(full.content.includes(s), `contains ${JSON.stringify(s).slice(0, 60)}`);
  t.equal(full.truncated, false);
  t.equal(full.content_length, full.content.length);
  t.equal(full.detected_language, 'en');
  t.equal(full.source, `${server.origin}/papers/autogen`);
  t.equal(full.metadata.page_count, 1);

  const short = await call(processDocumentTool, { document_url: `${server.origin}/papers/autogen`, max_chars: 120 });
  t.equal(short.content.length, 120);
  t.equal(short.truncated, true);
  t.equal(short.content_length, full.content_length);
  t.equal(server.hits.get('/papers/autogen'), 1, 'the second call came from the cache');
});

t.test('process_document: DOCX, HTML and text uploads', async (t) => {
  const docx = await call(processDocumentTool, {}, file('docx/test.docx'));
  t.equal(docx.document_type, 'docx');
  t.match(docx.content, /# Abstract/);
  t.ok(docx.table_count >= 1);
  for (const table of docx.tables) t.ok(table.content.length <= 5000);
  const html = await call(processDocumentTool, {}, file('html/wiki_duck.html'));
  t.equal(html.document_type, 'html');
  t.ok(html.urls.length > 10, `${html.urls.length} URLs`);
  t.ok(html.urls.every((u: { url: string }) => /^(https?:\/\/|www\.)/i.test(u.url)));
  t.ok(new Set(html.urls.map((u: { url: string }) => u.url)).size === html.urls.length, 'de-duplicated');
  const text = await call(processDocumentTool, {}, file('txt/UDHR_first_article_all.txt'));
  t.equal(text.document_type, 'text');
  t.ok(text.content.length > 100);
});

t.test('extract_pdf_text / extract_docx_text / extract_pptx_text', async (t) => {
  const pdf = await call(extractPdfTextTool, {}, file('pdf/REPAIR-2022-INV-001_multipage.pdf'));
  t.equal(pdf.page_count, 3);
  t.same(pdf.ocr_pages, []);
  t.match(pdf.text, /--- Page 3 ---/);
  t.equal(pdf.char_count, pdf.text.length);

  const docx = await call(extractDocxTextTool, {}, file('docx/test.docx'));
  for (const s of expected('docx/test.docx').must_include.filter((s) => !s.startsWith('data:'))) t.ok(docx.text.includes(s), s);
  t.ok(docx.table_count >= 1);

  const pptx = await call(extractPptxTextTool, {}, file('pptx/test.pptx'));
  t.ok(pptx.slide_count >= 1);
  t.match(pptx.text, /--- Slide 1 ---/);
  for (const s of ['2cdda5c8-e50e-4db4-b5f0-9722a649f455', 'AutoGen: Enabling Next-Gen LLM Applications via Multi-Agent Conversation']) t.ok(pptx.text.includes(s), s);
});

t.test('extract tools refuse the wrong kind, naming what the file is', async (t) => {
  t.equal(
    await codeOf(call(extractPdfTextTool, {}, file('docx/test.docx'))),
    'UNSUPPORTED_FORMAT: Unsupported format for this tool: expected a PDF document, but the file is a Word document (DOCX)',
  );
  t.match(await codeOf(call(extractDocxTextTool, {}, file('pdf/test.pdf'))), /^UNSUPPORTED_FORMAT: .*but the file is a PDF document$/);
  t.match(await codeOf(call(extractPptxTextTool, {}, file('xlsx/test.xlsx'))), /but the file is an Excel workbook \(XLSX\)$/);
  t.match(await codeOf(call(extractXlsxTablesTool, {}, file('csv/csv-semicolon.csv'))), /but the file is a CSV\/TSV table$/);
  t.match(await codeOf(call(extractCsvTablesTool, {}, file('png/english-and-korean.png'))), /but the file is a PNG image$/);
  t.match(await codeOf(call(extractImageTextTool, {}, file('pdf/test.pdf'))), /expected an image .* but the file is a PDF document$/);
  t.match(await codeOf(call(querySpreadsheetTool, { search_value: 'x' }, file('docx/test.docx'))), /^UNSUPPORTED_FORMAT/);
  t.match(await codeOf(call(processDocumentTool, {})), /^VALIDATION_ERROR/, 'neither URL nor upload');
});

t.test('extract_xlsx_tables on XLSX and XLS; extract_csv_tables', async (t) => {
  for (const rel of ['xlsx/test.xlsx', 'xls/test.xls']) {
    const out = await call(extractXlsxTablesTool, {}, file(rel));
    t.ok(out.table_count >= 2, `${rel}: ${out.table_count} tables`);
    const all = out.tables.map((x: { content: string }) => x.content).join('\n');
    for (const s of ['6ff4173b-42a5-4784-9b19-f49caff4d93d', 'affc7dad-52dc-4b98-9b5d-51e65d8a8ad0']) t.ok(all.includes(s), `${rel}: ${s}`);
    for (const table of out.tables) {
      t.ok(table.content.length <= 5000);
      t.equal(table.table_type, 'spreadsheet');
      t.match(table.location, /^sheet:/);
    }
  }
  const csv = await call(extractCsvTablesTool, {}, file('csv/csv-semicolon.csv'));
  t.equal(csv.table_count, 1);
  t.equal(csv.tables[0].metadata.delimiter, 'semicolon');
  t.match(csv.tables[0].content, /Dominguez;Mcmillan and Donovan/);
  // Delimited text named .txt is still a table to the CSV tool.
  const txt = await call(extractCsvTablesTool, {}, { bytes: Buffer.from('name,qty\napple,3\npear,5\n'), filename: 'list.txt' });
  t.equal(txt.table_count, 1);
  t.equal(txt.tables[0].metadata.rows, 2);
});

t.test('query_spreadsheet over all rows of XLSX and CSV', async (t) => {
  const x = await call(querySpreadsheetTool, { search_value: '6FF4173B' }, file('xlsx/test.xlsx'));
  t.ok(x.match_count >= 1);
  t.ok(x.sheets_searched.length >= 1);
  t.ok(JSON.stringify(x.matches[0].row).toLowerCase().includes('6ff4173b'));

  const c = await call(querySpreadsheetTool, { search_value: 'chile' }, file('csv/csv-semicolon.csv'));
  t.equal(c.match_count, 1);
  t.equal(c.matches[0].row.Country, 'Chile');
  t.equal(c.matches[0].row['First Name'], 'Sheryl');
  t.equal(c.matches[0].row_number, 2);
  t.equal(c.document_type, 'csv');

  const limited = await call(querySpreadsheetTool, { search_value: '.com', limit: 2 }, file('csv/csv-semicolon.csv'));
  t.equal(limited.matches.length, 2);
  t.ok(limited.match_count > 2);
  t.equal(limited.truncated, true);
  const byColumn = await call(querySpreadsheetTool, { search_value: 'chile', column: 'City' }, file('csv/csv-semicolon.csv'));
  t.equal(byColumn.match_count, 0);
  t.match(await codeOf(call(querySpreadsheetTool, { search_value: 'x', column: 'Nope' }, file('csv/csv-semicolon.csv'))), /^VALIDATION_ERROR: Unknown column/);
});

t.test('extract_image_text: OCR words with confidence', async (t) => {
  const out = await call(extractImageTextTool, {}, file('png/english-and-korean.png'));
  const r = out.ocr_results[0];
  t.ok(r.text.length > 0, r.text.slice(0, 80));
  t.ok(r.confidence > 0 && r.confidence <= 100);
  t.ok(r.words.length > 0);
  t.ok(r.words.every((w: { confidence: number }) => w.confidence > 0));
  t.equal(r.metadata.format, 'png');
  t.equal(out.char_count, r.text.length);
});
