/**
 * The OCR worker pool: real tesseract.js workers, offline model. Workers are reused (never one per
 * call, never more than `size`), jobs are queued within a bound, aborts release waiting jobs and
 * replace a worker stuck on a running one, bad images become coded errors, close() fails what waits.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { isToolError } from '../../src/errors.ts';
import { OcrPool, toOcrResult } from '../../src/extractors/ocr/ocr-pool.ts';
import { makeTextImage } from '../fixtures-gen/make-pdf-fixtures.ts';

const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ocr-pool-test-'));
t.teardown(() => fs.rmSync(cacheDir, { recursive: true, force: true }));

const codeOf = (err: unknown) => (isToolError(err) ? err.code : String(err));

t.test('recognizes text with per-word confidences and reuses at most `size` workers', async (t) => {
  const pool = new OcrPool({ size: 2, cacheDir });
  t.teardown(() => pool.close());
  const image = await makeTextImage(['HELLO POOL WORLD'], { width: 700, fontSize: 40 });
  t.same(pool.stats(), { size: 2, busy: 0, queued: 0, started: 0 }, 'workers start lazily');
  const results = await Promise.all(Array.from({ length: 3 }, () => pool.recognize(image)));
  for (const r of results) {
    t.match(r.text, /HELLO POOL WORLD/);
    t.same(r.words.map((w) => w.text), ['HELLO', 'POOL', 'WORLD']);
    t.ok(r.words.every((w) => w.confidence > 0 && w.confidence <= 100));
    t.ok(r.confidence > 70, `mean confidence ${r.confidence}`);
  }
  const s = pool.stats();
  t.ok(s.started >= 1 && s.started <= 2, `started ${s.started} workers for 3 jobs`);
  t.equal(s.busy, 0);
  t.equal(s.queued, 0);
  await Promise.all([pool.recognize(image), pool.recognize(image)]);
  t.equal(pool.stats().started, s.started, 'later calls reuse the running workers');
});

t.test('an image tesseract cannot read is a PROCESSING_ERROR and the pool keeps working; the model is cached once, atomically', async (t) => {
  const dir = path.join(cacheDir, 'fresh');
  const pool = new OcrPool({ size: 1, cacheDir: dir });
  t.teardown(() => pool.close());
  await t.rejects(pool.recognize(Buffer.from('definitely not an image')), { code: 'PROCESSING_ERROR' });
  const r = await pool.recognize(await makeTextImage(['STILL ALIVE'], { width: 500, fontSize: 40 }));
  t.match(r.text, /STILL ALIVE/);
  t.equal(pool.stats().started, 1, 'the same worker served both jobs');
  t.same(fs.readdirSync(dir), ['eng.traineddata'], 'no temp files left behind');
  t.ok(fs.statSync(path.join(dir, 'eng.traineddata')).size > 1_000_000);
});

t.test('aborting a queued job rejects it at once; aborting a running job replaces its worker', async (t) => {
  const pool = new OcrPool({ size: 1, cacheDir });
  t.teardown(() => pool.close());
  const image = await makeTextImage(['ABORT TEST IMAGE'], { width: 700, fontSize: 40 });
  await pool.recognize(image); // warm the single worker

  const running = new AbortController();
  const queued = new AbortController();
  const first = pool.recognize(image, running.signal);
  const second = pool.recognize(image, queued.signal);
  t.equal(pool.stats().queued, 1);
  queued.abort();
  await t.rejects(second, { code: 'TIMEOUT' });
  t.equal(pool.stats().queued, 0);

  running.abort();
  await t.rejects(first, { code: 'TIMEOUT' });
  const again = await pool.recognize(image);
  t.match(again.text, /ABORT TEST IMAGE/, 'a fresh worker serves the next job');
  t.equal(pool.stats().started, 2, 'the aborted worker was replaced');

  const pre = new AbortController();
  pre.abort();
  await t.rejects(pool.recognize(image, pre.signal), { code: 'TIMEOUT' }, 'an already aborted signal never queues');
});

t.test('aborting a job while its worker switches page segmentation never calls into the terminated worker', async (t) => {
  // A job asking for another psm first sets it on the worker; aborted then, the worker is
  // terminated, and the switch settling afterwards must not send the recognition to it (tesseract.js
  // would throw inside its own promise: an unhandled rejection, which fails this test).
  const pool = new OcrPool({ size: 1, cacheDir });
  t.teardown(() => pool.close());
  const image = await makeTextImage(['SWITCH ABORT'], { width: 600, fontSize: 40 });
  await pool.recognize(image); // warm the single worker at the default psm
  for (let round = 0; round < 4; round++) {
    const ctrl = new AbortController();
    const job = pool.recognize(image, ctrl.signal, { psm: round % 2 === 0 ? '6' : '4' });
    ctrl.abort();
    await t.rejects(job, { code: 'TIMEOUT' }, `round ${round}: the aborted job rejects`);
  }
  // The next recognition runs while the terminated workers' last answers arrive (what they would
  // set off happens before this test ends).
  const after = await pool.recognize(image, undefined, { psm: '6' });
  t.match(after.text, /SWITCH ABORT/, 'a fresh worker reads the next job at the new psm');
});

t.test('the queue is bounded and close() fails waiting jobs', async (t) => {
  const pool = new OcrPool({ size: 1, cacheDir, maxQueue: 2 });
  const image = await makeTextImage(['QUEUE'], { width: 300, fontSize: 40 });
  const jobs = [pool.recognize(image), pool.recognize(image)];
  const settled = jobs.map((p) => p.then(() => 'ok', codeOf));
  // Both jobs wait in the queue while the worker starts: a third is refused at once.
  await t.rejects(pool.recognize(image), { code: 'RATE_LIMITED' });
  await pool.close();
  const codes = await Promise.all(settled);
  t.ok(codes.every((c) => c === 'ok' || c === 'MODEL_UNAVAILABLE'), codes.join(','));
  t.ok(codes.includes('MODEL_UNAVAILABLE'));
  await t.rejects(pool.recognize(image), { code: 'MODEL_UNAVAILABLE' });
});

t.test('a missing model folder fails jobs with MODEL_UNAVAILABLE instead of hanging', async (t) => {
  const pool = new OcrPool({ size: 1, cacheDir: path.join(cacheDir, 'other'), langPath: path.join(cacheDir, 'no-such-folder') });
  t.teardown(() => pool.close());
  await t.rejects(pool.recognize(await makeTextImage(['X'], { width: 200, fontSize: 40 })), { code: 'MODEL_UNAVAILABLE' });
});

t.test('toOcrResult keeps words with confidence > 0 and averages them', async (t) => {
  const r = toOcrResult({
    text: 'a b\n\n\n\nc  ',
    blocks: [{ paragraphs: [{ lines: [{ words: [{ text: 'a', confidence: 90 }, { text: 'b', confidence: 0 }, { text: ' c ', confidence: 70 }] }] }] }],
  });
  t.same(r, { text: 'a b\n\nc', confidence: 80, words: [{ text: 'a', confidence: 90 }, { text: 'c', confidence: 70 }] });
  t.same(toOcrResult({ text: '', blocks: null }), { text: '', confidence: 0, words: [] });
});
