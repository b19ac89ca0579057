/**
 * Renders benchmark sections and merges them into docs/benchmarks.md. The document is the record:
 * each benchmark's part sits between its own marker comments and a run replaces only that part,
 * so the latest result of every benchmark stays whatever ran last (bench/results.json, the raw
 * numbers, is local and not committed). The contents table and the summary of checks above the
 * parts are rebuilt from the parts on every write.
 */
import { BENCHMARKS, type Benchmark } from './registry.ts';
// The results model: written by harness.ts (SectionBuilder, saveSection), rendered here.

export interface Table {
  title: string;
  columns: string[];
  rows: Array<Array<string | number | boolean | null>>;
  note?: string;
}

export interface Check {
  name: string;
  pass: boolean;
  detail: string;
}

export interface Section {
  name: string;
  title: string;
  started_at: string;
  duration_s: number;
  machine: Record<string, unknown>;
  settings: Record<string, unknown>;
  tables: Table[];
  checks: Check[];
  notes: string[];
  /** Raw numbers (samples, per-run timings) for anyone who wants more than the tables. */
  data: Record<string, unknown>;
  /** Set when the benchmark could not run (e.g. a module it needs is not there yet). */
  skipped?: string;
  /** What a benchmark that prints its own tables printed (shown verbatim). */
  output?: string;
}

export interface ResultsFile {
  generated_at: string;
  machine: Record<string, unknown>;
  sections: Record<string, Section>;
}

function cell(v: string | number | boolean | null): string {
  if (v === null || v === undefined) return '—';
  if (typeof v === 'boolean') return v ? 'yes' : 'no';
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : '—';
  return v.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

export function renderTable(t: Table): string {
  const lines = [`**${t.title}**`, '', `| ${t.columns.join(' | ')} |`, `|${t.columns.map(() => '---').join('|')}|`];
  for (const r of t.rows) lines.push(`| ${r.map(cell).join(' | ')} |`);
  if (t.note) lines.push('', t.note);
  return lines.join('\n');
}

export function renderSection(s: Section): string {
  const out = [`## ${s.title}`, ''];
  if (s.skipped) {
    out.push(`Not run: ${s.skipped}`, '');
    return out.join('\n');
  }
  out.push(`Run ${s.started_at}, ${s.duration_s} s${machineLine(s.machine)}.`);
  const settings = Object.entries(s.settings);
  if (settings.length) out.push('', `Settings: ${settings.map(([k, v]) => `${k} = ${typeof v === 'string' ? v : JSON.stringify(v)}`).join('; ')}.`);
  for (const t of s.tables) out.push('', renderTable(t));
  if (s.output?.trim()) out.push('', '```text', s.output.replace(/\s+$/, '').replace(/```/g, "'''"), '```');
  if (s.checks.length) {
    out.push('', '**Checks**', '');
    for (const c of s.checks) out.push(`- ${c.pass ? 'PASS' : 'FAIL'} — ${c.name}: ${c.detail}`);
  }
  if (s.notes.length) {
    out.push('', '**Notes**', '');
    for (const n of s.notes) out.push(`- ${n}`);
  }
  out.push('');
  return out.join('\n');
}

function machineLine(m: Record<string, unknown>): string {
  if (!m || !m.cpu) return '';
  const load = m.load_average_1m_at_start;
  return ` on ${m.cpu}, ${m.cores} cores, ${m.memory_gb} GB, Node ${m.node}${load === undefined ? '' : `; load average ${load} at the start`}`;
}

const START = (name: string) => `<!-- bench:${name} -->`;
const END = (name: string) => `<!-- /bench:${name} -->`;
const PART = /<!-- bench:([\w-]+) -->\n([\s\S]*?)\n?<!-- \/bench:\1 -->/g;

const plainTitle = (title: string) => title.replace(/^\d+\.\s*/, '').trim().toLowerCase();

/**
 * The parts of an existing report, by benchmark name. A report written before the markers existed
 * is split at its level-2 headings and each part matched to a benchmark by its title.
 */
export function parseReport(doc: string, registry: readonly Benchmark[] = BENCHMARKS): Map<string, string> {
  const parts = new Map<string, string>();
  for (const m of doc.matchAll(PART)) parts.set(m[1], m[2].trim());
  if (parts.size || !doc.trim()) return parts;
  const chunks = doc.split(/^(?=## )/m).slice(1);
  for (const chunk of chunks) {
    const title = plainTitle(chunk.slice(3, chunk.indexOf('\n') < 0 ? undefined : chunk.indexOf('\n')));
    const b = registry.find((x) => plainTitle(x.title) === title);
    if (b) parts.set(b.name, chunk.trim());
  }
  return parts;
}

function placeholder(b: Benchmark): string {
  const needs = b.needs ? ` It needs ${b.needs}.` : '';
  return [`## ${b.title}`, '', `No result recorded here yet: run \`npm run bench:${b.name}\`.${needs}`].join('\n');
}

const CHECK_LINE = /^- (PASS|FAIL) — (.*)$/;

/**
 * The report with `section` put in place of that benchmark's part (or added), every other part
 * kept as it was. `doc` is the report as it stands (null when there is none yet).
 */
export function mergeReport(doc: string | null, section: Section | null, registry: readonly Benchmark[] = BENCHMARKS): string {
  const parts = parseReport(doc ?? '', registry);
  if (section) {
    const title = registry.find((b) => b.name === section.name)?.title ?? section.title;
    parts.set(section.name, renderSection({ ...section, title }).trim());
  }
  const known = registry.map((b) => b.name);
  const names = [...known, ...[...parts.keys()].filter((n) => !known.includes(n))];
  const titleOf = (n: string) => registry.find((b) => b.name === n)?.title ?? /^## (.*)$/m.exec(parts.get(n) ?? '')?.[1] ?? n;
  const ranOf = (n: string) => /^Run (\S+),/m.exec(parts.get(n) ?? '')?.[1]?.slice(0, 10) ?? (/^Not run: /m.test(parts.get(n) ?? '') ? 'failed' : '—');
  const out = [
    '# Benchmarks',
    '',
    'Written by the benchmarks themselves (scripts/bench/, the list in scripts/bench/registry.ts); do not edit',
    'by hand. Each benchmark owns the part between its marker comments and a rerun replaces only that part, so',
    'every part is the latest run of its benchmark, on the machine and under the load its first line names.',
    '`npm run bench` runs them all, `npm run bench:<name>` one; `BENCH_QUICK=1` gives a fast smoke pass with',
    'fewer runs and smaller inputs. Raw numbers of the last local run: `bench/results.json` (not committed).',
    '',
    'Method: every comparison is measured in the same process and run, after a warm-up, with ours and the',
    'alternative timed alternately (A B, B A, ...) so that other load on the machine hits both alike; the tables',
    'give medians with the spread ((max - min) / median) and the ratio. "x faster" = alternative median / our median.',
    '',
    '## Contents',
    '',
    '| benchmark | measures | run | last run |',
    '|---|---|---|---|',
  ];
  for (const n of names) {
    const b = registry.find((x) => x.name === n);
    out.push(`| ${cell(titleOf(n))} | ${cell(b?.what ?? '')} | \`npm run bench:${n}\` | ${ranOf(n)} |`);
  }
  const checks: string[] = [];
  for (const n of names) {
    for (const line of (parts.get(n) ?? '').split('\n')) {
      const m = CHECK_LINE.exec(line);
      if (!m) continue;
      const colon = m[2].lastIndexOf(': ');
      const [name, detail] = colon < 0 ? [m[2], ''] : [m[2].slice(0, colon), m[2].slice(colon + 2)];
      checks.push(`| ${n} | ${cell(name)} | ${m[1]} | ${cell(detail)} |`);
    }
  }
  if (checks.length) out.push('', '## Summary of checks', '', '| benchmark | check | result | detail |', '|---|---|---|---|', ...checks);
  out.push('');
  for (const n of names) {
    const b = registry.find((x) => x.name === n);
    out.push(START(n), parts.get(n) ?? (b ? placeholder(b) : `## ${n}`), END(n), '');
  }
  return out.join('\n');
}
