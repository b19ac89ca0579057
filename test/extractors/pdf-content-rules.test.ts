/**
 * Ruling lines read from the raw content stream (src/extractors/pdf/pdf-content-rules.ts) equal
 * the ones pdf.js's operator list gives (pdf-rules.ts pageRules), rule for rule and in order, on
 * generated pages that draw the ways a table's rules are drawn: `re`, stroked and closed paths,
 * thin filled bars, q/cm/Q (also left unclosed), curves, clipping, text between, a rotated page and
 * forms (nested, with a /Matrix). Pages this reader does not follow (an inline image, a Q without its
 * q, a curve short of operands, annotations, an optional-content form) give null, and the extractor falls back to pdf.js, with
 * the same tables in its output.
 */
import t from 'tap';
import { PDFDocument, PDFName, StandardFonts, type PDFPage, type PDFRef } from 'pdf-lib';
import { loadPdf } from '../../src/extractors/pdf/pdf-render.ts';
import { pageRules } from '../../src/extractors/pdf/pdf-rules.ts';
import { RawPdf, type PdfRef } from '../../src/extractors/pdf/pdf-raw-objects.ts';
import { rulesFromContent } from '../../src/extractors/pdf/pdf-content-rules.ts';
import { extractPdf } from '../../src/extractors/pdf/pdf.ts';
import { OcrPool } from '../../src/extractors/ocr/ocr-pool.ts';
import { tempDir } from '../helper.ts';

/** A ruled 4x3 table of text cells, drawn with `re` strokes for the cells. */
function ruledTable(x0: number, y0: number): string {
  const ops: string[] = ['0.5 w'];
  for (let r = 0; r < 4; r++) for (let c = 0; c < 3; c++) ops.push(`${x0 + c * 120} ${y0 - r * 20} 120 20 re S`);
  ops.push('BT /F0 10 Tf');
  for (let r = 0; r < 4; r++) for (let c = 0; c < 3; c++) ops.push(`1 0 0 1 ${x0 + c * 120 + 4} ${y0 - r * 20 + 6} Tm (r${r}c${c} value ${r * 3 + c}) Tj`);
  ops.push('ET');
  return ops.join('\n');
}

interface PageSpec {
  content: string;
  rotate?: number;
  forms?: Array<{ name: string; content: string; matrix?: number[]; oc?: boolean; forms?: Array<{ name: string; content: string; matrix?: number[] }> }>;
  annotate?: boolean;
}

async function makePdf(pages: PageSpec[]): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const ctx = doc.context;
  const formRef = (f: { content: string; matrix?: number[]; oc?: boolean; forms?: Array<{ name: string; content: string; matrix?: number[] }> }): PDFRef => {
    const dict: Record<string, unknown> = { Type: 'XObject', Subtype: 'Form', BBox: [0, 0, 612, 792] };
    if (f.matrix) dict.Matrix = f.matrix;
    if (f.oc) dict.OC = ctx.register(ctx.obj({ Type: 'OCG', Name: ctx.obj('hidden') }));
    const xobjects: Record<string, PDFRef> = {};
    for (const inner of f.forms ?? []) xobjects[inner.name] = formRef(inner);
    dict.Resources = ctx.obj({ Font: { F0: font.ref }, ...(f.forms?.length ? { XObject: xobjects } : {}) });
    return ctx.register(ctx.flateStream(f.content, dict as never));
  };
  for (const spec of pages) {
    const page: PDFPage = doc.addPage([612, 792]);
    if (spec.rotate) page.setRotation({ type: 'degrees', angle: spec.rotate } as never);
    page.node.setFontDictionary(PDFName.of('F0'), font.ref);
    for (const f of spec.forms ?? []) page.node.setXObject(PDFName.of(f.name), formRef(f));
    page.node.set(PDFName.of('Contents'), ctx.register(ctx.flateStream(spec.content)));
    if (spec.annotate) {
      const annot = ctx.register(ctx.obj({ Type: 'Annot', Subtype: 'Square', Rect: [10, 10, 200, 100] }));
      page.node.set(PDFName.of('Annots'), ctx.obj([annot]));
    }
  }
  return Buffer.from(await doc.save({ useObjectStreams: false }));
}

const FOLLOWED: Array<[string, PageSpec]> = [
  ['cells drawn with re and S', { content: ruledTable(72, 700) }],
  [
    'lines stroked one by one, a closed stroke (s), thin filled bars, a curve and a clip',
    {
      content: [
        '72 650 m 540 650 l S',
        '72 630 m 540 630 l 540 610 l 72 610 l s',
        '72 590 468 1.5 re f',
        '300 400 0.8 150 re f*',
        '100 100 m 150 200 200 50 250 100 c 300 100 l S',
        '100 300 m 200 350 300 300 v 350 350 400 300 y h S',
        '72 72 468 648 re W n',
        '0 0 0 0 re S',
        '72 500 100 0 re S',
        ruledTable(72, 560),
      ].join('\n'),
    },
  ],
  [
    'transforms: q cm Q, nested, a scaled and a rotated table, one q left unclosed',
    {
      content: [
        'q 1 0 0 1 10.25 -30.5 cm',
        ruledTable(72, 700),
        'q 0.5 0 0 0.5 100 100 cm',
        ruledTable(72, 400),
        'Q',
        'q 0 1 -1 0 600 100 cm 0 0 300 0.5 re f Q',
        'Q',
        'q 1 0 0 1 3.3 3.3 cm 72 200 m 540 200 l S',
      ].join('\n'),
    },
  ],
  ['a rotated page', { content: ruledTable(72, 700), rotate: 90 }],
  [
    'forms: one with a /Matrix, one inside another, an image-free Do',
    {
      content: `/Fm1 Do q 1 0 0 1 0 -300 cm /Fm2 Do Q ${ruledTable(72, 200)}`,
      forms: [
        { name: 'Fm1', content: ruledTable(72, 700), matrix: [0.75, 0, 0, 0.75, 50, 100] },
        { name: 'Fm2', content: `q 72 600 468 0.5 re f Q /Fm3 Do`, forms: [{ name: 'Fm3', content: ruledTable(100, 500), matrix: [1, 0, 0, 1, 0, -100] }] },
      ],
    },
  ],
];

const NOT_FOLLOWED: Array<[string, PageSpec]> = [
  ['an inline image', { content: `${ruledTable(72, 700)}\nq 10 0 0 10 300 300 cm BI /W 1 /H 1 /BPC 8 /CS /G ID \u0080 EI Q` }],
  ['a Q without its q', { content: `Q ${ruledTable(72, 700)}` }],
  ['an operator without its operands', { content: `${ruledTable(72, 700)}\n100 300 m 200 300 v h S` }],
  ['annotations', { content: ruledTable(72, 700), annotate: true }],
  ['an optional-content form', { content: '/Fm1 Do', forms: [{ name: 'Fm1', content: ruledTable(72, 700), oc: true }] }],
];

async function compare(bytes: Buffer) {
  const { doc, pdfjs } = await loadPdf(bytes, new AbortController().signal, { textOnly: true });
  const raw = new RawPdf(bytes);
  const out: Array<{ ours: unknown; pdfjs: unknown }> = [];
  for (let n = 1; n <= doc.numPages; n++) {
    const page = await doc.getPage(n);
    const ref = (page as unknown as { ref: PdfRef }).ref;
    out.push({ ours: rulesFromContent(raw, ref, page.getViewport({ scale: 1 }).transform), pdfjs: await pageRules(page, pdfjs) });
    page.cleanup();
  }
  await doc.destroy();
  return out;
}

t.test('the raw content gives the rules pdf.js gives, in the same order', async (t) => {
  const bytes = await makePdf(FOLLOWED.map(([, spec]) => spec));
  const pages = await compare(bytes);
  for (const [i, [label]] of FOLLOWED.entries()) {
    const { ours, pdfjs } = pages[i]!;
    t.ok(Array.isArray(pdfjs) && pdfjs.length >= 6, `${label}: pdf.js finds rules`);
    t.same(ours, pdfjs, `${label}: the same rules`);
    t.equal(JSON.stringify(ours), JSON.stringify(pdfjs), `${label}: the same floats, in the same order`);
  }
});

t.test('pages this reader does not follow are left to pdf.js, and the output is the same', async (t) => {
  const bytes = await makePdf(NOT_FOLLOWED.map(([, spec]) => spec));
  const pages = await compare(bytes);
  for (const [i, [label]] of NOT_FOLLOWED.entries()) t.equal(pages[i]!.ours, null, `${label}: null`);
  const pool = new OcrPool({ size: 1, cacheDir: tempDir(t) });
  t.teardown(() => pool.close());
  const doc = await extractPdf({ bytes, filename: 'x.pdf', signal: new AbortController().signal, ocr: { mode: 'never' } }, { ocr: pool });
  t.match(doc.content, /\| r1c0 value 3 \| r1c1 value 4 \| r1c2 value 5 \|/, 'the ruled table read through pdf.js');
  const followed = await extractPdf({ bytes: await makePdf([FOLLOWED[0]![1]]), filename: 'y.pdf', signal: new AbortController().signal, ocr: { mode: 'never' } }, { ocr: pool });
  t.match(followed.content, /\| r1c0 value 3 \| r1c1 value 4 \| r1c2 value 5 \|/, 'the ruled table read from the raw content');
});
