/**
 * Linearity of the text-like extractors: every hostile shape (and an ordinary one per format) is
 * extracted at 1x, 2x, 4x and 8x its base size; the table prints the fastest of the runs (the one
 * least disturbed by other load) in ms and the ratio to 1x. Linear work doubles per doubling (2, 4, 8); a quadratic one quadruples (4, 16, 64).
 *
 *   npm run bench:linearity              # all shapes
 *   npm run bench:linearity -- csv-line  # shapes whose name contains the word
 *   LINEARITY_RUNS=5 LINEARITY_SCALES=1,2,4,8,16 npm run bench:linearity
 *
 * CPU time of this process is measured (process.cpuUsage), which is steadier than wall time on a
 * shared machine; the largest input's size is printed beside each row.
 */
import { extractCsv } from '../../src/extractors/csv/csv.ts';
import { extractHtml } from '../../src/extractors/html/html.ts';
import { extractText } from '../../src/extractors/text/text.ts';
import { extractUrls } from '../../src/extractors/shared/urls.ts';
import type { ExtractInput, ProcessedDocument } from '../../src/extractors/shared/types.ts';

interface Shape {
  name: string;
  /** Units at 1x (links, columns, levels...). */
  base: number;
  make: (n: number) => string;
  run: (input: ExtractInput) => Promise<ProcessedDocument>;
  filename: string;
}

const page = (body: string) => `<!doctype html><html><head><title>Bench</title></head><body>${body}</body></html>`;
const html = (input: ExtractInput) => extractHtml(input, { baseUrl: 'https://example.com/' });
const rep = (n: number, f: (i: number) => string) => Array.from({ length: n }, (_, i) => f(i)).join('');

const SHAPES: Shape[] = [
  {
    name: 'html-ordinary-article',
    base: 500,
    filename: 'a.html',
    run: html,
    make: (n) =>
      page(
        `<nav><a href="/">Home</a></nav><article><h1>Title</h1>` +
          rep(n, (i) => `<h2>Section ${i}</h2><p>Paragraph ${i} with <a href="/l${i}">a link</a> and <b>bold</b> words about ducks.</p><ul><li>one</li><li>two</li></ul>`) +
          `<table><tr><th>k</th><th>v</th></tr>${rep(Math.min(n, 200), (i) => `<tr><td>${i}</td><td>v${i}</td></tr>`)}</table></article>`,
      ),
  },
  { name: 'html-unclosed-a', base: 1000, filename: 'a.html', run: html, make: (n) => page(rep(n, (i) => `<a href="/p${i}">link ${i}`)) },
  { name: 'html-unclosed-a-in-blocks', base: 1000, filename: 'a.html', run: html, make: (n) => page(rep(n, (i) => `<a href="/p${i}"><div>x${i}`)) },
  { name: 'html-formatting-bomb', base: 1000, filename: 'a.html', run: html, make: (n) => page(rep(n, (i) => `<b class="c${i}"><p>p${i}`)) },
  { name: 'html-deep-divs', base: 12_500, filename: 'a.html', run: html, make: (n) => page('<div>'.repeat(n) + 'deep' + '</div>'.repeat(n)) },
  { name: 'html-deep-lists', base: 2_500, filename: 'a.html', run: html, make: (n) => page('<ul><li>'.repeat(n) + 'leaf' + '</li></ul>'.repeat(n)) },
  { name: 'html-links', base: 37_500, filename: 'a.html', run: html, make: (n) => page(rep(n, (i) => `<p><a href="https://e.com/p${i}">link ${i}</a></p>`)) },
  { name: 'html-unclosed-scripts', base: 25_000, filename: 'a.html', run: html, make: (n) => page('<p>x</p>' + '<script>'.repeat(n)) },
  {
    name: 'csv-ordinary',
    base: 20_000,
    filename: 'a.csv',
    run: extractCsv,
    make: (n) => 'id,name,amount,date\n' + rep(n, (i) => `${i},name ${i},${(i * 1.5).toFixed(2)},2024-01-${String((i % 28) + 1).padStart(2, '0')}\n`),
  },
  { name: 'csv-one-long-line', base: 3_125, filename: 'a.csv', run: extractCsv, make: (n) => 'abc,def,'.repeat(n) },
  {
    name: 'csv-many-columns',
    base: 125_000,
    filename: 'a.csv',
    run: extractCsv,
    make: (n) => Array.from({ length: n }, (_, i) => `c${i}`).join(',') + '\n' + Array.from({ length: n }, (_, i) => `${i}`).join(',') + '\n',
  },
  { name: 'csv-unterminated-quote', base: 625_000, filename: 'a.csv', run: extractCsv, make: (n) => 'a,b\n1,"' + 'x,y\n'.repeat(n) },
  { name: 'text-ordinary', base: 100_000, filename: 'a.txt', run: extractText, make: (n) => 'The quick brown fox jumps over the lazy dog.\n'.repeat(n) },
  { name: 'text-urls', base: 37_500, filename: 'a.txt', run: extractText, make: (n) => rep(n, (i) => `see https://e.com/${i} `) },
  { name: 'text-url-closers', base: 125_000, filename: 'a.txt', run: extractText, make: (n) => 'https://x.io/a' + ')'.repeat(n) },
];

const runs = Math.max(1, Number(process.env.LINEARITY_RUNS ?? 3));
const scales = (process.env.LINEARITY_SCALES ?? '1,2,4,8').split(',').map(Number).filter((x) => x > 0);
const filter = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const signal = new AbortController().signal;

function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/** Extraction plus the URL pass every document gets, as process_document runs them. */
async function once(shape: Shape, bytes: Buffer): Promise<number> {
  const t0 = cpuMs();
  const doc = await shape.run({ bytes, filename: shape.filename, signal });
  extractUrls({ content: doc.content, pages: doc.pages, urls: doc.urls });
  return cpuMs() - t0;
}

async function main(): Promise<void> {
  const chosen = SHAPES.filter((s) => filter.length === 0 || filter.some((f) => s.name.includes(f)));
  // Warm-up: module loading and the first jsdom window are not the extractor's cost.
  for (const s of chosen) await once(s, Buffer.from(s.make(Math.max(1, Math.floor(s.base / 50)))));
  const header = ['shape', ...scales.map((x) => `${x}x ms`), ...scales.slice(1).map((x) => `${x}x/1x`), `largest input`];
  const rows: string[][] = [];
  for (const s of chosen) {
    const ms: number[] = [];
    let largest = 0;
    for (const x of scales) {
      const bytes = Buffer.from(s.make(s.base * x));
      largest = bytes.length;
      const samples: number[] = [];
      for (let r = 0; r < runs; r++) samples.push(await once(s, bytes));
      ms.push(Math.min(...samples));
    }
    const row = [s.name, ...ms.map((m) => m.toFixed(0)), ...ms.slice(1).map((m) => (m / Math.max(ms[0], 0.001)).toFixed(1)), `${(largest / 1e6).toFixed(1)} MB`];
    rows.push(row);
    console.error(row.join('  '));
  }
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  console.log([line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n'));
  console.log(`\nfastest of ${runs} runs, CPU ms of this process; linear = ratios near ${scales.slice(1).join(', ')}`);
}

await main();
