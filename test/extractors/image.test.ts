/**
 * Image OCR on generated images: every supported container (PNG, JPEG, WebP, GIF, BMP, TIFF)
 * reads the same exact text; sideways images are turned upright; a photo without text yields
 * nothing; unknown, damaged and oversized images are coded errors. One pool for the whole file.
 * The corpus photos and scans are in test/corpus/extractors/image.test.ts.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { extractImage } from '../../src/extractors/image/image.ts';
import { readImageInfo } from '../../src/extractors/shared/image-info.ts';
import { OcrPool } from '../../src/extractors/ocr/ocr-pool.ts';
import { makePhotoImage, makeTextImage, makeTextImageAs, type FixtureImageFormat } from '../fixtures-gen/make-pdf-fixtures.ts';

const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'image-test-'));
const ocr = new OcrPool({ size: 2, cacheDir });
t.teardown(async () => {
  await ocr.close();
  fs.rmSync(cacheDir, { recursive: true, force: true });
});

const run = (bytes: Buffer, signal: AbortSignal = AbortSignal.timeout(120_000)) => extractImage({ bytes, signal }, { ocr });
const FORMATS = ['png', 'jpeg', 'webp', 'gif', 'bmp', 'tiff'] satisfies FixtureImageFormat[];
// Generated once: the OCR test and the header test read the same images.
const formatImages = Promise.all(FORMATS.map((f) => makeTextImageAs(f)));

t.test('each container format reads the exact text with word confidences', async (t) => {
  // Both workers at once: six images, at most two workers.
  const docs = await Promise.all((await formatImages).map((bytes) => run(bytes)));
  for (const [i, format] of FORMATS.entries()) {
    const doc = docs[i];
    t.equal(doc.kind, 'image');
    t.equal(doc.content, 'FORMAT CHECK 2024', `${format} content`);
    t.match(doc.metadata, { format, width: 800, height: 152 });
    t.same(doc.ocr!.words.map((w) => w.text), ['FORMAT', 'CHECK', '2024']);
    t.ok(doc.ocr!.confidence > 80 && doc.ocr!.confidence <= 100, `${format} confidence ${doc.ocr!.confidence}`);
    t.equal(doc.ocr!.text, doc.content);
  }
  t.ok(ocr.stats().started <= 2, 'six images, at most two workers');
});

t.test('a sideways image is turned upright', async (t) => {
  const { createCanvas, loadImage } = await import('@napi-rs/canvas');
  const img = await loadImage(await makeTextImage(['SIDEWAYS TEXT READS FINE', 'second line of the note'], { width: 1000, fontSize: 40 }));
  const c = createCanvas(img.height, img.width);
  const ctx = c.getContext('2d');
  ctx.translate(img.height, 0);
  ctx.rotate(Math.PI / 2);
  ctx.drawImage(img, 0, 0);
  // encodeSync: an async encode of a canvas that nothing references afterwards can crash @napi-rs/canvas 0.1.x.
  const doc = await run(c.encodeSync('png'));
  // Automatic page segmentation reads vertical lines itself; turning the image is then not needed.
  t.match(doc.content, /SIDEWAYS TEXT READS FINE\s+second line of the note/);
  t.ok(doc.metadata.ocr_rotation === undefined || doc.metadata.ocr_rotation === 270, `rotation ${doc.metadata.ocr_rotation}`);
});

t.test('a photo without any text yields empty content, not noise', async (t) => {
  // An upright reading without a single word is final: no orientation detection, no turned re-reads.
  const asked = { osd: 0, reads: 0 };
  const detect = ocr.detectOrientation.bind(ocr);
  const recognize = ocr.recognize.bind(ocr);
  ocr.detectOrientation = (...args) => (asked.osd++, detect(...args));
  ocr.recognize = (...args) => (asked.reads++, recognize(...args));
  t.teardown(() => {
    ocr.detectOrientation = detect;
    ocr.recognize = recognize;
  });
  const doc = await run(makePhotoImage(480, 360));
  t.same(asked, { osd: 0, reads: 1 });
  t.equal(doc.content, '');
  t.same(doc.ocr, { text: '', confidence: 0, words: [] });
  t.match(doc.metadata, { format: 'jpeg', width: 480, height: 360, word_count: 0, ocr_confidence: 0 });
});

t.test('a small image with tiny text is read enlarged, not dropped as noise', async (t) => {
  // 7 px lines in a 480x360 image read natively as a few low-confidence words (noise) and in full at 3x.
  const { createCanvas } = await import('@napi-rs/canvas');
  const c = createCanvas(480, 360);
  const ctx = c.getContext('2d');
  ctx.fillStyle = '#ffffff';
  ctx.fillRect(0, 0, 480, 360);
  ctx.fillStyle = '#000000';
  ctx.font = '7px sans-serif';
  const lines = ['The quick brown fox jumps over the lazy dog near the river bank.', 'Invoice number 2024-118 total due 1,250.00 EUR by March 3rd.', 'Pack my box with five dozen liquor jugs, said the old sailor.'];
  lines.forEach((l, i) => ctx.fillText(l, 10, 30 + i * 14));
  const doc = await run(c.encodeSync('png'));
  const words = new Set(doc.content.toLowerCase().match(/[a-z0-9]+/g) ?? []);
  const expected = lines.join(' ').toLowerCase().match(/[a-z]{4,}/g)!;
  const found = expected.filter((w) => words.has(w));
  t.ok(found.length >= expected.length * 0.8, `${found.length} of ${expected.length} words: ${doc.content}`);
});

t.test('unknown, damaged and oversized images are coded errors', async (t) => {
  await t.rejects(run(Buffer.from('hello, I am text')), { code: 'UNSUPPORTED_FORMAT' });
  await t.rejects(run(Buffer.from('%PDF-1.7 not an image')), { code: 'UNSUPPORTED_FORMAT' });
  const png = await makeTextImage(['TRUNCATED']);
  await t.rejects(run(png.subarray(0, 60)), { code: 'PROCESSING_ERROR' });
  const huge = Buffer.from(png);
  huge.writeUInt32BE(100_000, 16);
  huge.writeUInt32BE(100_000, 20);
  await t.rejects(run(huge), { code: 'PAYLOAD_TOO_LARGE' });
  const badTiff = Buffer.concat([Buffer.from('II*\0', 'latin1'), Buffer.alloc(64)]);
  await t.rejects(run(badTiff), { code: 'PROCESSING_ERROR' });
  const ac = new AbortController();
  ac.abort();
  await t.rejects(run(png, ac.signal), { code: 'TIMEOUT' });
});

t.test('truncated and corrupted files of every format never crash: content or a coded error', async (t) => {
  const codes = new Set(['PROCESSING_ERROR', 'UNSUPPORTED_FORMAT']);
  let seed = 7;
  const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const images = await formatImages;
  for (const format of ['png', 'jpeg', 'webp', 'gif', 'bmp'] satisfies FixtureImageFormat[]) {
    const full = images[FORMATS.indexOf(format)];
    const variants = [8, 30, 60, 400].map((n) => full.subarray(0, n));
    for (let i = 0; i < 3; i++) {
      const b = Buffer.from(full);
      for (let j = 0; j < 3; j++) b[8 + Math.floor(rnd() * 300)] = Math.floor(rnd() * 256);
      variants.push(b);
    }
    for (const [i, bytes] of variants.entries()) {
      const outcome = await run(bytes).then(
        (doc) => (typeof doc.content === 'string' ? 'ok' : 'bad'),
        (err) => (codes.has(err?.code) ? 'coded' : `uncoded ${err}`),
      );
      t.ok(outcome === 'ok' || outcome === 'coded', `${format} variant ${i}: ${outcome}`);
    }
  }
});

t.test('header parsing gives format and size without decoding', async (t) => {
  const images = await formatImages;
  for (const [i, format] of FORMATS.entries()) t.match(readImageInfo(images[i]), { format, width: 800, height: 152 }, format);
  t.equal(readImageInfo(Buffer.from('nope')), null);
});
