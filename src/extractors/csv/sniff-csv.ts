/** Whether text without a type hint is a delimited table, for type detection (csv/index.ts). */

/** Fields in one line, delimiters inside double quotes not counted. */
function countFields(line: string, delim: string): number {
  let n = 1;
  let quoted = false;
  for (const ch of line) {
    if (ch === '"') quoted = !quoted;
    else if (ch === delim && !quoted) n++;
  }
  return n;
}

/**
 * Whether text without any type hint is a delimited table: the first lines (up to 20) split into
 * mostly the same number (>= 2, or >= 3 for commas, which prose uses freely) of fields by one
 * delimiter.
 */
export function looksLikeDelimited(text: string, complete = true): boolean {
  const lines = text.split(/\r?\n/).filter((l) => l.trim() !== '');
  // The last line of a sniff window that cut the file short may be partial; leave it out.
  const sample = lines.slice(0, Math.min(20, complete ? lines.length : lines.length - 1));
  if (sample.length < 3) return false;
  for (const [delim, minFields] of [['\t', 2], [';', 2], ['|', 2], [',', 3]] as const) {
    const counts = sample.map((l) => countFields(l, delim));
    const tally = new Map<number, number>();
    for (const c of counts) tally.set(c, (tally.get(c) ?? 0) + 1);
    const [mode, agreeing] = [...tally].sort((a, b) => b[1] - a[1])[0]!;
    // A header that differs from the body (a title line, a short header) is tolerated.
    if (mode >= minFields && agreeing / counts.length >= 0.75) return true;
  }
  return false;
}
