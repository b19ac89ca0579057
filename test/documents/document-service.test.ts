/**
 * DocumentService: caches, coalescing, cancellation, uploads, kind checks and the finishing steps
 * (URLs, language). Downloads come from a loopback server with the private-network opt-in.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { CacheRegistry } from '../../src/cache/cache-registry.ts';
import { loadConfig, type RawConfig } from '../../src/config.ts';
import { DocumentService, type DocumentServiceDeps } from '../../src/documents/document-service.ts';
import { toolError } from '../../src/errors.ts';
import { OcrPool } from '../../src/extractors/ocr/ocr-pool.ts';
import type { ExtractInput, ProcessedDocument } from '../../src/extractors/shared/types.ts';
import { startLocalServer, type LocalServer } from './fixtures/local-server.ts';
import { pollUntil } from '../poll.ts';
import { makeMinimalPdf, MINIMAL_PDF } from '../fixtures-gen/minimal-pdf.ts';
import { DOCX_FACTS, makeSampleDocx } from '../fixtures-gen/make-office-fixtures.ts';

// Generated once per file: a two-page PDF and a DOCX with known text.
const pdfBytes = makeMinimalPdf();
const pdfSha = createHash('sha256').update(pdfBytes).digest('hex');
let docxBytes: Buffer;
let server: LocalServer;
t.before(async () => {
  [docxBytes, server] = await Promise.all([makeSampleDocx(), startLocalServer()]);
});
t.teardown(() => server.close());

const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

function make(t: Test, deps: Partial<DocumentServiceDeps> = {}, config: Partial<RawConfig> = {}) {
  const caches = new CacheRegistry({ ttlMs: 60_000 });
  const ocr = new OcrPool({ size: 1, cacheDir: fs.mkdtempSync(path.join(os.tmpdir(), 'ocr-cache-')) });
  const service = new DocumentService({
    config: loadConfig({}, { ALLOW_PRIVATE_NETWORKS: true, ...config }),
    caches,
    ocr,
    download: { retryDelaysMs: [10] },
    ...deps,
  });
  t.teardown(async () => {
    await service.close();
    await ocr.close();
  });
  return { service, caches };
}

/** A PDF "extractor" that records its calls and takes a while, for coalescing tests. */
function countingPdf(ms = 50) {
  const calls: ExtractInput[] = [];
  const extractor = async (input: ExtractInput): Promise<ProcessedDocument> => {
    calls.push(input);
    await delay(ms);
    const content = '--- Page 1 ---\nThe quick brown fox jumps over the lazy dog. Details at https://example.com/spec.\n';
    return {
      kind: 'pdf',
      content,
      metadata: { page_count: 1 },
      tables: [],
      images: [],
      urls: [],
      pages: [{ number: 1, unit: 'page', start: 0, end: content.length }],
    };
  };
  return { calls, extractor };
}

const signal = () => AbortSignal.timeout(20_000);

t.test('10 concurrent loads of one URL: 1 download, 1 extraction, then cache hits', async (t) => {
  let inFlight = 0;
  server.route('/slow.pdf', async (_q, res) => {
    inFlight++;
    await delay(100);
    res.writeHead(200, { 'content-type': 'application/pdf' });
    res.end(pdfBytes);
  });
  const pdf = countingPdf();
  const { service, caches } = make(t, { extractors: { pdf: pdf.extractor } });
  const url = `${server.origin}/slow.pdf`;
  const results = await Promise.all(Array.from({ length: 10 }, () => service.load({ url }, { signal: signal() })));
  t.equal(server.hits.get('/slow.pdf'), 1, 'one request reached the server');
  t.equal(inFlight, 1);
  t.equal(pdf.calls.length, 1, 'one extraction');
  t.same(service.stats(), { downloads: 1, extractions: 1, downloads_in_flight: 0, extractions_in_flight: 0 });
  const keys = new Set(results.map((r) => r.key));
  t.equal(keys.size, 1);
  t.ok(results.every((r) => r.doc === results[0]!.doc), 'every caller got the same document');
  t.equal(results[0]!.key, `${createHash('sha256').update(url).digest('hex').slice(0, 16)}-${pdfSha.slice(0, 16)}`, 'sha256(url)[:16] - sha256(content)[:16]');
  t.equal(results[0]!.contentSha256, pdfSha);
  t.equal(results[0]!.source, url);

  const again = await service.load({ url }, { signal: signal() });
  t.equal(again.fromCache, true);
  t.equal(server.hits.get('/slow.pdf'), 1, 'no new request');
  t.equal(pdf.calls.length, 1, 'no new extraction');
  const [download, document] = caches.stats();
  t.equal(download!.hits, 1);
  t.equal(download!.entries, 1);
  t.equal(download!.bytes, pdfBytes.length);
  t.equal(document!.hits, 1);
  t.equal(document!.entries, 1);

  caches.clear();
  await service.load({ url }, { signal: signal() });
  t.equal(server.hits.get('/slow.pdf'), 2, 'after clearing, downloaded again');
  t.equal(pdf.calls.length, 2);
});

t.test('finishing: URLs, language and metadata are added to every document', async (t) => {
  server.route('/fox', (_q, res) => res.end(pdfBytes));
  const pdf = countingPdf(0);
  const { service } = make(t, { extractors: { pdf: pdf.extractor } });
  const { doc, type } = await service.load({ url: `${server.origin}/fox` }, { signal: signal() });
  t.equal(type.format, 'pdf', 'detected from the bytes of an extensionless URL');
  t.same(doc.urls, [
    {
      url: 'https://example.com/spec',
      type: 'navigation',
      context: '--- Page 1 --- The quick brown fox jumps over the lazy dog. Details at https://example.com/spec.',
      location: 'page 1',
    },
  ]);
  t.equal(doc.detected_language, 'en');
  t.equal(doc.detected_language_name, 'English');
  t.match(doc.metadata, { document_type: 'pdf', format: 'pdf', mime_type: 'application/pdf', file_size: pdfBytes.length, filename: 'fox', page_count: 1 });
  t.equal(pdf.calls[0]!.contentType, 'application/pdf');
});

t.test('one caller giving up does not cancel the others; all giving up cancels the work', async (t) => {
  // The origin holds each answer until the test has done its aborting (no race with a fixed delay).
  let release!: () => void;
  let gate = new Promise<void>((r) => (release = r));
  server.route('/slower.pdf', async (_q, res) => {
    await gate;
    if (!res.destroyed) res.end(pdfBytes);
  });
  const pdf = countingPdf(0);
  const { service } = make(t, { extractors: { pdf: pdf.extractor } });
  const url = `${server.origin}/slower.pdf`;
  const impatient = new AbortController();
  const loads = [
    service.load({ url }, { signal: impatient.signal }),
    service.load({ url }, { signal: signal() }),
    service.load({ url }, { signal: signal() }),
  ];
  await pollUntil(() => server.hits.get('/slower.pdf') === 1, 'the shared download reached the origin');
  impatient.abort();
  const first = await Promise.allSettled([loads[0]!]);
  release();
  const settled = [...first, ...(await Promise.allSettled(loads.slice(1)))];
  t.equal(settled[0]!.status, 'rejected');
  t.equal(((settled[0] as PromiseRejectedResult).reason as { code: string }).code, 'TIMEOUT');
  t.equal(settled[1]!.status, 'fulfilled');
  t.equal(settled[2]!.status, 'fulfilled');
  t.equal(server.hits.get('/slower.pdf'), 1);

  gate = new Promise<void>((r) => (release = r));
  const { service: s2 } = make(t, { extractors: { pdf: pdf.extractor } });
  const a = new AbortController();
  const b = new AbortController();
  const both = [s2.load({ url: `${url}?v=2` }, { signal: a.signal }), s2.load({ url: `${url}?v=2` }, { signal: b.signal })];
  await pollUntil(() => server.hits.get('/slower.pdf') === 2, 'the second download reached the origin');
  a.abort();
  b.abort();
  const res = await Promise.allSettled(both);
  release();
  t.same(res.map((r) => r.status), ['rejected', 'rejected']);
  t.equal(s2.stats().downloads_in_flight, 0, 'the abandoned download is gone');
  const fresh = await s2.load({ url: `${url}?v=2` }, { signal: signal() });
  t.equal(fresh.fromCache, false, 'a later caller starts afresh');
  t.equal(server.hits.get('/slower.pdf'), 3);
});

t.test('uploads are keyed by content hash', async (t) => {
  const pdf = countingPdf(0);
  const { service } = make(t, { extractors: { pdf: pdf.extractor } });
  const upload = { bytes: pdfBytes, filename: 'paper.pdf', contentType: 'application/pdf' };
  const first = await service.load({ upload }, { signal: signal() });
  t.equal(first.key, `upload-${pdfSha.slice(0, 16)}`);
  t.equal(first.source, 'upload:paper.pdf');
  const second = await service.load({ upload: { bytes: Buffer.from(pdfBytes) } }, { signal: signal() });
  t.equal(second.key, first.key);
  t.equal(second.fromCache, true);
  t.equal(pdf.calls.length, 1);
  const { service: small } = make(t, {}, { MAX_UPLOAD_BYTES: 1000 });
  t.equal(await small.load({ upload }, { signal: signal() }).catch((e) => e.code), 'PAYLOAD_TOO_LARGE');
});

t.test('expected kinds: wrong kind names what the file is; delimited text becomes CSV', async (t) => {
  const seen: string[] = [];
  const csv = async (input: ExtractInput): Promise<ProcessedDocument> => {
    seen.push(input.bytes.toString());
    return { kind: 'csv', content: 'a,b', metadata: {}, tables: [], images: [], urls: [], pages: [] };
  };
  const { service } = make(t, { extractors: { csv } });
  const err = await service.load({ upload: { bytes: docxBytes, filename: 'x.pdf' } }, { signal: signal() }, { expect: ['pdf'] }).catch((e) => e);
  t.equal(err.code, 'UNSUPPORTED_FORMAT');
  t.equal(err.message, 'Unsupported format for this tool: expected a PDF document, but the file is a Word document (DOCX)');
  const err2 = await service.load({ upload: { bytes: pdfBytes } }, { signal: signal() }, { expect: ['xlsx', 'xls'] }).catch((e) => e);
  t.match(err2.message, /expected an Excel workbook \(XLSX\) or a legacy Excel workbook \(XLS\), but the file is a PDF document/);

  const text = await service.load({ upload: { bytes: Buffer.from('a,b\n1,2\n'), contentType: 'text/plain' } }, { signal: signal() }, { expect: ['csv'] });
  t.equal(text.type.kind, 'csv');
  t.match(text.key, /:csv$/, 'cached apart from the plain-text reading');
  t.same(seen, ['a,b\n1,2\n']);
  const empty = await service.load({ upload: { bytes: Buffer.alloc(0) } }, { signal: signal() }, { expect: ['csv'] }).catch((e) => e);
  t.match(empty.message, /but the file is an empty file/);
});

t.test('extractor failures become coded errors', async (t) => {
  const { service } = make(t, {
    extractors: {
      pdf: async () => {
        throw new Error('bad xref table');
      },
      docx: async () => {
        throw toolError('PAYLOAD_TOO_LARGE', 'zip bomb');
      },
    },
  });
  const a = await service.load({ upload: { bytes: pdfBytes } }, { signal: signal() }).catch((e) => e);
  t.equal(a.code, 'PROCESSING_ERROR');
  t.equal(a.message, 'Could not read a PDF document: bad xref table');
  const b = await service.load({ upload: { bytes: docxBytes } }, { signal: signal() }).catch((e) => e);
  t.equal(b.code, 'PAYLOAD_TOO_LARGE');
  t.equal(service.stats().extractions_in_flight, 0);
});

t.test('download errors and refusals pass through with their codes', async (t) => {
  const { service } = make(t, {}, { ALLOW_PRIVATE_NETWORKS: false });
  t.equal(await service.load({ url: `${server.origin}/x.pdf` }, { signal: signal() }).catch((e) => e.code), 'URL_NOT_ALLOWED');
  t.equal(await service.load({ url: 'ftp://example.com/x' }, { signal: signal() }).catch((e) => e.code), 'URL_NOT_ALLOWED');
  const { service: open } = make(t);
  t.equal(await open.load({ url: `${server.origin}/missing.pdf` }, { signal: signal() }).catch((e) => e.code), 'DOWNLOAD_ERROR');
});

t.test('real extractors behind the service: a generated PDF and DOCX', async (t) => {
  server.route('/paper', (_q, res) => {
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    res.end(pdfBytes);
  });
  const { service } = make(t);
  const pdf = await service.load({ url: `${server.origin}/paper` }, { signal: signal() });
  t.equal(pdf.doc.kind, 'pdf');
  t.equal(pdf.type.format, 'pdf', 'detected from the bytes behind application/octet-stream');
  t.equal(pdf.doc.metadata.page_count, MINIMAL_PDF.pages.length);
  MINIMAL_PDF.pages.forEach((lines, i) => {
    t.ok(pdf.doc.content.includes(`--- Page ${i + 1} ---\n${lines[0]}`), `page ${i + 1} opens with its heading`);
    for (const line of lines) t.ok(pdf.doc.content.includes(line), line);
  });
  t.equal(pdf.doc.metadata.title, MINIMAL_PDF.title);
  t.equal(pdf.doc.metadata.author, MINIMAL_PDF.author);
  t.equal(pdf.doc.detected_language, 'en');
  const docx = await service.load({ upload: { bytes: docxBytes, filename: 'test.docx' } }, { signal: signal() });
  t.equal(docx.doc.kind, 'docx');
  t.ok(docx.doc.content.startsWith(`# ${DOCX_FACTS.heading1}\n\n${DOCX_FACTS.paragraph}`), docx.doc.content.slice(0, 120));
  t.ok(docx.doc.content.includes('| North marsh | 42 | 7 |'), 'the table row');
  t.equal(docx.doc.tables.length, 1);
  t.equal(docx.doc.detected_language, 'en');
  t.equal(docx.source, 'upload:test.docx');
});
