/**
 * Flat page trees are split before pdf.js reads them (src/extractors/pdf/pdf-page-tree.ts): pages
 * still read in order through the real extractor, with the MediaBox, Rotate and Resources they
 * inherit from the node that held them, in files with classic xref tables and in files whose
 * page tree sits in object streams behind an xref stream (hand-built and pdf-lib's). Balanced
 * trees and files this reader does not follow are left byte for byte as they came.
 */
import t, { type Test } from 'tap';
import { deflateSync } from 'node:zlib';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { extractPdf } from '../../src/extractors/pdf/pdf.ts';
import { OcrPool } from '../../src/extractors/ocr/ocr-pool.ts';
import { loadPdf } from '../../src/extractors/pdf/pdf-render.ts';
import { FANOUT, rebalancePageTree } from '../../src/extractors/pdf/pdf-page-tree.ts';
import { writePdf } from '../reliability/bombs.ts';
import { tempDir } from '../helper.ts';

// Well past MAX_FLAT_KIDS (256) and FANOUT (64): 16 new intermediate nodes and two object streams;
// the cost of a flat tree is not what these checks measure, so a few hundred pages more would only add time.
const PAGES = 1_000;
const INHERITED = '/MediaBox [0 0 300 400] /Rotate 90 /Resources << /Font << /F1 3 0 R >> >>';
const FONT = '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>';
const content = (n: number) => `BT /F1 12 Tf 20 300 Td (Ledger page ${n}) Tj ET`;
const streamObj = (data: string) => `<< /Length ${data.length} >>\nstream\n${data}\nendstream`;

/** 1 catalog, 2 the one /Pages node (inherited attributes), 3 font, then page i at 4+2i, its content at 5+2i. */
function flatClassicPdf(pages: number, editKids: (kids: string[]) => string[] = (k) => k): Buffer {
  const objects = ['<< /Type /Catalog /Pages 2 0 R >>'];
  const kids = editKids(Array.from({ length: pages }, (_, i) => `${4 + 2 * i} 0 R`));
  objects.push(`<< /Type /Pages ${INHERITED} /Kids [${kids.join(' ')}] /Count ${pages} >>`, FONT);
  for (let i = 0; i < pages; i++) objects.push(`<< /Type /Page /Parent 2 0 R /Contents ${5 + 2 * i} 0 R >>`, streamObj(content(i + 1)));
  return writePdf(objects);
}

/** The long node one level down: MediaBox and Resources on the root, Rotate on the long node. */
function nestedFlatPdf(pages: number): Buffer {
  const objects = ['<< /Type /Catalog /Pages 2 0 R >>'];
  objects.push(`<< /Type /Pages /MediaBox [0 0 300 400] /Resources << /Font << /F1 3 0 R >> >> /Kids [4 0 R] /Count ${pages} >>`, FONT);
  const kids = Array.from({ length: pages }, (_, i) => `${5 + 2 * i} 0 R`);
  objects.push(`<< /Type /Pages /Parent 2 0 R /Rotate 90 /Kids [${kids.join(' ')}] /Count ${pages} >>`);
  for (let i = 0; i < pages; i++) objects.push(`<< /Type /Page /Parent 4 0 R /Contents ${6 + 2 * i} 0 R >>`, streamObj(content(i + 1)));
  return writePdf(objects);
}

/** The same pages under 10 intermediate nodes: a balanced tree. */
function balancedClassicPdf(pages: number, groups: number): Buffer {
  const per = pages / groups;
  const objects = ['<< /Type /Catalog /Pages 2 0 R >>'];
  const firstPage = 4 + groups;
  const groupRefs = Array.from({ length: groups }, (_, g) => `${4 + g} 0 R`);
  objects.push(`<< /Type /Pages ${INHERITED} /Kids [${groupRefs.join(' ')}] /Count ${pages} >>`, FONT);
  for (let g = 0; g < groups; g++) {
    const kids = Array.from({ length: per }, (_, i) => `${firstPage + 2 * (g * per + i)} 0 R`);
    objects.push(`<< /Type /Pages /Parent 2 0 R /Kids [${kids.join(' ')}] /Count ${per} >>`);
  }
  for (let i = 0; i < pages; i++) objects.push(`<< /Type /Page /Parent ${4 + Math.floor(i / per)} 0 R /Contents ${firstPage + 2 * i + 1} 0 R >>`, streamObj(content(i + 1)));
  return writePdf(objects);
}

/**
 * A flat tree whose catalog, page-tree node, font and page dictionaries sit in object streams of
 * 500 objects, indexed by a Flate xref stream with the PNG Up predictor (as Acrobat and pdf-lib write).
 */
function flatObjectStreamPdf(pages: number): Buffer {
  const inStreams = new Map<number, string>();
  inStreams.set(1, '<< /Type /Catalog /Pages 2 0 R >>');
  const pageNum = (i: number) => 4 + i;
  const contentNum = (i: number) => 4 + pages + i;
  const kids = Array.from({ length: pages }, (_, i) => `${pageNum(i)} 0 R`);
  inStreams.set(2, `<< /Type /Pages ${INHERITED} /Kids [${kids.join(' ')}] /Count ${pages} >>`);
  inStreams.set(3, FONT);
  for (let i = 0; i < pages; i++) inStreams.set(pageNum(i), `<< /Type /Page /Parent 2 0 R /Contents ${contentNum(i)} 0 R >>`);
  const parts: Buffer[] = [Buffer.from('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n', 'latin1')];
  let at = parts[0].length;
  const xref = new Map<number, [number, number, number]>();
  const write = (num: number, body: Buffer) => {
    xref.set(num, [1, at, 0]);
    const b = Buffer.concat([Buffer.from(`${num} 0 obj\n`), body, Buffer.from('\nendobj\n')]);
    parts.push(b);
    at += b.length;
  };
  for (let i = 0; i < pages; i++) write(contentNum(i), Buffer.from(streamObj(content(i + 1))));
  let next = 4 + 2 * pages;
  const nums = [...inStreams.keys()];
  for (let s = 0; s < nums.length; s += 500) {
    const group = nums.slice(s, s + 500);
    const stmNum = next++;
    const header: string[] = [];
    const bodies: string[] = [];
    let offset = 0;
    group.forEach((num, index) => {
      header.push(`${num} ${offset}`);
      bodies.push(inStreams.get(num)!);
      offset += inStreams.get(num)!.length + 1;
      xref.set(num, [2, stmNum, index]);
    });
    const head = `${header.join(' ')}\n`;
    const data = deflateSync(Buffer.from(head + bodies.join('\n')));
    write(stmNum, Buffer.concat([Buffer.from(`<< /Type /ObjStm /N ${group.length} /First ${head.length} /Filter /FlateDecode /Length ${data.length} >>\nstream\n`), data, Buffer.from('\nendstream')]));
  }
  const xrefNum = next++;
  xref.set(xrefNum, [1, at, 0]);
  const rows: Buffer[] = [];
  let prev = Buffer.alloc(7);
  for (let num = 0; num < next; num++) {
    const [type, a, b] = xref.get(num) ?? [0, 0, 65535];
    const row = Buffer.alloc(7);
    row[0] = type;
    row.writeUInt32BE(a, 1);
    row.writeUInt16BE(b, 5);
    const up = Buffer.alloc(8);
    up[0] = 2;
    for (let i = 0; i < 7; i++) up[i + 1] = (row[i] - prev[i]) & 0xff;
    rows.push(up);
    prev = row;
  }
  const data = deflateSync(Buffer.concat(rows));
  const dict = `<< /Type /XRef /Size ${next} /W [1 4 2] /Root 1 0 R /Filter /FlateDecode /DecodeParms << /Columns 7 /Predictor 12 >> /Length ${data.length} >>`;
  const xrefAt = at;
  write(xrefNum, Buffer.concat([Buffer.from(`${dict}\nstream\n`), data, Buffer.from('\nendstream')]));
  parts.push(Buffer.from(`startxref\n${xrefAt}\n%%EOF\n`));
  return Buffer.concat(parts);
}

async function pdfLibFlat(pages: number): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let i = 1; i <= pages; i++) doc.addPage([300, 400]).drawText(`Ledger page ${i}`, { x: 20, y: 300, size: 12, font });
  return Buffer.from(await doc.save());
}

t.test('page tree splitting', async (t) => {
  const ocr = new OcrPool({ size: 1, cacheDir: tempDir(t) });
  t.teardown(() => ocr.close());
  const extract = (bytes: Buffer) => extractPdf({ bytes, ocr: { mode: 'never' }, signal: AbortSignal.timeout(120_000) }, { ocr });

  const readsInOrder = async (t: Test, bytes: Buffer, pages: number) => {
    const doc = await extract(bytes);
    t.equal(doc.metadata.page_count, pages, 'page count');
    const texts = doc.content.split(/^--- Page \d+ ---$/m).slice(1).map((x) => x.trim());
    t.equal(texts.length, pages, 'one text per page');
    const wrong = texts.map((x, i) => (x === `Ledger page ${i + 1}` ? null : `${i + 1}: ${x}`)).filter(Boolean);
    t.same(wrong.slice(0, 5), [], 'every page reads its own text, in order');
  };

  const inherits = async (t: Test, bytes: Buffer, pages: number) => {
    const { doc } = await loadPdf(bytes, AbortSignal.timeout(60_000));
    try {
      for (const n of [1, 2, 65, Math.ceil(pages / 2), pages]) {
        const page = await doc.getPage(n);
        t.same([page.view, page.rotate], [[0, 0, 300, 400], 90], `page ${n} inherits MediaBox and Rotate through the split`);
      }
    } finally {
      await doc.destroy();
    }
  };

  t.test('a flat tree behind a classic xref table', async (t) => {
    const bytes = flatClassicPdf(PAGES);
    const split = rebalancePageTree(bytes);
    t.ok(split, 'rewritten');
    t.same(split!.subarray(0, bytes.length), bytes, 'an incremental update: the original bytes come first, unchanged');
    const tail = split!.subarray(bytes.length).toString('latin1');
    t.match(tail, /\/Prev \d+/, 'the new trailer chains to the old cross-references');
    const rootKids = /2 0 obj\n<<[^]*?\/Kids \[([^\]]*)\]/.exec(tail)![1].trim().split(/\s+R\s*/).filter(Boolean);
    t.ok(rootKids.length <= FANOUT, `the old node holds ${rootKids.length} kids now`);
    t.equal(rebalancePageTree(split!), null, 'a split tree is left as it is');
    await inherits(t, split!, PAGES);
    await readsInOrder(t, bytes, PAGES);
  });

  t.test('a long node below the root, inheriting from both', async (t) => {
    const bytes = nestedFlatPdf(PAGES);
    const split = rebalancePageTree(bytes);
    t.ok(split, 'rewritten');
    await inherits(t, split!, PAGES);
    await readsInOrder(t, bytes, PAGES);
  });

  t.test('a flat tree in object streams behind an xref stream', async (t) => {
    const bytes = flatObjectStreamPdf(PAGES);
    const split = rebalancePageTree(bytes);
    t.ok(split, 'rewritten');
    await inherits(t, split!, PAGES);
    await readsInOrder(t, bytes, PAGES);
  });

  t.test("pdf-lib's flat tree (object streams, xref stream)", async (t) => {
    const bytes = await pdfLibFlat(600);
    t.ok(bytes.includes('/ObjStm'), 'pdf-lib wrote object streams');
    t.ok(rebalancePageTree(bytes), 'rewritten');
    await readsInOrder(t, bytes, 600);
  });

  t.test('balanced trees, short trees and unreadable cross-references are left alone', async (t) => {
    const balanced = balancedClassicPdf(600, 10);
    t.equal(rebalancePageTree(balanced), null, 'a balanced tree');
    await readsInOrder(t, balanced, 600);
    t.equal(rebalancePageTree(flatClassicPdf(200)), null, `a node of 200 kids`);
    t.equal(rebalancePageTree(await pdfLibFlat(3)), null, 'a small pdf-lib file');
    const flat = flatClassicPdf(400);
    const broken = Buffer.from(flat.toString('latin1').replace(/startxref\n\d+/, 'startxref\n12'), 'latin1');
    t.equal(rebalancePageTree(broken), null, 'a startxref that points nowhere');
    t.equal(rebalancePageTree(flat.subarray(0, flat.length / 2)), null, 'a truncated file');
    t.equal(rebalancePageTree(Buffer.from('not a pdf /Kids [1 0 R]')), null, 'not a PDF');
    t.ok(rebalancePageTree(flatClassicPdf(400)), 'the same file with every kid sound is rewritten');
    t.equal(rebalancePageTree(flatClassicPdf(400, (k) => k.map(() => '4 0 R'))), null, 'one kid listed 400 times (pdf.js calls it a cycle)');
    t.equal(rebalancePageTree(flatClassicPdf(400, (k) => ['900000 0 R', ...k])), null, 'a kid no cross-reference knows');
    t.equal(rebalancePageTree(flatClassicPdf(400, (k) => ['<< /Type /Page >>', ...k])), null, 'a kid written in place, not referenced');
  });
});
