/**
 * Plain-text extraction on the real corpus files (CORPUS_DIR/txt): UTF-16 without BOM, leading
 * blank lines, a 3.2 MB book, an empty file, UDHR article 1 in hundreds of scripts. The
 * self-contained test/extractors/text.test.ts checks the same behaviours on generated text.
 */
import fs from 'node:fs';
import t from 'tap';
import { extractText } from '../../../src/extractors/text/text.ts';
import { wordRecall } from '../../extractors/word-recall.ts';
import { corpusPath, readCorpus, readCorpusText } from '../data-dirs.ts';

const signal = new AbortController().signal;
const read = (f: string) => extractText({ bytes: readCorpus(`txt/${f}`), filename: f, signal });

t.test('fake-text-utf-16-le.txt: UTF-16LE without BOM', async (t) => {
  const doc = await read('fake-text-utf-16-le.txt');
  t.equal(doc.metadata.encoding, 'utf-16le');
  t.match(doc.content, /^This is a test document to use for unit tests\.\n\n {4}Doylestown, PA 18901/);
});

t.test('ragflow_test.txt: leading blank lines dropped', async (t) => {
  const doc = await read('ragflow_test.txt');
  t.match(doc.content, /^Introducing RagFlow: Revolutionizing Natural Language Processing/);
});

t.test('book-war-and-peace-1225p.txt: 3.2 MB read whole and fast', async (t) => {
  const started = Date.now();
  const doc = await read('book-war-and-peace-1225p.txt');
  t.ok(doc.content.length > 3_000_000);
  t.match(doc.content, /^CHAPTER I\n\n"Well, Prince, so Genoa and Lucca/);
  t.comment(`${Date.now() - started} ms`);
});

/** Files whose extraction is expected to be empty (flagged `empty`), not an error. */
const EMPTY = new Set(['empty.txt']);

t.test('every corpus file yields content (empty only where listed); recall against ground truth', async (t) => {
  const files = fs.readdirSync(corpusPath('txt')).filter((f) => !f.includes('.expected.')).sort();
  t.ok(files.length >= 5, `${files.length} files`);
  for (const f of files) {
    const doc = await read(f);
    if (EMPTY.has(f)) {
      t.equal(doc.content, '', `${f}: empty`);
      t.equal(doc.metadata.empty, true, `${f}: flagged empty`);
      continue;
    }
    t.ok(doc.content.trim().length > 0, `${f}: content`);
    t.notMatch(doc.content, '\uFFFD', `${f}: no replacement characters`);
    if (fs.existsSync(corpusPath(`txt/${f}.expected.md`))) {
      const r = wordRecall(readCorpusText(`txt/${f}.expected.md`), doc.content);
      t.ok(r.recall >= 0.99, `${f}: recall ${r.recall.toFixed(3)} (${r.found}/${r.total})`);
    }
  }
});
