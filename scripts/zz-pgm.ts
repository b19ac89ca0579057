import fs from 'node:fs'; import os from 'node:os'; import path from 'node:path';
import { createCanvas, loadImage } from '@napi-rs/canvas';
import { OcrPool } from '../src/extractors/ocr/ocr-pool.ts';
const file = process.argv[2]!;
const img = await loadImage(fs.readFileSync(file));
const c = createCanvas(img.width, img.height); const ctx = c.getContext('2d'); ctx.fillStyle = '#fff'; ctx.fillRect(0, 0, c.width, c.height); ctx.drawImage(img, 0, 0);
let t0 = performance.now();
const png = await c.encode('png'); const tPng = performance.now() - t0;
t0 = performance.now();
const rgba = ctx.getImageData(0, 0, c.width, c.height).data;
const grey = Buffer.alloc(c.width * c.height);
for (let i = 0, j = 0; j < grey.length; i += 4, j++) grey[j] = (rgba[i]! * 299 + rgba[i + 1]! * 587 + rgba[i + 2]! * 114) / 1000;
const pgm = Buffer.concat([Buffer.from(`P5\n${c.width} ${c.height}\n255\n`), grey]); const tPgm = performance.now() - t0;
console.log(`${img.width}x${img.height} png ${png.length} B in ${tPng.toFixed(0)} ms; pgm ${pgm.length} B in ${tPgm.toFixed(0)} ms`);
const pool = new OcrPool({ size: 1, cacheDir: fs.mkdtempSync(path.join(os.tmpdir(), 'zz-')) });
await pool.recognize(png);
for (let r = 0; r < 3; r++) for (const [k, b] of [['png', png], ['pgm', pgm]] as const) { const t = performance.now(); const res = await pool.recognize(b); console.log(k, (performance.now() - t).toFixed(0), 'ms', res.text.length, 'chars', res.confidence?.toFixed?.(1), JSON.stringify(res.text.slice(0, 40))); }
await pool.close();
