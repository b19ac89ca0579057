/**
 * decodeWithSharp (src/extractors/image/image-decode.ts): the pixels of a client's image on a
 * canvas, exactly as encoded, or null where the engine's decoder must take over; and a text on a
 * transparent background reads through extractImage.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { createCanvas } from '@napi-rs/canvas';
import { decodeWithSharp, SHARP_DECODE_MAX_PIXELS } from '../../src/extractors/image/image-decode.ts';
import { extractImage } from '../../src/extractors/image/image.ts';
import { readImageInfo, type ImageInfo } from '../../src/extractors/shared/image-info.ts';
import { OcrPool } from '../../src/extractors/ocr/ocr-pool.ts';
import { makeTextImageAs } from '../fixtures-gen/make-pdf-fixtures.ts';

/** A 40x30 RGBA PNG: opaque coloured blocks, a fully transparent band and a grey ramp. */
function pattern(): { png: Buffer; rgba: Uint8ClampedArray } {
  const c = createCanvas(40, 30);
  const ctx = c.getContext('2d');
  ctx.fillStyle = 'rgb(200, 30, 60)';
  ctx.fillRect(0, 0, 20, 10);
  ctx.fillStyle = 'rgb(10, 180, 90)';
  ctx.fillRect(20, 0, 20, 10);
  // rows 10-19 stay transparent
  for (let x = 0; x < 40; x++) {
    const v = Math.round((x * 255) / 39);
    ctx.fillStyle = `rgb(${v}, ${v}, ${v})`;
    ctx.fillRect(x, 20, 1, 10);
  }
  return { png: c.encodeSync('png'), rgba: ctx.getImageData(0, 0, 40, 30).data };
}

const infoOf = (bytes: Buffer): ImageInfo => {
  const info = readImageInfo(bytes);
  if (!info) throw new Error('not an image');
  return info;
};

t.test('an RGBA PNG decodes to the very pixels it holds, transparency included', async (t) => {
  const { png, rgba } = pattern();
  const canvas = await decodeWithSharp(png, infoOf(png));
  t.ok(canvas, 'sharp decoded it');
  t.equal(canvas!.width, 40);
  t.equal(canvas!.height, 30);
  const got = canvas!.getContext('2d').getImageData(0, 0, 40, 30).data;
  t.same(Buffer.from(got), Buffer.from(rgba));
  t.equal(got[(15 * 40 + 5) * 4 + 3], 0, 'the transparent band stays transparent (drawn onto white later)');
});

t.test('PNG, JPEG, WebP and GIF come out as RGBA canvases of the image size', async (t) => {
  for (const format of ['png', 'jpeg', 'webp', 'gif'] as const) {
    const bytes = await makeTextImageAs(format);
    const canvas = await decodeWithSharp(bytes, infoOf(bytes));
    t.ok(canvas, `${format} decoded`);
    t.equal(canvas!.width, 800, format);
    t.equal(canvas!.height, 152, format);
    // Dark text on a light page: both kinds of pixel are there.
    const px = canvas!.getContext('2d').getImageData(0, 0, 800, 152).data;
    let dark = 0;
    let light = 0;
    for (let i = 0; i < px.length; i += 4) {
      if (px[i]! < 80) dark++;
      else if (px[i]! > 200) light++;
    }
    t.ok(dark > 500 && light > 50_000, `${format}: ${dark} dark, ${light} light pixels`);
  }
});

t.test('null where the engine decodes instead: BMP, a truncated file, more pixels than the cap', async (t) => {
  const bmp = await makeTextImageAs('bmp');
  t.equal(await decodeWithSharp(bmp, infoOf(bmp)), null, 'BMP');
  const { png } = pattern();
  const truncated = png.subarray(0, Math.floor(png.length * 0.6));
  t.equal(await decodeWithSharp(truncated, infoOf(png)), null, 'truncated PNG');
  const side = Math.ceil(Math.sqrt(SHARP_DECODE_MAX_PIXELS)) + 1;
  t.equal(await decodeWithSharp(png, { ...infoOf(png), width: side, height: side }), null, 'declared over the cap');
  t.equal(await decodeWithSharp(Buffer.from('not an image at all'), { format: 'png', width: 10, height: 10, alpha: false }), null, 'garbage');
});

t.test('dark text on a transparent background is read (flattened onto white)', async (t) => {
  const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'image-decode-test-'));
  const ocr = new OcrPool({ size: 1, cacheDir });
  t.teardown(async () => {
    await ocr.close();
    fs.rmSync(cacheDir, { recursive: true, force: true });
  });
  const c = createCanvas(900, 160);
  const ctx = c.getContext('2d');
  ctx.fillStyle = '#000000';
  ctx.font = '56px sans-serif';
  ctx.fillText('TRANSPARENT 2025', 30, 100);
  const png = c.encodeSync('png');
  t.ok(infoOf(png).alpha, 'the PNG has an alpha channel');
  const doc = await extractImage({ bytes: png, signal: AbortSignal.timeout(120_000) }, { ocr });
  t.equal(doc.content, 'TRANSPARENT 2025');
  t.match(doc.metadata, { format: 'png', width: 900, height: 160 });
});
