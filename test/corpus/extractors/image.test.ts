/**
 * Image OCR on the corpus photos and scans (CORPUS_DIR/png, CORPUS_DIR/jpg): known phrases, a
 * noisy page against its ground truth, a photo without text. One shared pool. The self-contained
 * test/extractors/image.test.ts covers every container format and the error paths on generated
 * images.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { extractImage } from '../../../src/extractors/image.ts';
import { OcrPool } from '../../../src/extractors/ocr-pool.ts';
import { wordRecall } from '../../extractors/word-recall.ts';
import { corpusPath, readCorpus, readCorpusText } from '../data-dirs.ts';

const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'image-corpus-'));
const ocr = new OcrPool({ size: 2, cacheDir });
t.teardown(async () => {
  await ocr.close();
  fs.rmSync(cacheDir, { recursive: true, force: true });
});

// Each image is OCR'd once and shared by the tests below.
const results = new Map<string, ReturnType<typeof extractImage>>();
const run = (rel: string) => {
  if (!results.has(rel)) results.set(rel, extractImage({ bytes: readCorpus(rel), filename: path.basename(rel), signal: AbortSignal.timeout(120_000) }, { ocr }));
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

/**
 * Images whose content is empty by design, with the reason:
 * - example.jpg is a flower photo (MANIFEST.tsv: "OCR should return nothing");
 * - jpn-vert.jpeg is vertical Japanese: the bundled model is English only (@tesseract.js-data/eng),
 *   so its reading is noise and is dropped. A Japanese model (tessdata jpn_vert) would read it.
 */
const NO_TEXT: Record<string, string> = {
  'jpg/example.jpg': 'photo without text',
  'jpg/jpn-vert.jpeg': 'Japanese text; the OCR model is English only',
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
