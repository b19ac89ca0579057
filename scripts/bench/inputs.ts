/**
 * Benchmark inputs generated from dev dependencies (pdfkit, docx, pptxgenjs, exceljs) with real
 * English text (SciFact abstracts), deterministic (seeded), cached in data/bench-inputs/ and
 * rebuilt when missing or when INPUTS_VERSION changes.
 */
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { BENCH_INPUTS_DIR, SCIFACT, log, writeAtomic } from './harness.ts';

const INPUTS_VERSION = 1;
const require = createRequire(import.meta.url);

export interface Abstract {
  id: string;
  title: string;
  text: string;
}

let abstractsCache: Abstract[] | null = null;

/** SciFact abstracts in file order (5,183). */
export function abstracts(): Abstract[] {
  if (!abstractsCache) {
    abstractsCache = fs
      .readFileSync(SCIFACT, 'utf8')
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => {
        const d = JSON.parse(l) as { _id: string; title: string; text: string };
        return { id: d._id, title: d.title, text: d.text };
      });
  }
  return abstractsCache;
}

/** Deterministic PRNG (mulberry32). */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface GeneratedInputs {
  pdf100: string;
  docx: string;
  pptx: string;
  xlsx5000: string;
  csv: string;
}

export const PDF_PAGES = 100;
export const DOCX_SECTIONS = 60;
export const PPTX_SLIDES = 60;
export const XLSX_ROWS = 5000;
export const CSV_ROWS = 20000;

/** Text for page p: a heading plus abstracts up to ~2,600 chars (fits one Letter page at 10 pt). */
function pageText(p: number): { heading: string; body: string[] } {
  const all = abstracts();
  const body: string[] = [];
  let len = 0;
  for (let i = p * 3; len < 2600 && i < all.length; i++) {
    const para = all[i].text.slice(0, 2600 - len);
    body.push(para);
    len += para.length;
  }
  return { heading: `Section ${p + 1}: ${all[p * 3].title}`, body };
}

async function makePdf(file: string): Promise<void> {
  const PDFDocument = require('pdfkit') as typeof import('pdfkit');
  const doc = new PDFDocument({ autoFirstPage: false, info: { Title: 'Benchmark report', Author: 'bench' } });
  const chunks: Buffer[] = [];
  doc.on('data', (c: Buffer) => chunks.push(c));
  const done = new Promise<void>((resolve) => doc.on('end', () => resolve()));
  for (let p = 0; p < PDF_PAGES; p++) {
    doc.addPage({ size: 'LETTER', margin: 60 });
    const { heading, body } = pageText(p);
    doc.font('Helvetica-Bold').fontSize(13).text(heading.slice(0, 110));
    doc.moveDown(0.5);
    doc.font('Helvetica').fontSize(9.5);
    for (const para of body) {
      doc.text(para, { align: 'left' });
      doc.moveDown(0.5);
    }
  }
  doc.end();
  await done;
  writeAtomic(file, Buffer.concat(chunks));
}

async function makeDocx(file: string): Promise<void> {
  const { Document, HeadingLevel, Packer, Paragraph, Table, TableCell, TableRow, TextRun } = await import('docx');
  const all = abstracts();
  const children: Array<InstanceType<typeof Paragraph> | InstanceType<typeof Table>> = [];
  for (let s = 0; s < DOCX_SECTIONS; s++) {
    children.push(new Paragraph({ text: `Chapter ${s + 1}: ${all[s].title}`, heading: HeadingLevel.HEADING_1 }));
    for (let j = 0; j < 3; j++) {
      const a = all[DOCX_SECTIONS + s * 3 + j];
      children.push(new Paragraph({ text: a.title, heading: HeadingLevel.HEADING_2 }));
      children.push(new Paragraph({ children: [new TextRun(a.text)] }));
    }
    if (s % 6 === 0) {
      const r = rng(s + 1);
      const rows = [['Cohort', 'Patients', 'Effect size', 'p value']].concat(
        Array.from({ length: 8 }, (_, i) => [`Group ${i + 1}`, String(Math.floor(r() * 900 + 100)), (r() * 2).toFixed(2), (r() * 0.05).toFixed(4)]),
      );
      children.push(
        new Table({ rows: rows.map((cells) => new TableRow({ children: cells.map((c) => new TableCell({ children: [new Paragraph(c)] })) })) }),
      );
    }
  }
  const doc = new Document({ creator: 'bench', title: 'Benchmark handbook', sections: [{ children }] });
  writeAtomic(file, (await Packer.toBuffer(doc)));
}

async function makePptx(file: string): Promise<void> {
  const mod = require('pptxgenjs') as { default?: unknown };
  const PptxGenJS = (mod.default ?? mod) as new () => {
    addSlide(): { addText(t: unknown, o: unknown): void; addNotes(t: string): void; addTable(rows: unknown, o: unknown): void };
    write(o: { outputType: 'nodebuffer' }): Promise<unknown>;
    title: string;
  };
  const pres = new PptxGenJS();
  pres.title = 'Benchmark deck';
  const all = abstracts();
  for (let s = 0; s < PPTX_SLIDES; s++) {
    const slide = pres.addSlide();
    const a = all[500 + s];
    slide.addText(a.title.slice(0, 120), { x: 0.4, y: 0.2, w: 9, h: 0.8, fontSize: 20, bold: true });
    const sentences = a.text.split(/(?<=\.)\s+/).slice(0, 5);
    slide.addText(
      sentences.map((t) => ({ text: t.slice(0, 220), options: { bullet: true } })),
      { x: 0.5, y: 1.1, w: 9, h: 4, fontSize: 12 },
    );
    if (s % 10 === 0) {
      slide.addTable(
        [
          ['Metric', 'Q1', 'Q2'],
          ['Revenue', '1.2', '1.5'],
          ['Growth', '12%', '15%'],
        ],
        { x: 0.5, y: 5.2, w: 6 },
      );
    }
    slide.addNotes(`Speaker notes for slide ${s + 1}: ${all[700 + s].text.slice(0, 300)}`);
  }
  writeAtomic(file, (await pres.write({ outputType: 'nodebuffer' })) as Buffer);
}

const REGIONS = ['North', 'South', 'East', 'West', 'Central'];
const PRODUCTS = ['Widget', 'Gadget', 'Sprocket', 'Gizmo', 'Doohickey', 'Thingamajig', 'Contraption'];

export function salesRow(i: number, r: () => number): Array<string | number | Date> {
  const qty = Math.floor(r() * 500) + 1;
  const price = Math.round(r() * 10000) / 100;
  const words = abstracts()[i % 5000].title.split(/\s+/).slice(0, 8).join(' ');
  return [
    `ORD-${String(100000 + i)}`,
    new Date(Date.UTC(2023, 0, 1) + Math.floor(r() * 700) * 86400000),
    REGIONS[Math.floor(r() * REGIONS.length)],
    PRODUCTS[Math.floor(r() * PRODUCTS.length)],
    words,
    qty,
    price,
    Math.round(qty * price * 100) / 100,
  ];
}

export const SALES_HEADER = ['Order ID', 'Date', 'Region', 'Product', 'Description', 'Quantity', 'Unit Price', 'Total'];

async function makeXlsx(file: string): Promise<void> {
  const ExcelJS = require('exceljs') as typeof import('exceljs');
  const wb = new ExcelJS.Workbook();
  const ws = wb.addWorksheet('Sales');
  ws.addRow(SALES_HEADER);
  const r = rng(42);
  for (let i = 0; i < XLSX_ROWS; i++) ws.addRow(salesRow(i, r));
  const summary = wb.addWorksheet('Summary');
  summary.addRow(['Region', 'Orders']);
  for (const reg of REGIONS) summary.addRow([reg, Math.floor(r() * 1000)]);
  writeAtomic(file, Buffer.from(await wb.xlsx.writeBuffer()));
}

function makeCsv(file: string): void {
  const r = rng(7);
  const lines = [SALES_HEADER.join(',')];
  for (let i = 0; i < CSV_ROWS; i++) {
    const row = salesRow(i, r).map((v) => (v instanceof Date ? v.toISOString().slice(0, 10) : typeof v === 'string' && /[",]/.test(v) ? `"${v.replace(/"/g, '""')}"` : String(v)));
    lines.push(row.join(','));
  }
  writeAtomic(file, lines.join('\n') + '\n');
}

/** Builds (or reuses) every generated input; returns their paths. */
export async function ensureInputs(): Promise<GeneratedInputs> {
  const dir = path.join(BENCH_INPUTS_DIR, `v${INPUTS_VERSION}`);
  fs.mkdirSync(dir, { recursive: true });
  const files: GeneratedInputs = {
    pdf100: path.join(dir, 'report-100p.pdf'),
    docx: path.join(dir, 'handbook-60ch.docx'),
    pptx: path.join(dir, 'deck-60.pptx'),
    xlsx5000: path.join(dir, 'sales-5000.xlsx'),
    csv: path.join(dir, 'sales-20000.csv'),
  };
  const makers: Record<keyof GeneratedInputs, (f: string) => Promise<void> | void> = {
    pdf100: makePdf,
    docx: makeDocx,
    pptx: makePptx,
    xlsx5000: makeXlsx,
    csv: makeCsv,
  };
  for (const [k, f] of Object.entries(files) as Array<[keyof GeneratedInputs, string]>) {
    if (fs.existsSync(f) && fs.statSync(f).size > 0) continue;
    log(`generating ${path.basename(f)}`);
    await makers[k](f);
  }
  return files;
}
