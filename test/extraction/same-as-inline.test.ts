/**
 * The pool changes where extraction runs, not what it returns: every generated format (OCR of an
 * image and of a scanned PDF included, through the OCR proxy) gives the same ProcessedDocument
 * pooled as inline, and coded errors keep their code and message.
 */
import t from 'tap';
import { CacheRegistry } from '../../src/cache/cache-registry.ts';
import { DocumentService } from '../../src/documents/document-service.ts';
import { ExtractionPool } from '../../src/extraction/extraction-pool.ts';
import { OcrPool } from '../../src/extractors/ocr/ocr-pool.ts';
import { makeScannedPdf } from '../fixtures-gen/make-pdf-fixtures.ts';
import { FIXTURE_NAMES, fixtureFiles, makeImage } from '../fixtures-gen/documents.ts';
import { tempDir, testConfig } from '../helper.ts';

const config = testConfig(t);
const ocr = new OcrPool({ size: 1, cacheDir: tempDir(t) });
const pool = new ExtractionPool({ concurrency: 2, memoryMb: 1024, budgetMb: 4096, queueMax: 8, ocr });
const inline = new DocumentService({ config, caches: new CacheRegistry({ ttlMs: 60_000 }), ocr });
const pooled = new DocumentService({ config, caches: new CacheRegistry({ ttlMs: 60_000 }), ocr, pool });
t.teardown(async () => {
  await pool.close();
  await ocr.close();
});

const files = await fixtureFiles();
const ctx = () => ({ signal: AbortSignal.timeout(240_000) }) as never;
const load = (service: DocumentService, bytes: Buffer, filename: string) => service.load({ upload: { bytes, filename } }, ctx());
/** Timings (`*_ms` metadata such as ocr_ms) differ run to run; everything else must not. */
const untimed = (doc: { metadata: Record<string, unknown> }) => ({
  ...doc,
  metadata: Object.fromEntries(Object.entries(doc.metadata).filter(([k]) => !k.endsWith('_ms'))),
});
const outcome = (p: Promise<{ doc: { metadata: Record<string, unknown> } }>) =>
  p.then((r) => ({ doc: untimed(r.doc) }), (e) => ({ code: e.code, message: e.message }));

for (const kind of Object.keys(files) as Array<keyof typeof files>) {
  t.test(`${kind}: pooled equals inline`, async (t) => {
    const a = await outcome(load(inline, files[kind], FIXTURE_NAMES[kind]));
    const b = await outcome(load(pooled, files[kind], FIXTURE_NAMES[kind]));
    t.same(b, a);
    if (kind === 'encrypted') t.equal((b as { code: string }).code, 'PROCESSING_ERROR');
    else t.ok((b as unknown as { doc: { content: string } }).doc.content.trim().length > 10, 'has content');
  });
}

t.test('OCR runs through the proxy: the image and a scanned PDF are read in the child', async (t) => {
  const before = pool.stats().ocr_calls as number;
  // New bytes: the fixtures above are in the document cache now.
  const image = await load(pooled, makeImage('png', 'PROXY CHECK 4242'), 'proxy.png');
  t.match(image.doc.content, /PROXY CHECK 4242/);
  const scan = await makeScannedPdf(0, 1, { pageHeight: 300 });
  const a = await load(inline, scan, 'scan.pdf');
  const b = await load(pooled, scan, 'scan.pdf');
  t.same(untimed(b.doc), untimed(a.doc));
  t.same(b.doc.metadata.ocr_pages, [1]);
  t.ok((pool.stats().ocr_calls as number) > before + 1, `OCR calls crossed IPC (${pool.stats().ocr_calls})`);
});

t.test('a CSV whose rows cross in several slices (ROWS_PER_MESSAGE) comes back whole and in order', async (t) => {
  const lines = ['id,name,amount'];
  for (let i = 0; i < 7_001; i++) lines.push(`${i},item ${i},${(i * 37) % 1000}`);
  const csv = Buffer.from(lines.join('\n') + '\n');
  const a = await load(inline, csv, 'slices.csv');
  const b = await load(pooled, csv, 'slices.csv');
  t.same(untimed(b.doc), untimed(a.doc));
  const rows = b.doc.tables[0]!.rows!;
  t.equal(rows.length, 7_001);
  t.same(rows[6_999], a.doc.tables[0]!.rows![6_999]);
  t.same(b.doc.tables[0]!.row_numbers!.slice(-2), a.doc.tables[0]!.row_numbers!.slice(-2));
});

t.test('a text over CONTENT_CHARS_PER_MESSAGE crosses in slices and comes back whole and in order', async (t) => {
  const { CONTENT_CHARS_PER_MESSAGE } = await import('../../src/extraction/protocol.ts');
  const lines: string[] = [];
  let size = 0;
  // Numbered lines (and a non-ASCII one) so a slice lost, doubled or out of order changes the text.
  for (let i = 0; size < 2.5 * CONTENT_CHARS_PER_MESSAGE; i++) {
    const line = i % 1000 === 0 ? `Ligne ${i} : l'été à Zürich, 港の朝.\n` : `Line ${i} of the harbour log.\n`;
    lines.push(line);
    size += line.length;
  }
  const text = Buffer.from(lines.join(''));
  const a = await load(inline, text, 'slices.txt');
  const b = await load(pooled, text, 'slices.txt');
  t.ok(a.doc.content.length > 2 * CONTENT_CHARS_PER_MESSAGE, `${a.doc.content.length} chars: three slices at least`);
  t.equal(b.doc.content.length, a.doc.content.length);
  t.ok(b.doc.content === a.doc.content, 'the same text, character for character');
  t.same(untimed(b.doc), untimed(a.doc));
});

t.test('an input over FILE_HANDOFF_BYTES reaches the child through a file and gives the same document', async (t) => {
  const { FILE_HANDOFF_BYTES } = await import('../../src/extraction/extraction-pool.ts');
  const line = 'The harbour cranes unload ships at dawn while gulls circle the quay.\n';
  const text = Buffer.from(line.repeat(Math.ceil((FILE_HANDOFF_BYTES + 1024) / line.length)));
  t.ok(text.length > FILE_HANDOFF_BYTES);
  const a = await load(inline, text, 'big.txt');
  const b = await load(pooled, text, 'big.txt');
  t.same(untimed(b.doc), untimed(a.doc));
  const fs = await import('node:fs');
  const os = await import('node:os');
  t.same(fs.readdirSync(os.tmpdir()).filter((f) => f.startsWith(`rag-extract-${process.pid}-`)), [], 'the hand-off file is removed after the job');
});
