/**
 * Image OCR on the corpus photos and scans (CORPUS_DIR/png, CORPUS_DIR/jpg): known phrases, a
 * noisy page against its ground truth, a photo without text, vertical Japanese read with the
 * Debian jpn + jpn_vert models and refused with advice when read with English only. One shared
 * pool with a traineddata folder (test/corpus/tessdata.ts), so orientation detection is on. The self-contained
 * test/extractors/image.test.ts covers every container format and the error paths on generated
 * images.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { extractImage } from '../../../src/extractors/image/image.ts';
import { OcrPool } from '../../../src/extractors/ocr/ocr-pool.ts';
import { wordRecall } from '../../extractors/word-recall.ts';
import { corpusPath, readCorpus, readCorpusText } from '../data-dirs.ts';
import { TESSDATA_DIR } from '../tessdata.ts';

const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'image-corpus-'));
const ocr = new OcrPool({ size: 2, cacheDir, tessdataDir: TESSDATA_DIR });
t.teardown(async () => {
  await ocr.close();
  fs.rmSync(cacheDir, { recursive: true, force: true });
});

// Each image is OCR'd once and shared by the tests below.
const results = new Map<string, ReturnType<typeof extractImage>>();
/** Images whose text needs other languages than the default (eng). */
const LANGUAGES: Record<string, string[]> = { 'jpg/jpn-vert.jpeg': ['jpn', 'jpn_vert'] };
const run = (rel: string) => {
  const languages = LANGUAGES[rel];
  if (!results.has(rel)) {
    results.set(rel, extractImage({ bytes: readCorpus(rel), filename: path.basename(rel), signal: AbortSignal.timeout(120_000), ...(languages ? { ocr: { languages } } : {}) }, { ocr }));
  }
  return results.get(rel)!;
};
const oneLine = (s: string) => s.replace(/\s+/g, ' ');

t.test('corpus images: known phrases', async (t) => {
  const paper = await run('jpg/test.jpg');
  t.match(paper.metadata, { format: 'jpeg', width: 1615, height: 1967 });
  t.match(oneLine(paper.content), 'AutoGen: Enabling Next-Gen LLM');
  t.match(oneLine(paper.content), 'Applications via Multi-Agent Conversation');

  const bill = await run('jpg/qr_bill_example.jpg');
  t.match(bill.content, /Pia Rutschmann/);
  t.match(bill.content, /Robert Schneider AG/);

  const ko = await run('png/english-and-korean.png');
  t.match(ko.content, /RULES AND INSTRUCTIONS/);
  t.match(oneLine(ko.content), 'Use all your accounts');

  const table = await run('png/2305.03393v1-table_crop.png');
  t.match(table.content, /0\.969/);
  t.match(table.content, /enc-layers/);

  const layout = await run('jpg/layout-parser-paper-with-table.jpg');
  const r = wordRecall(readCorpusText('jpg/layout-parser-paper-with-table.jpg.expected.md'), layout.content);
  // The ground truth is itself noisy OCR of a low-resolution page image.
  t.ok(r.recall >= 0.8, `recall ${r.recall.toFixed(3)}`);
});

t.test('an image without text yields empty content, not noise', async (t) => {
  const doc = await run('jpg/example.jpg');
  t.equal(doc.content, '');
  t.same(doc.ocr!.words, []);
  t.match(doc.metadata, { format: 'jpeg', width: 480, height: 360, word_count: 0 });
});

t.test('vertical Japanese reads with jpn + jpn_vert; with English only it is refused, naming the script and the fix', async (t) => {
  const doc = await run('jpg/jpn-vert.jpeg');
  t.same(doc.metadata.ocr_languages, ['jpn', 'jpn_vert']);
  const text = doc.content.replace(/\s+/g, '');
  for (const phrase of ['元来日本語は漢文に', 'から下へ、また行を右から左へと進', '横書き不能な書体も存在する']) t.match(text, phrase);
  await t.rejects(extractImage({ bytes: readCorpus('jpg/jpn-vert.jpeg'), signal: AbortSignal.timeout(120_000) }, { ocr }), {
    code: 'PROCESSING_ERROR',
    message: /No text could be read from the image\. The text looks like Han script, which the OCR languages used \(eng\) do not read; pass ocr_languages: \[.*"jpn".*\] \(installed\)/,
  });
});

/** Images whose content is empty by design, with the reason (example.jpg: MANIFEST.tsv says "OCR should return nothing"). */
const NO_TEXT: Record<string, string> = {
  'jpg/example.jpg': 'photo without text',
};

t.test('every corpus image is read: text, or empty where listed; never an error', async (t) => {
  const files = ['png', 'jpg'].flatMap((dir) => fs.readdirSync(corpusPath(dir)).filter((f) => !f.includes('.expected.')).sort().map((f) => `${dir}/${f}`));
  t.ok(files.length >= 8, `${files.length} files`);
  for (const rel of files) {
    const doc = await run(rel);
    t.equal(doc.kind, 'image', rel);
    if (rel in NO_TEXT) {
      t.equal(doc.content, '', `${rel}: empty (${NO_TEXT[rel]})`);
      t.equal(doc.metadata.word_count, 0, `${rel}: no words`);
      continue;
    }
    t.ok(doc.content.trim().length > 0, `${rel}: text (${doc.metadata.word_count} words, confidence ${doc.metadata.ocr_confidence})`);
  }
});
