/** The suite's one table: a row per input, with its verdict and, for failures, why. */

export interface Row {
  group: string;
  input: string;
  /** Bytes sent or served; null when not meaningful (a load run, a restart). */
  bytes: number | null;
  answer: string;
  /** null: not measured for this row (a restart check, a comparison). */
  ms: number | null;
  healthMaxMs: number | null;
  rssPeakMb: number | null;
  pass: boolean;
  /** Why it failed (or a note on a pass). */
  reason?: string;
}

export function formatBytes(n: number | null): string {
  if (n === null) return '-';
  if (n >= 1024 * 1024) return `${(n / 1024 / 1024).toFixed(n >= 10 * 1024 * 1024 ? 0 : 1)} MB`;
  if (n >= 1024) return `${(n / 1024).toFixed(0)} KB`;
  return `${n} B`;
}

const ms = (n: number | null) => (n === null ? '-' : n >= 10_000 ? `${(n / 1000).toFixed(0)} s` : n >= 1000 ? `${(n / 1000).toFixed(1)} s` : `${Math.round(n)} ms`);

export function renderTable(rows: Row[]): string {
  const head = ['group', 'input', 'size', 'answer', 'time', '/health max', 'RSS peak', 'verdict'];
  const cells = rows.map((r) => [
    r.group,
    r.input,
    formatBytes(r.bytes),
    r.answer,
    ms(r.ms),
    ms(r.healthMaxMs),
    r.rssPeakMb === null ? '-' : `${Math.round(r.rssPeakMb)} MB`,
    r.pass ? 'pass' : 'FAIL',
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: string[]) => `| ${c.map((x, i) => x.padEnd(widths[i]!)).join(' | ')} |`;
  const out = [line(head), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...cells.map(line)];
  const failed = rows.filter((r) => !r.pass);
  if (failed.length) {
    out.push('', `${failed.length} of ${rows.length} rows failed:`);
    for (const r of failed) out.push(`  - [${r.group}] ${r.input}: ${r.reason ?? 'failed'}`);
  }
  const notes = rows.filter((r) => r.pass && r.reason);
  if (notes.length) {
    out.push('', 'notes:');
    for (const r of notes) out.push(`  - [${r.group}] ${r.input}: ${r.reason}`);
  }
  return out.join('\n');
}
