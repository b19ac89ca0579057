/**
 * Scan pages whose one full-page image is a JPEG are decoded from the file's own JPEG bytes to the
 * OCR resolution (pdf.js never decodes them); pages with anything else on them are left to pdf.js;
 * the render memory budget bounds the bytes of pages in flight.
 */
import t from 'tap';
import { PDFDocument, StandardFonts, degrees } from 'pdf-lib';
import { createCanvas } from '@napi-rs/canvas';
import { makeScanPdf, scanPageJpeg } from '../fixtures-gen/make-scan-fixtures.ts';
import { loadPdf } from '../../src/extractors/pdf/pdf-render.ts';
import { pageImageCanvas } from '../../src/extractors/pdf/pdf-page-image.ts';
import { RawPdf } from '../../src/extractors/pdf/pdf-raw-objects.ts';
import { jpegFrame, pageScanJpeg, scanJpegCanvas, scanJpegImage, type ScanJpeg } from '../../src/extractors/pdf/pdf-scan-jpeg.ts';
import { RenderMemoryBudget } from '../../src/extractors/pdf/ocr-render-budget.ts';

const signal = () => AbortSignal.timeout(60_000);

function greyOf(canvas: { width: number; height: number; getContext(k: '2d'): { getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray } } }): Uint8ClampedArray {
  return canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
}

t.test('a 600-dpi JPEG scan page is found in the file and decoded at 300 dpi like the pdf.js path', async (t) => {
  const { pdf } = await makeScanPdf(1);
  // Object streams (pdf-lib's default) hide the page dictionary in a compressed stream.
  const withoutObjectStreams = Buffer.from(await (await PDFDocument.load(pdf)).save({ useObjectStreams: false }));
  let first: ScanJpeg | null = null;
  for (const useObjectStreams of [true, false]) {
    const bytes = useObjectStreams ? pdf : withoutObjectStreams;
    const { doc } = await loadPdf(bytes, signal());
    t.teardown(() => doc.destroy());
    const page = await doc.getPage(1);
    const scan = pageScanJpeg(new RawPdf(bytes), page);
    t.ok(scan, `found (object streams: ${useObjectStreams})`);
    t.match(scan, { width: 5100, height: 6600, x: 0, y: 0, placedWidth: 612, placedHeight: 792 });
    t.same(jpegFrame(scan!.jpeg), { width: 5100, height: 6600, components: 3 }, 'the JPEG bytes as embedded');
    if (first) {
      // Found without object streams: the very bytes and placement found through the object
      // stream, so the decoding checks below would run again on identical input.
      const { jpeg, ...placement } = scan!;
      const { jpeg: firstJpeg, ...firstPlacement } = first;
      t.ok(Buffer.from(jpeg).equals(Buffer.from(firstJpeg)), 'the same JPEG bytes as found through the object stream');
      t.same(placement, firstPlacement, 'the same size and placement');
      continue;
    }
    first = scan;

    for (const decoder of ['auto', 'canvas'] as const) {
      const canvas = await scanJpegCanvas(scan!, page, { decoder });
      t.ok(canvas, `decoded (${decoder})`);
      t.same([canvas!.width, canvas!.height], [2550, 3300], 'OCR-sized');
      const px = greyOf(canvas!);
      let dark = 0;
      for (let i = 0; i < px.length; i += 4) if (px[i]! < 128) dark++;
      t.ok(dark > 10_000 && dark < px.length / 4 / 5, `the text is drawn (${dark} dark pixels)`);
      if (useObjectStreams && decoder === 'auto') {
        // Same picture as pdf.js's decoded image box-filtered down (the other path).
        const reference = await pageImageCanvas(await doc.getPage(1));
        const ref = greyOf(reference!);
        let diff = 0;
        for (let i = 0; i < px.length; i += 4) diff += Math.abs(px[i]! - ref[i]!);
        t.ok(diff / (px.length / 4) < 6, `mean grey difference to the pdf.js path ${(diff / (px.length / 4)).toFixed(2)}`);
        // The OCR engine gets the same picture as an 8-bit grey PGM: the canvas's pixels exactly.
        const { greyImage } = (await scanJpegImage(scan!, page))!;
        t.ok(greyImage, 'a grey image for the engine');
        const header = 'P5\n2550 3300\n255\n';
        t.equal(greyImage!.subarray(0, header.length).toString('latin1'), header, '2550x3300, 8-bit grey (PGM)');
        t.equal(greyImage!.length, header.length + 2550 * 3300, 'one byte a pixel');
        let same = 0;
        for (let i = 0, j = header.length; i < px.length; i += 4, j++) if (greyImage![j] === px[i]) same++;
        t.equal(same, 2550 * 3300, 'every pixel as on the canvas');
      }
    }
  }
});

t.test('pages with anything besides one upright full-page JPEG are left to pdf.js', async (t) => {
  const jpeg = scanPageJpeg(1, 150);
  const make = async (draw: (doc: PDFDocument, page: ReturnType<PDFDocument['addPage']>) => Promise<void>) => {
    const doc = await PDFDocument.create();
    await draw(doc, doc.addPage([612, 792]));
    const bytes = Buffer.from(await doc.save());
    const { doc: pdf } = await loadPdf(bytes, signal());
    t.teardown(() => pdf.destroy());
    return pageScanJpeg(new RawPdf(bytes), await pdf.getPage(1));
  };
  t.ok(await make(async (d, p) => p.drawImage(await d.embedJpg(jpeg), { x: 0, y: 0, width: 612, height: 792 })), 'control: a plain scan page is taken');
  t.equal(
    await make(async (d, p) => {
      p.drawImage(await d.embedJpg(jpeg), { x: 0, y: 0, width: 612, height: 792 });
      p.drawText('caption', { x: 20, y: 20, size: 10, font: await d.embedFont(StandardFonts.Helvetica) });
    }),
    null,
    'text beside the image',
  );
  t.equal(await make(async (d, p) => p.drawImage(await d.embedJpg(jpeg), { x: 0, y: 0, width: 300, height: 400 })), null, 'an image covering part of the page');
  t.equal(await make(async (d, p) => p.drawImage(await d.embedJpg(jpeg), { x: 612, y: 0, width: 792, height: 612, rotate: degrees(90) })), null, 'a rotated placement');
  t.equal(
    await make(async (d, p) => {
      p.drawImage(await d.embedJpg(jpeg), { x: 0, y: 0, width: 612, height: 792 });
      p.drawImage(await d.embedJpg(jpeg), { x: 0, y: 0, width: 612, height: 792 });
    }),
    null,
    'two images',
  );
  const png = createCanvas(1275, 1650).encodeSync('png');
  t.equal(await make(async (d, p) => p.drawImage(await d.embedPng(png), { x: 0, y: 0, width: 612, height: 792 })), null, 'a PNG (Flate) image');
  t.equal(
    await make(async (d, p) => {
      p.setRotation(degrees(90));
      p.drawImage(await d.embedJpg(jpeg), { x: 0, y: 0, width: 612, height: 792 });
    }),
    null,
    'a page with /Rotate',
  );
});

t.test('the render memory budget bounds the bytes of pages in flight', async (t) => {
  const budget = new RenderMemoryBudget(100);
  const order: string[] = [];
  const a = await budget.acquire(60);
  const bPromise = budget.acquire(60).then((l) => (order.push('b'), l));
  const cPromise = budget.acquire(10).then((l) => (order.push('c'), l));
  await new Promise((r) => setImmediate(r));
  t.same(order, [], 'b does not fit beside a, and c waits its turn behind b');
  a.shrink(30);
  await new Promise((r) => setImmediate(r));
  t.same(order, ['b', 'c'], 'once a holds only its canvas, b and c fit');
  t.equal(budget.active, 3);
  const b = await bPromise;
  const c = await cPromise;
  const bigPromise = budget.acquire(500).then((l) => (order.push('big'), l));
  a.release();
  b.release();
  await new Promise((r) => setImmediate(r));
  t.same(order, ['b', 'c'], 'a page larger than the budget waits for the others');
  c.release();
  c.release();
  const big = await bigPromise;
  t.equal(budget.active, 1, 'and then runs alone (a second release is a no-op)');
  big.release();
  t.equal(budget.active, 0);
});
