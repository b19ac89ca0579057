/**
 * The extractors under test and the alternatives a Node user would pick for each format, behind
 * one signature: bytes in, { chars, units } out (units = pages, slides or data rows).
 */
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import type { ProcessedDocument } from '../../src/extractors/shared/types.ts';
import { OcrPool } from '../../src/extractors/ocr/ocr-pool.ts';

export type Format = 'pdf' | 'docx' | 'pptx' | 'xlsx' | 'csv';

export interface ExtractOutcome {
  chars: number;
  /** Pages (PDF), slides (PPTX), data rows (XLSX/CSV); null where the format has no such unit. */
  units: number | null;
}

export type ExtractFn = (bytes: Buffer, filename: string) => Promise<ExtractOutcome>;

export const UNIT_NAME: Record<Format, string | null> = { pdf: 'pages', docx: null, pptx: 'slides', xlsx: 'rows', csv: 'rows' };

export const BASELINE_NAME: Record<Format, string> = {
  pdf: 'pdf-parse 2 (getText)',
  docx: 'mammoth extractRawText',
  pptx: 'officeparser 7 (parseOffice + toText)',
  xlsx: 'SheetJS read + sheet_to_json',
  csv: 'csv-parse/sync',
};

const require = createRequire(import.meta.url);

/** OCR is never reached for born-digital files, but extractPdf needs a pool; workers start lazily. */
let pool: OcrPool | null = null;
function ocrPool(): OcrPool {
  pool ??= new OcrPool({ size: 1, cacheDir: path.join(os.tmpdir(), 'rag-bench-ocr') });
  return pool;
}

export async function closeImpls(): Promise<void> {
  await pool?.close();
  pool = null;
}

function unitsOf(format: Format, doc: ProcessedDocument): number | null {
  if (format === 'pdf') return Number(doc.metadata.page_count ?? doc.pages.length);
  if (format === 'pptx') return doc.pages.filter((p) => p.unit === 'slide').length;
  if (format === 'xlsx' || format === 'csv') return doc.tables.reduce((n, t) => n + (t.rows?.length ?? 0), 0);
  return null;
}

export async function oursFor(format: Format): Promise<ExtractFn> {
  const signal = new AbortController().signal;
  const wrap =
    (fn: (input: { bytes: Buffer; filename: string; signal: AbortSignal }) => Promise<ProcessedDocument>): ExtractFn =>
    async (bytes, filename) => {
      // A fresh copy: pdf.js may transfer (detach) the buffer it is given.
      const doc = await fn({ bytes: Buffer.from(bytes), filename, signal });
      return { chars: doc.content.length, units: unitsOf(format, doc) };
    };
  switch (format) {
    case 'pdf': {
      const { extractPdf } = await import('../../src/extractors/pdf/pdf.ts');
      return wrap((input) => extractPdf(input, { ocr: ocrPool() }));
    }
    case 'docx': {
      const { extractDocx } = await import('../../src/extractors/docx/docx.ts');
      return wrap(extractDocx);
    }
    case 'pptx': {
      const { extractPptx } = await import('../../src/extractors/pptx/pptx.ts');
      return wrap(extractPptx);
    }
    case 'xlsx': {
      const { extractSpreadsheet } = await import('../../src/extractors/spreadsheet/spreadsheet.ts');
      return wrap(extractSpreadsheet);
    }
    case 'csv': {
      const { extractCsv } = await import('../../src/extractors/csv/csv.ts');
      return wrap(extractCsv);
    }
  }
}

export async function baselineFor(format: Format): Promise<ExtractFn> {
  switch (format) {
    case 'pdf': {
      const { PDFParse } = await import('pdf-parse');
      // pdf-parse bundles pdf.js 5.4 and unpdf pdf.js 5.6; both look up their in-process worker
      // at globalThis.pdfjsWorker, so each call runs with pdf-parse's own worker there and puts
      // back whatever was there before (calls never overlap in this benchmark).
      // Our loadPdf removes the global DecompressionStream (pdf-render.ts useInflaterOfPdfjs);
      // pdf-parse runs with Node's, as it would in a process of its own.
      const g = globalThis as { pdfjsWorker?: unknown; DecompressionStream?: unknown };
      const nodeDecompressionStream = g.DecompressionStream;
      let own: unknown;
      return async (bytes) => {
        const saved = g.pdfjsWorker;
        const savedStream = g.DecompressionStream;
        g.DecompressionStream = nodeDecompressionStream;
        if (own) g.pdfjsWorker = own;
        else delete g.pdfjsWorker;
        const parser = new PDFParse({ data: new Uint8Array(bytes) });
        try {
          const r = await parser.getText();
          return { chars: r.text.length, units: r.total ?? r.pages?.length ?? null };
        } finally {
          await parser.destroy();
          own ??= g.pdfjsWorker;
          g.pdfjsWorker = saved;
          if (savedStream === undefined) delete g.DecompressionStream;
          else g.DecompressionStream = savedStream;
        }
      };
    }
    case 'docx': {
      const mammoth = require('mammoth') as typeof import('mammoth');
      return async (bytes) => {
        const r = await mammoth.extractRawText({ buffer: Buffer.from(bytes) });
        return { chars: r.value.length, units: null };
      };
    }
    case 'pptx': {
      const { parseOffice } = await import('officeparser');
      return async (bytes) => {
        const ast = await parseOffice(Buffer.from(bytes));
        const slides = (ast.content ?? []).filter((n: { type?: string }) => n.type === 'slide').length;
        return { chars: ast.toText().length, units: slides || null };
      };
    }
    case 'xlsx': {
      const XLSX = require('xlsx') as typeof import('xlsx');
      return async (bytes) => {
        const wb = XLSX.read(bytes, { type: 'buffer', cellDates: true });
        let chars = 0;
        let rows = 0;
        for (const name of wb.SheetNames) {
          const data = XLSX.utils.sheet_to_json<unknown[]>(wb.Sheets[name], { header: 1, defval: null });
          rows += Math.max(0, data.length - 1);
          for (const r of data) chars += JSON.stringify(r).length;
        }
        return { chars, units: rows };
      };
    }
    case 'csv': {
      const { parse } = (await import('csv-parse/sync')) as typeof import('csv-parse/sync');
      return async (bytes) => {
        const records = parse(bytes.toString('utf8'), { relax_column_count: true, skip_empty_lines: true }) as string[][];
        return { chars: records.reduce((n, r) => n + r.join(' | ').length, 0), units: Math.max(0, records.length - 1) };
      };
    }
  }
}
