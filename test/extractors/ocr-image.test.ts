/**
 * What the OCR engine is handed (src/extractors/ocr/ocr-image.ts): a grey canvas as PGM and a
 * colour one as PPM, with the canvas's pixels exactly, and tesseract.js reads either as it reads
 * the same canvas as PNG: the same text, words, boxes and confidence.
 */
import t from 'tap';
import { createCanvas, type Canvas } from '@napi-rs/canvas';
import { canvasImage } from '../../src/extractors/ocr/ocr-image.ts';
import { OcrPool } from '../../src/extractors/ocr/ocr-pool.ts';
import { tempDir } from '../helper.ts';

function page(colour: boolean): Canvas {
  const c = createCanvas(900, 300);
  const ctx = c.getContext('2d');
  ctx.fillStyle = colour ? '#fdf6e3' : '#ffffff';
  ctx.fillRect(0, 0, c.width, c.height);
  ctx.fillStyle = colour ? '#1a3a8a' : '#000000';
  ctx.font = '32px sans-serif';
  ctx.fillText('Quarterly revenue grew by 12 percent', 30, 90);
  ctx.fillStyle = colour ? '#8a1a1a' : '#333333';
  ctx.fillText('while operating costs fell sharply', 30, 180);
  return c;
}

t.test('grey canvases become PGM, colour ones PPM, pixel for pixel', async (t) => {
  for (const colour of [false, true]) {
    const c = page(colour);
    const img = canvasImage(c);
    const header = `${colour ? 'P6' : 'P5'}\n900 300\n255\n`;
    t.equal(img.subarray(0, header.length).toString('latin1'), header, `${colour ? 'colour: PPM' : 'grey: PGM'}`);
    const px = c.getContext('2d').getImageData(0, 0, 900, 300).data;
    const channels = colour ? 3 : 1;
    t.equal(img.length, header.length + 900 * 300 * channels, 'bytes per pixel');
    let differing = 0;
    for (let p = 0; p < 900 * 300; p++) for (let k = 0; k < channels; k++) if (img[header.length + p * channels + k] !== px[p * 4 + k]) differing++;
    t.equal(differing, 0, 'every pixel as on the canvas');
  }
});

t.test('the engine reads PGM and PPM as it reads the PNG of the same canvas', async (t) => {
  const pool = new OcrPool({ size: 1, cacheDir: tempDir(t) });
  t.teardown(() => pool.close());
  for (const colour of [false, true]) {
    const c = page(colour);
    const viaPng = await pool.recognize(await c.encode('png'));
    const viaNetpbm = await pool.recognize(canvasImage(c));
    t.match(viaNetpbm.text, /revenue grew/, `${colour ? 'colour' : 'grey'}: read`);
    t.same(viaNetpbm, viaPng, `${colour ? 'colour' : 'grey'}: same text, words, boxes and confidence as from PNG`);
  }
});
