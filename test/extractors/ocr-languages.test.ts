/**
 * OCR languages: the default list (OCR_LANGUAGES) is checked when the pool is built, a folder of
 * traineddata (TESSDATA_DIR) adds languages, a call may ask for other languages (the worker is
 * switched and switched back), and a language that is not installed is a coded error naming what
 * is. The folder here is made in the test from the npm English model under another code.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { extractImage } from '../../src/extractors/image/image.ts';
import { parseLanguages, scriptCovered, uncoveredScriptAdvice } from '../../src/extractors/ocr/ocr-languages.ts';
import { defaultLangPath, OcrPool } from '../../src/extractors/ocr/ocr-pool.ts';
import { extractPdf } from '../../src/extractors/pdf/pdf.ts';
import { makeScannedPdf, makeTextImage } from '../fixtures-gen/make-pdf-fixtures.ts';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ocr-languages-test-'));
const tessdata = path.join(root, 'tessdata');
fs.mkdirSync(tessdata);
// A language the npm packages do not have, as a folder would hold it ("tst" reads English).
fs.copyFileSync(path.join(defaultLangPath(), 'eng.traineddata.gz'), path.join(tessdata, 'tst.traineddata.gz'));
const cacheDir = path.join(root, 'cache');
const ocr = new OcrPool({ size: 1, cacheDir, tessdataDir: tessdata });
t.teardown(async () => {
  await ocr.close();
  fs.rmSync(root, { recursive: true, force: true });
});

t.test('languages are checked at construction and reported', async (t) => {
  t.same(ocr.languageInfo(), { default_languages: ['eng'], installed_languages: ['eng', 'tst'], orientation_detection: true, tessdata_dir: true });
  t.throws(() => new OcrPool({ size: 1, cacheDir, languages: ['eng', 'xyz'] }), { code: 'VALIDATION_ERROR', message: /not installed: xyz \(OCR_LANGUAGES\)\. Installed: eng\b/ });
  t.throws(() => new OcrPool({ size: 1, cacheDir, tessdataDir: path.join(root, 'missing') }), { code: 'VALIDATION_ERROR', message: /TESSDATA_DIR/ });
  const withFolder = new OcrPool({ size: 1, cacheDir, tessdataDir: tessdata, languages: ['tst', 'eng'] });
  t.same(withFolder.languageInfo().default_languages, ['tst', 'eng'], 'a folder language may be a default');
  await withFolder.close();
  t.same(parseLanguages('eng+deu, fra'), ['eng', 'deu', 'fra']);
});

t.test('a call may use a folder language; the worker switches and comes back', async (t) => {
  const image = await makeTextImage(['LANGUAGE SWITCH WORKS'], { width: 900, fontSize: 40 });
  const doc = await extractImage({ bytes: image, signal: AbortSignal.timeout(120_000), ocr: { languages: ['tst'] } }, { ocr });
  t.equal(doc.content, 'LANGUAGE SWITCH WORKS');
  t.same(doc.metadata.ocr_languages, ['tst']);
  t.ok(fs.statSync(path.join(cacheDir, 'tst.traineddata')).size > 1_000_000, 'the folder model was prepared once in the cache');
  const back = await extractImage({ bytes: image, signal: AbortSignal.timeout(120_000) }, { ocr });
  t.same(back.metadata.ocr_languages, ['eng']);
  t.equal(back.content, 'LANGUAGE SWITCH WORKS');
  t.equal(ocr.stats().started, 1, 'one worker served both languages');
});

t.test('a language that is not installed is a coded error, for images and PDFs, before any OCR', async (t) => {
  const image = await makeTextImage(['X'], { width: 200, fontSize: 40 });
  await t.rejects(extractImage({ bytes: image, signal: AbortSignal.timeout(60_000), ocr: { languages: ['chi_sim'] } }, { ocr }), {
    code: 'VALIDATION_ERROR',
    message: /OCR language not installed: chi_sim \(ocr_languages\)\. Installed: eng, tst\. Add <code>\.traineddata files to the folder named by TESSDATA_DIR/,
  });
  await t.rejects(extractPdf({ bytes: await makeScannedPdf(0, 1, { pageHeight: 300 }), signal: AbortSignal.timeout(60_000), ocr: { languages: ['../eng'] } }, { ocr }), {
    code: 'VALIDATION_ERROR',
  });
  const never = await extractImage({ bytes: image, signal: AbortSignal.timeout(60_000), ocr: { mode: 'never', languages: ['chi_sim'] } }, { ocr });
  t.equal(never.content, '');
  t.match(never.metadata, { ocr_mode: 'never', word_count: 0 });
});

t.test('script coverage and the advice given when a script is not read', async (t) => {
  t.ok(scriptCovered('Latin', ['eng']));
  t.notOk(scriptCovered('Han', ['eng']));
  t.ok(scriptCovered('Han', ['jpn', 'jpn_vert']));
  t.ok(scriptCovered('Klingon', ['eng']), 'an unknown script name never raises an alarm');
  t.equal(uncoveredScriptAdvice('Hangul', ['eng'], ['eng', 'kor']), 'The text looks like Hangul script, which the OCR languages used (eng) do not read; pass ocr_languages: ["kor"] (installed)');
  t.match(uncoveredScriptAdvice('Han', ['eng'], ['eng']), /no installed language does; add chi_sim\.traineddata or chi_tra\.traineddata or jpn\.traineddata to TESSDATA_DIR/);
});
