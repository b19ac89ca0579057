/**
 * The demo's sample documents, generated (nothing is copied or downloaded): one file per name in
 * DEMO_FILES (src/tools/examples.ts), whose contents answer the OpenAPI examples' other inputs (the
 * PDF speaks of agents that converse to solve tasks, the workbook holds SAMPLE_XLSX_UUID in column
 * Beta), plus a Markdown note and an HTML page. The Word and PowerPoint files come from the test
 * suite's builders (test/fixtures-gen/, which scripts may import); the rest is written here.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createCanvas } from '@napi-rs/canvas';
import * as XLSX from 'xlsx';
import { DEMO_FILES, SAMPLE_XLSX_UUID } from '../../src/tools/examples.ts';
import { makeMinimalPdf } from '../../test/fixtures-gen/minimal-pdf.ts';
import { makeSampleDocx, makeSamplePptx } from '../../test/fixtures-gen/make-office-fixtures.ts';

/** Files beside DEMO_FILES that only the demo's commands use. */
export const DEMO_EXTRA_FILES = { markdown: 'notes.md', html: 'harbour.html' } as const;

const AGENTS_PDF = {
  title: 'Conversing Agents',
  author: 'npm run demo',
  pages: [
    [
      'Conversing agents',
      'A multi-agent conversation framework lets several agents converse to solve tasks.',
      'An assistant agent writes a plan and the code for it.',
      'A user proxy agent runs that code and reports the result back.',
      'The agents converse in turns until the task is solved.',
      'A human can join the conversation at any turn to steer it.',
      'Each agent keeps the whole conversation as its context.',
      'Conversation patterns include two-agent chats and group chats.',
      'In a group chat a manager agent picks the next speaker.',
    ],
    [
      'Tools and termination',
      'Agents may call tools: a search, a calculator, a code runner.',
      'A conversation ends when an agent says the task is done,',
      'or after a fixed number of turns set by the developer.',
      'Logs of each conversation show which agent said what, and when.',
    ],
  ],
};

const INVOICE_PDF = {
  title: 'Invoice 2024-INV-017',
  author: 'Harbour Repair Services',
  pages: [
    ['Invoice 2024-INV-017', 'Harbour Repair Services, Quay Road 4', 'Billed to: North Pier Authority', 'Date: 14 March 2024', 'Item 1: hydraulic hose for crane seven, 1 x 240.00'],
    ['Invoice 2024-INV-017, page 2', 'Item 2: paint for two bollards, 2 x 35.00', 'Item 3: labour, 6 hours x 55.00'],
    ['Invoice 2024-INV-017, page 3', 'Subtotal: 640.00', 'Tax 20 percent: 128.00', 'Total due: 768.00, within thirty days'],
  ],
};

/** A photographed page, for OCR: dark text on an off-white background. */
const PAGE_LINES = ['CONVERSING AGENTS', 'Agents converse to solve tasks.', 'One writes code, another runs it.', 'A human may join at any turn.'];

function pageImage(): Buffer {
  const canvas = createCanvas(1000, 420);
  const ctx = canvas.getContext('2d');
  ctx.fillStyle = '#f7f5ef';
  ctx.fillRect(0, 0, 1000, 420);
  ctx.fillStyle = '#111111';
  PAGE_LINES.forEach((line, i) => {
    ctx.font = `${i === 0 ? 48 : 40}px "DejaVu Sans", sans-serif`;
    ctx.fillText(line, 40, 80 + i * 90);
  });
  return canvas.encodeSync('jpeg', 92);
}

function workbook(): Buffer {
  const wb = XLSX.utils.book_new();
  const sheet1 = [
    ['Alpha', 'Beta', 'Gamma', 'Delta'],
    [89, 'first entry', 100, 12],
    [58, SAMPLE_XLSX_UUID, 22, 9],
    [31, 'third entry', 47, 3],
  ];
  const sheet2 = [
    ['Site', 'Herons', 'Egrets'],
    ['North marsh', 42, 7],
    ['South lagoon', 13, 21],
  ];
  XLSX.utils.book_append_sheet(wb, XLSX.utils.aoa_to_sheet(sheet1), 'Sheet1');
  XLSX.utils.book_append_sheet(wb, XLSX.utils.aoa_to_sheet(sheet2), 'Counts');
  return XLSX.write(wb, { type: 'buffer', bookType: 'xlsx' }) as Buffer;
}

const CUSTOMERS_CSV = [
  'id;name;city;country;email;since',
  '1;"Nordlund, Anna";Bergen;Norway;anna@example.test;2019-04-02',
  '2;Tomás Ruiz;Valencia;Spain;tomas@example.test;2020-11-17',
  '3;"Ha, Minh";Hanoi;Vietnam;minh@example.test;2021-06-30',
  '4;Grace Obi;Lagos;Nigeria;grace@example.test;2022-01-09',
  '5;"Müller; Jonas";Basel;Switzerland;jonas@example.test;2023-08-21',
].join('\n');

const NOTES_MD = `# Harbour notes

## Crane maintenance

Crane seven received a new hydraulic hose after the pressure test failed.
The next inspection of the crane is due in September.

## Tides

Spring tides reach the upper quay twice a month.
Ferries wait at the outer mooring during the lowest tides.
`;

const HARBOUR_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Harbour visitor guide</title></head>
<body>
<nav><a href="/">Home</a></nav>
<article>
<h1>Harbour visitor guide</h1>
<p>The harbour museum opens at nine and closes at five, every day but Monday.</p>
<h2>Ferries</h2>
<p>Ferries to the islands leave from the outer mooring every hour on the hour.</p>
<table><tr><th>Route</th><th>Minutes</th></tr><tr><td>North island</td><td>25</td></tr><tr><td>South island</td><td>40</td></tr></table>
</article>
</body></html>
`;

/** Writes every sample into `dir` (created); returns the file names written. */
export async function writeDemoFiles(dir: string): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  const files: Record<string, Buffer | string> = {
    [DEMO_FILES.pdf]: makeMinimalPdf(AGENTS_PDF),
    [DEMO_FILES.invoicePdf]: makeMinimalPdf(INVOICE_PDF),
    [DEMO_FILES.docx]: await makeSampleDocx(),
    [DEMO_FILES.pptx]: await makeSamplePptx(),
    [DEMO_FILES.xlsx]: workbook(),
    [DEMO_FILES.csv]: `${CUSTOMERS_CSV}\n`,
    [DEMO_FILES.image]: pageImage(),
    [DEMO_EXTRA_FILES.markdown]: NOTES_MD,
    [DEMO_EXTRA_FILES.html]: HARBOUR_HTML,
  };
  for (const [name, content] of Object.entries(files)) await writeFile(path.join(dir, name), content);
  return Object.keys(files);
}
