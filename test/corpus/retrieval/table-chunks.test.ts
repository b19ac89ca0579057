/**
 * Table chunking of every spreadsheet and CSV in the corpus: each valid file chunks and covers every
 * row; the files expected to fail are named with their code (generated tables:
 * test/retrieval/table-chunks.test.ts).
 */
import t, { type Test } from 'tap';
import path from 'node:path';
import { readdirSync } from 'node:fs';
import { extractSpreadsheet } from '../../../src/extractors/spreadsheet/spreadsheet.ts';
import { extractCsv } from '../../../src/extractors/csv/csv.ts';
import { cellText } from '../../../src/extractors/shared/table-pipeline.ts';
import { escapeCell } from '../../../src/extractors/shared/markdown-table.ts';
import type { ExtractedTable } from '../../../src/extractors/shared/types.ts';
import { chunkDocument, indexTextOf, MAX_CHUNK_CHARS } from '../../../src/retrieval/chunking.ts';
import { MAX_CELL_CHARS } from '../../../src/retrieval/table-chunks.ts';
import type { Chunk } from '../../../src/retrieval/types.ts';
import { corpusPath, readCorpus } from '../data-dirs.ts';

const signal = new AbortController().signal;

/** Corpus tables that cannot be read, with the code the extractor must give. */
const EXPECTED_FAILURES: Record<string, string> = {
  'xlsx/password_protected.xlsx': 'PROCESSING_ERROR', // encrypted (CDFV2 container), MANIFEST: "expect a clean error"
};

/** Table lines (below the header and its separator) of a table chunk. */
function rowLines(c: Chunk): string[] {
  const lines = c.text.split('\n');
  const sep = lines.findIndex((l) => /^\|( --- \|)+$/.test(l));
  return sep < 0 ? [] : lines.slice(sep + 1);
}

function assertOffsets(t: Test, chunks: Chunk[]): void {
  const index = indexTextOf(chunks);
  let previousEnd = -2;
  for (const c of chunks) {
    if (index.slice(c.char_start, c.char_end) !== c.text) t.fail(`chunk ${c.chunk_index}: offsets are not its place in the index text`);
    if (c.char_start !== previousEnd + 2) t.fail(`chunk ${c.chunk_index}: offsets do not follow the previous chunk`);
    previousEnd = c.char_end;
  }
  t.pass(`offsets of ${chunks.length} chunks point into the index text`);
}

/** Each table row as the content renders it: cellText, pipes escaped. */
function fullLine(row: NonNullable<ExtractedTable['rows']>[number], width: number): string {
  const cells: string[] = [];
  for (let c = 0; c < width; c++) cells.push(escapeCell(cellText(row[c] ?? null)).slice(0, MAX_CELL_CHARS));
  return `| ${cells.join(' | ')} |`;
}

const extract = (file: string) => {
  const bytes = readCorpus(file);
  return file.endsWith('.csv') ? extractCsv({ bytes, filename: path.basename(file), signal }) : extractSpreadsheet({ bytes, signal });
};

const files = [
  ...readdirSync(corpusPath('xlsx')).filter((f) => f.endsWith('.xlsx')).map((f) => `xlsx/${f}`),
  ...readdirSync(corpusPath('xls')).filter((f) => f.endsWith('.xls')).map((f) => `xls/${f}`),
  ...readdirSync(corpusPath('csv')).filter((f) => f.endsWith('.csv')).map((f) => `csv/${f}`),
];

t.test('the corpus has the tables this test expects', async (t) => {
  t.ok(files.length >= 13, files.join(', '));
  for (const name of Object.keys(EXPECTED_FAILURES)) t.ok(files.includes(name), `${name} is in the corpus`);
});

t.test('corpus spreadsheets and CSVs chunk without error and cover every row', async (t) => {
  for (const file of files.filter((f) => !(f in EXPECTED_FAILURES))) {
    const doc = await extract(file);
    const chunks = chunkDocument(doc);
    t.ok(chunks.length > 0, `${file}: ${chunks.length} chunks`);
    if (chunks.some((c) => c.text.length > MAX_CHUNK_CHARS || !c.text.trim())) t.fail(`${file}: chunk over the limit or blank`);
    assertOffsets(t, chunks);
    let missing = 0;
    let rows = 0;
    for (const table of doc.tables) {
      const sheetChunks = chunks.filter((c) => c.heading_path[0] === table.sheet && c.content_type === 'table');
      const lines = new Set(sheetChunks.flatMap(rowLines));
      const wide = sheetChunks.some((c) => !c.text.includes(`| ${table.headers!.map((h) => escapeCell(h)).join(' | ')} |`));
      for (const row of table.rows!) {
        rows++;
        if (wide) {
          // Column groups: the row's key (first column) is in a line of every group.
          const key = `| ${escapeCell(cellText(row[0]))} |`;
          if (!sheetChunks.some((c) => rowLines(c).some((l) => l.startsWith(key)))) missing++;
        } else if (!lines.has(fullLine(row, table.headers!.length))) missing++;
      }
    }
    t.equal(missing, 0, `${file}: all ${rows} rows of ${doc.tables.length} tables are in chunks`);
  }
});

t.test('the corpus tables expected to fail give their code', async (t) => {
  for (const [file, code] of Object.entries(EXPECTED_FAILURES)) {
    const err = await extract(file).then(
      () => null,
      (e: { code?: string }) => e,
    );
    t.equal(err?.code, code, `${file}: ${code}`);
  }
});

t.test('the empty workbook is one sheet saying so', async (t) => {
  const chunks = chunkDocument(await extractSpreadsheet({ bytes: readCorpus('xlsx/empty.xlsx'), signal }));
  t.same(chunks.map((c) => [c.text, c.page_start, c.heading_path]), [['## Sheet: Sheet1\n\n_Empty sheet._', 1, ['Sheet1']]]);
});
