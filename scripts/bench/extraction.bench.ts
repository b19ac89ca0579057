/**
 * Extraction throughput per format — MB/s, pages (slides, rows) per second, peak RSS — of our
 * extractors against the library a Node user would pick, on the same bytes: generated documents
 * (100-page PDF, 60-chapter DOCX, 60-slide PPTX, 5,000-row XLSX, 20,000-row CSV) and real
 * third-party files from ../shared/corpus read in place.
 *
 *   npm run bench:extraction
 */
import fs from 'node:fs';
import path from 'node:path';
import { BASELINE_NAME, UNIT_NAME, baselineFor, closeImpls, oursFor, type Format } from './extract-impls.ts';
import { ensureInputs } from './inputs.ts';
import { CORPUS, QUICK, SectionBuilder, comparePair, isMain, log, mb, round, runChild, runStandalone } from './harness.ts';
import type { Section } from './report.ts';

interface Case {
  format: Format;
  label: string;
  file: string;
  /** Peak RSS is measured in child processes for the generated file of each format only. */
  rss?: boolean;
  /** Fewer runs for files that take seconds each. */
  runs?: number;
}

export async function runExtraction(): Promise<Section> {
  const inputs = await ensureInputs();
  const runs = QUICK ? 2 : 5;
  const b = new SectionBuilder('extraction', '1. Extraction throughput', { warmup: 1, runs, runs_for_handbook_docx: 2 });
  const corpus = (rel: string) => path.join(CORPUS, rel);
  const cases: Case[] = [
    { format: 'pdf', label: 'generated 100 pages', file: inputs.pdf100, rss: true },
    { format: 'pdf', label: 'corpus redp5110_sampled.pdf (18 p.)', file: corpus('pdf/redp5110_sampled.pdf') },
    { format: 'pdf', label: 'corpus test.pdf (1 p.)', file: corpus('pdf/test.pdf') },
    { format: 'docx', label: 'generated 60 chapters', file: inputs.docx, rss: true },
    { format: 'docx', label: 'corpus handbook-872p.docx', file: corpus('docx/handbook-872p.docx'), runs: 2 },
    { format: 'pptx', label: 'generated 60 slides', file: inputs.pptx, rss: true },
    { format: 'pptx', label: 'corpus test.pptx', file: corpus('pptx/test.pptx') },
    { format: 'xlsx', label: 'generated 5,000 rows', file: inputs.xlsx5000, rss: true },
    { format: 'xlsx', label: 'corpus xlsx_01.xlsx', file: corpus('xlsx/xlsx_01.xlsx') },
    { format: 'csv', label: 'generated 20,000 rows', file: inputs.csv, rss: true },
    { format: 'csv', label: 'corpus csv-with-long-lines.csv', file: corpus('csv/csv-with-long-lines.csv') },
  ].filter((c) => fs.existsSync(c.file)) as Case[];
  if (QUICK) cases.splice(0, cases.length, ...cases.filter((c) => c.rss));

  const speed = b.table('Throughput (median of runs; same bytes for both)', [
    'format',
    'file',
    'MB',
    'units',
    'ours ms',
    'ours MB/s',
    'ours units/s',
    'alternative',
    'alt ms',
    'alt MB/s',
    'alt units/s',
    'x faster',
    'spread ours / alt',
    'chars out ours / alt',
  ]);
  const raw: Record<string, unknown>[] = [];
  for (const c of cases) {
    const bytes = fs.readFileSync(c.file);
    const name = path.basename(c.file);
    const ours = await oursFor(c.format);
    const base = await baselineFor(c.format);
    const o1 = await ours(bytes, name);
    const b1 = await base(bytes, name);
    log(`extraction ${c.format} ${c.label}`);
    const pair = await comparePair(() => ours(bytes, name), () => base(bytes, name), { warmup: 1, runs: Math.min(runs, c.runs ?? runs) });
    const size = mb(bytes.length);
    const units = o1.units;
    const perS = (n: number | null, ms: number) => (n === null ? null : round(n / (ms / 1000), 1));
    speed.rows.push([
      c.format,
      c.label,
      round(size, 3),
      units === null ? '—' : `${units} ${UNIT_NAME[c.format]}`,
      pair.ours.median_ms,
      round(size / (pair.ours.median_ms / 1000), 2),
      perS(units, pair.ours.median_ms),
      BASELINE_NAME[c.format],
      pair.baseline.median_ms,
      round(size / (pair.baseline.median_ms / 1000), 2),
      perS(units, pair.baseline.median_ms),
      pair.speedup,
      `${pair.ours.spread} / ${pair.baseline.spread}`,
      `${o1.chars} / ${b1.chars}`,
    ]);
    raw.push({ ...c, bytes: bytes.length, ours_out: o1, baseline_out: b1, ...pair });
  }
  await closeImpls();

  const rssTable = b.table(
    'Peak RSS (fresh process per extractor: RSS after loading the library, peak sampled during one extraction, and the growth)',
    ['format', 'file', 'ours: loaded MB', 'ours: peak MB', 'ours: +MB', 'alternative', 'alt: loaded MB', 'alt: peak MB', 'alt: +MB'],
  );
  const rssRaw: Record<string, unknown>[] = [];
  for (const c of cases.filter((x) => x.rss)) {
    const probe = path.join(path.dirname(new URL(import.meta.url).pathname), 'rss-probe.ts');
    const opts = { timeoutMs: 180_000, nodeArgs: ['--expose-gc'] };
    // RSS is per process, so both children can run at once.
    const [o, a] = (await Promise.all([
      runChild(probe, [c.format, 'ours', c.file], opts),
      runChild(probe, [c.format, 'baseline', c.file], opts),
    ])) as Array<{ rss_after_load_mb: number; peak_rss_mb: number }>;
    rssTable.rows.push([
      c.format,
      c.label,
      round(o.rss_after_load_mb, 1),
      round(o.peak_rss_mb, 1),
      round(o.peak_rss_mb - o.rss_after_load_mb, 1),
      BASELINE_NAME[c.format],
      round(a.rss_after_load_mb, 1),
      round(a.peak_rss_mb, 1),
      round(a.peak_rss_mb - a.rss_after_load_mb, 1),
    ]);
    rssRaw.push({ format: c.format, file: c.file, ours: o, baseline: a });
  }

  const geo = Math.exp(raw.reduce((s, r) => s + Math.log((r as { speedup: number }).speedup), 0) / Math.max(1, raw.length));
  b.note(`Geometric mean of "x faster" over all files: ${round(geo, 2)}.`);
  b.note(
    'Our extractors do more than the alternatives: PDF keeps reading order, page markers and a page map and checks each page for OCR; ' +
      'DOCX renders headings, lists and tables as Markdown; PPTX adds slide order, tables and notes; XLSX/CSV detect headers, type columns and render tables. ' +
      '"chars out" shows that both read the same text volume.',
  );
  b.section.data = { cases: raw, rss: rssRaw };
  return b.finish();
}

if (isMain(import.meta.url)) await runStandalone(runExtraction);
