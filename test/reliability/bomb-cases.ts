/**
 * The resource-bomb rows: every kind in the table, built when its row runs so a row that
 * is not selected costs nothing. Files go up as raw-body uploads to process_document unless the
 * row is about another entry point (retrieve_chunks by URL, JSON bodies, multipart framing).
 */
import * as B from './bombs.ts';
import { json, processedFlags, retrievedFlags, upload, type Case } from './cases.ts';
import type { Origin } from './origin.ts';

const PROCESS = '/v1/documents/process';
const RETRIEVE = '/v1/documents/retrieve';
const DETECT = '/v1/language/detect';
const G = 'bomb';

const doc = (input: string, name: string, make: () => Buffer | Promise<Buffer>, legit = true): Case => ({
  group: G,
  input,
  legit,
  check200: processedFlags,
  request: async () => upload(PROCESS, await make(), name),
});

export function bombCases(origin: Origin): Case[] {
  return [
    doc('PDF, Type1/TrueType font stream marked /JBIG2Decode', 'font.pdf', B.pdfJbig2Font),
    doc('PDF, one 50,000 x 50,000 image (Flate, ~2.3 GB inflated)', 'image.pdf', B.pdfHugeImage),
    doc('PDF, 100,000 pages', 'pages.pdf', () => B.pdfManyPages()),
    doc('HTML, 300,000 links', 'links.html', () => B.htmlManyLinks()),
    doc('HTML, 8,000 unclosed nested <a>', 'anchors.html', () => B.htmlUnclosedAnchors()),
    doc('HTML, <div> nested 1e5 deep', 'deep.html', () => B.htmlDeep()),
    doc('CSV, one 120 KB line of abc,def,', 'line.csv', () => B.csvLongLine()),
    doc('CSV, 1e6 columns', 'columns.csv', () => B.csvManyColumns()),
    doc('CSV, 40 MB unterminated quote', 'quote.csv', () => B.csvUnterminatedQuote()),
    doc('DOCX inflating to 280 MB (ratio ~80)', 'big.docx', () => B.docxLarge()),
    (() => {
      let size = 0;
      return {
        group: G,
        input: '95 MB text file through retrieve_chunks (URL)',
        legit: true,
        check200: retrievedFlags,
        get bytes() {
          return size;
        },
        request: () => {
          const bytes = B.textLarge();
          size = bytes.byteLength;
          const url = origin.add('big.txt', { bytes, contentType: 'text/plain' });
          return json(RETRIEVE, { document_url: url, query: 'zeppelin over the lighthouse', top_k: 3 });
        },
      } satisfies Case;
    })(),
    { group: G, input: 'JSON body nested 1e5 deep (REST)', request: () => json(DETECT, B.jsonDeep()) },
    { group: G, input: 'JSON-RPC nested 1e5 deep (/mcp)', request: () => ({ ...json('/mcp', B.mcpJsonDeep()), headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' } }) },
    {
      group: G,
      input: 'multipart without boundary',
      request: () => ({ path: PROCESS, headers: { 'content-type': 'multipart/form-data' }, body: B.multipartTruncated() }),
    },
    {
      group: G,
      input: 'multipart truncated (no closing boundary)',
      request: () => ({ path: PROCESS, headers: { 'content-type': `multipart/form-data; boundary=${B.MULTIPART_BOUNDARY}` }, body: B.multipartTruncated() }),
    },
    {
      group: G,
      input: 'multipart garbage (64 KB random)',
      request: () => ({ path: PROCESS, headers: { 'content-type': `multipart/form-data; boundary=${B.MULTIPART_BOUNDARY}` }, body: B.garbage() }),
    },
    doc('ZIP bomb: 10 GiB in one DOCX part declared 1 MiB', 'lying.docx', () => B.makeLyingBomb(10), false),
    doc('ZIP bomb: 10 x 1 GiB parts, honest headers', 'honest.docx', () => B.makeHonestBomb(10), false),
    doc('ZIP bomb: 1,000 entries sharing one stream', 'overlap.xlsx', () => B.makeOverlappingZip(1000), false),
    doc('ZIP, 10,001 entries (bare)', 'many.zip', () => B.makeManyEntriesZip(10_001), false),
    doc('DOCX, 10,001 entries', 'many.docx', () => B.officeManyEntries('docx'), false),
    doc('XLSX, 10,001 entries', 'many.xlsx', () => B.officeManyEntries('xlsx'), false),
    doc('gzip bomb upload (1 GiB of zeros)', 'zeros.txt.gz', () => B.gzipZeros(1024), false),
    doc('PNG header 50,000 x 50,000', 'huge.png', () => B.pngHuge(), false),
    doc('JPEG header 50,000 x 50,000', 'huge.jpg', () => B.jpegHuge(), false),
  ];
}
