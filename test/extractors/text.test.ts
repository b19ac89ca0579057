/** Plain text, Markdown, JSON and XML: decoding and format detection; the corpus's text files. */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { extractText, textFormat } from '../../src/extractors/text.ts';
import { wordRecall } from './word-recall.ts';

const corpus = path.resolve(import.meta.dirname, '../../../shared/corpus/txt');
const signal = new AbortController().signal;
const text = (bytes: Buffer | string, filename?: string, contentType?: string) =>
  extractText({ bytes: Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes), filename, contentType, signal });

t.test('line endings normalised, leading blank lines dropped, content otherwise verbatim', async (t) => {
  const doc = await text('\r\n\r\nFirst line\r\n  indented\r\nlast\r\n\r\n', 'notes.txt');
  t.equal(doc.content, 'First line\n  indented\nlast');
  t.match(doc.metadata, { format: 'text', encoding: 'utf-8', line_count: 3, word_count: 4 });
  t.same(doc.pages, []);
});

t.test('encodings: UTF-8 BOM, UTF-16 with and without BOM, cp1252', async (t) => {
  const bom = await text(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('Grüße')]));
  t.equal(bom.content, 'Grüße');
  const le = await text(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('Hello wörld', 'utf16le')]));
  t.equal(le.content, 'Hello wörld');
  const noBom = await text(Buffer.from('Plain ASCII text written as UTF-16 without a byte order mark.', 'utf16le'));
  t.equal(noBom.content, 'Plain ASCII text written as UTF-16 without a byte order mark.');
  t.equal(noBom.metadata.encoding, 'utf-16le');
  const cp = await text(Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x20, 0x80, 0x35]));
  t.equal(cp.content, 'café €5');
});

t.test('Markdown: detected by name or structure, sections from headings', async (t) => {
  const md = '# Guide\n\nIntro.\n\n## Install\n\n- step one\n- step two\n\n## Use\n\nRun it.';
  const doc = await text(md, 'README.md');
  t.equal(doc.metadata.format, 'markdown');
  t.equal(doc.content, md);
  t.same(doc.pages.map((p) => p.label), ['Guide', 'Install', 'Use']);
  t.equal(doc.content.slice(doc.pages[1].start, doc.pages[1].end), '## Install\n\n- step one\n- step two\n\n');
  t.equal(textFormat(md), 'markdown', 'by content alone');
  t.equal(textFormat('Just prose.\nNo markup here.'), 'text');
});

t.test('JSON: minified documents are pretty-printed, JSON Lines recognised', async (t) => {
  const value = { items: Array.from({ length: 40 }, (_, i) => ({ id: i, name: `item ${i}` })) };
  const doc = await text(JSON.stringify(value), 'data.json');
  t.equal(doc.metadata.format, 'json');
  t.equal(doc.metadata.json_valid, true);
  t.equal(doc.content, JSON.stringify(value, null, 2));
  const small = await text('{"a": 1}', undefined, 'application/json');
  t.equal(small.content, '{"a": 1}', 'short JSON kept as written');
  const lines = await text('{"a":1}\n{"a":2}\n', 'events.jsonl');
  t.match(lines.metadata, { format: 'json', json_valid: false, json_lines: true });
  t.equal(textFormat('[1, 2, 3]'), 'json');
});

t.test('XML kept as written', async (t) => {
  const xml = '<?xml version="1.0"?>\n<catalog><book id="1">Herons</book></catalog>';
  const doc = await text(xml);
  t.equal(doc.metadata.format, 'xml');
  t.equal(doc.content, xml);
});

t.test('empty and whitespace-only input gives empty content, flagged', async (t) => {
  for (const input of ['', '   \n\t\n']) {
    const doc = await text(input, 'empty.txt');
    t.equal(doc.content, '');
    t.equal(doc.metadata.empty, true);
  }
});

if (!fs.existsSync(corpus)) {
  t.comment(`corpus folder ${corpus} absent: corpus checks skipped`);
} else {
  const read = (f: string) => text(fs.readFileSync(path.join(corpus, f)), f);

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

  t.test('every corpus file yields content or a coded error; recall against ground truth', async (t) => {
    for (const f of fs.readdirSync(corpus).sort()) {
      if (f.includes('.expected.')) continue;
      const doc = await read(f);
      t.ok(f === 'empty.txt' ? doc.content === '' : doc.content.length > 0, f);
      const expected = path.join(corpus, `${f}.expected.md`);
      if (fs.existsSync(expected)) {
        const r = wordRecall(fs.readFileSync(expected, 'utf8'), doc.content);
        t.comment(`${f}: word recall ${r.recall.toFixed(3)} (${r.found}/${r.total})`);
        t.ok(r.recall >= 0.99, `${f}: recall ${r.recall.toFixed(3)}`);
      }
    }
  });
}
