/**
 * DOCX page numbers come from the breaks the file records (explicit breaks, section breaks,
 * Word's rendered breaks) and are reported only when they can be trusted; otherwise chunks say
 * null. A one-row table is still a table. All documents are generated here.
 */
import t from 'tap';
import JSZip from 'jszip';
import { Document, HeadingLevel, Packer, PageBreak, Paragraph, Table, TableCell, TableRow, TextRun } from 'docx';
import { extractDocx } from '../../src/extractors/docx/docx.ts';
import { takePageMarks, PAGE_MARK } from '../../src/extractors/docx/docx-pages.ts';
import { chunkDocument } from '../../src/retrieval/chunking.ts';
import type { ProcessedDocument } from '../../src/extractors/shared/types.ts';

const signal = new AbortController().signal;
const filler = (word: string) => Array.from({ length: 40 }, (_, i) => `${word} sentence ${i} keeps this page long enough to chunk.`).join(' ');

/** Patches document.xml (and app.xml's page count) of a generated file, as Word would have saved it. */
async function patch(bytes: Buffer, edit: (xml: string) => string, pages?: number): Promise<Buffer> {
  const zip = await JSZip.loadAsync(bytes);
  zip.file('word/document.xml', edit(await zip.file('word/document.xml')!.async('string')));
  if (pages !== undefined) {
    zip.file(
      'docProps/app.xml',
      `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Properties xmlns="http://schemas.openxmlformats.org/officeDocument/2006/extended-properties"><Pages>${pages}</Pages></Properties>`,
    );
  }
  return zip.generateAsync({ type: 'nodebuffer', compression: 'DEFLATE' });
}

/** Page of the first occurrence of `word` according to the page map. */
function pageOf(doc: ProcessedDocument, word: string): number | null {
  const at = doc.content.indexOf(word);
  const span = doc.pages.filter((p) => p.unit === 'page' && p.start <= at).at(-1);
  return span?.number ?? null;
}

/** Alpha (page 1), an explicit break, Bravo (page 2), Charlie, a heading with pageBreakBefore, Delta. */
async function fourPages(): Promise<Buffer> {
  return Packer.toBuffer(
    new Document({
      sections: [
        {
          children: [
            new Paragraph({ text: 'Report', heading: HeadingLevel.HEADING_1 }),
            new Paragraph({ children: [new TextRun(`ALPHA ${filler('Alpha')}`), new PageBreak()] }),
            new Paragraph(`BRAVO ${filler('Bravo')}`),
            new Paragraph(`CHARLIE ${filler('Charlie')}`),
            new Paragraph({ text: 'DELTA heading', heading: HeadingLevel.HEADING_2, pageBreakBefore: true }),
            new Paragraph(`Delta ${filler('Delta')}`),
          ],
        },
      ],
    }),
  );
}

t.test('rendered and explicit breaks give the pages; chunks carry them', async (t) => {
  // Word's layout broke a page before CHARLIE and recorded a rendered break after the explicit one.
  const bytes = await patch(
    await fourPages(),
    (xml) =>
      xml
        .replace('<w:t xml:space="preserve">BRAVO', '<w:lastRenderedPageBreak/><w:t xml:space="preserve">BRAVO')
        .replace('<w:t xml:space="preserve">CHARLIE', '<w:lastRenderedPageBreak/><w:t xml:space="preserve">CHARLIE'),
    4,
  );
  const doc = await extractDocx({ bytes, signal });
  t.equal(doc.metadata.pages_known, true);
  t.same(doc.pages.map((p) => [p.number, p.unit]), [[1, 'page'], [2, 'page'], [3, 'page'], [4, 'page']]);
  t.same(['Report', 'ALPHA', 'BRAVO', 'CHARLIE', 'DELTA'].map((w) => pageOf(doc, w)), [1, 1, 2, 3, 4]);
  t.ok(doc.content.slice(doc.pages[3].start).startsWith('## DELTA heading'), 'the heading opens its page');
  t.notOk(doc.content.includes(PAGE_MARK), 'no marker left in the content');
  t.notOk(/\n{3}/.test(doc.content), 'no blank lines left where markers were');

  const chunks = chunkDocument(doc);
  t.ok(chunks.length >= 4, `${chunks.length} chunks`);
  for (const c of chunks) {
    const words = ['ALPHA', 'BRAVO', 'CHARLIE', 'DELTA'].filter((w) => c.text.includes(w)).map((w) => pageOf(doc, w)!);
    t.ok(c.page_start !== null && c.page_end !== null && c.page_end >= c.page_start, `chunk ${c.chunk_index} has pages`);
    for (const p of words) t.ok(c.page_start! <= p && p <= c.page_end!, `chunk ${c.chunk_index}: page ${p} in ${c.page_start}-${c.page_end}`);
    t.ok(c.page_end! <= 4, 'never past the last page');
  }
});

t.test('explicit breaks alone: pages only when app.xml counts the same number', async (t) => {
  const twoPages = await Packer.toBuffer(
    new Document({ sections: [{ children: [new Paragraph({ children: [new TextRun(`ONE ${filler('One')}`), new PageBreak()] }), new Paragraph(`TWO ${filler('Two')}`)] }] }),
  );
  const counted = await extractDocx({ bytes: await patch(twoPages, (x) => x, 2), signal });
  t.equal(counted.metadata.pages_known, true);
  t.same([pageOf(counted, 'ONE'), pageOf(counted, 'TWO')], [1, 2]);

  // Word says 5 pages but only one break is recorded: which page a passage is on is unknown.
  const unknown = await extractDocx({ bytes: await patch(twoPages, (x) => x, 5), signal });
  t.equal(unknown.metadata.pages_known, false);
  t.ok(unknown.pages.every((p) => p.unit === 'section'));
  const chunks = chunkDocument(unknown);
  t.ok(chunks.length >= 2);
  t.ok(chunks.every((c) => c.page_start === null && c.page_end === null), 'null, never a guess');

  // Generated files with no page count and no break: unknown too.
  const plain = await extractDocx({ bytes: twoPages, signal });
  t.equal(plain.metadata.pages_known, false);
  t.ok(chunkDocument(plain).every((c) => c.page_start === null));

  // A one-page file that says so is page 1 throughout.
  const one = await Packer.toBuffer(new Document({ sections: [{ children: [new Paragraph('Just one page.')] }] }));
  const single = await extractDocx({ bytes: await patch(one, (x) => x, 1), signal });
  t.same(chunkDocument(single).map((c) => [c.page_start, c.page_end]), [[1, 1]]);
});

t.test('a section break that starts a new page is a page break; a continuous one is not', async (t) => {
  const base = await Packer.toBuffer(
    new Document({ sections: [{ children: [new Paragraph(`FIRST ${filler('First')}`), new Paragraph(`SECOND ${filler('Second')}`), new Paragraph(`THIRD ${filler('Third')}`)] }] }),
  );
  const sect = (type: string) => `<w:sectPr><w:type w:val="${type}"/><w:pgSz w:w="11906" w:h="16838"/></w:sectPr>`;
  const bytes = await patch(
    base,
    (xml) =>
      xml
        .replace(/<w:p>(<w:r><w:t xml:space="preserve">FIRST)/, `<w:p><w:pPr>${sect('nextPage')}</w:pPr>$1`)
        .replace(/<w:p>(<w:r><w:t xml:space="preserve">SECOND)/, `<w:p><w:pPr>${sect('continuous')}</w:pPr>$1`),
    2,
  );
  const doc = await extractDocx({ bytes, signal });
  t.equal(doc.metadata.pages_known, true);
  t.same(['FIRST', 'SECOND', 'THIRD'].map((w) => pageOf(doc, w)), [1, 2, 2]);
});

t.test('takePageMarks: marker-only blocks vanish, adjacent breaks count once', async (t) => {
  const M = PAGE_MARK;
  t.same(takePageMarks(`a\n\n${M}\n\n${M}b\n\nc`), { text: 'a\n\nb\n\nc', breaks: [3] });
  t.same(takePageMarks(`# ${M}Title\n\n- item${M}`), { text: '# Title\n\n- item', breaks: [0, 15] });
  t.same(takePageMarks('no marks'), { text: 'no marks', breaks: [] });
});

t.test('a one-row table is a table (a chat export row), in content and tables[]', async (t) => {
  const row = ['Ann Lee', '10:02', 'Shipping the fix today'];
  const bytes = await Packer.toBuffer(
    new Document({
      sections: [
        {
          children: [
            new Paragraph('Chat export'),
            new Table({ rows: [new TableRow({ children: row.map((text) => new TableCell({ children: [new Paragraph(text)] })) })] }),
          ],
        },
      ],
    }),
  );
  const doc = await extractDocx({ bytes, signal });
  t.equal(doc.tables.length, 1);
  t.same(doc.tables[0].headers, row);
  t.same(doc.tables[0].rows, []);
  t.ok(doc.content.includes(`| ${row.join(' | ')} |\n| --- | --- | --- |`), doc.content);
  t.equal(doc.metadata.table_count, 1);
});
