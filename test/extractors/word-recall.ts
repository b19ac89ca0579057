/**
 * Word recall used by the corpus extractor tests (test/corpus/extractors) and
 * scripts/measure-extraction-recall.ts: the share of
 * ground-truth words (multiset, NFKC case-folded, runs of letters/digits) found in the extraction.
 * Markdown syntax and HTML comments in the ground truth are ignored.
 */
export function words(text: string): string[] {
  const cleaned = text
    .normalize('NFKC')
    .replace(/<!--[\s\S]*?-->/g, ' ')
    .replace(/!\[[^\]]*\]\([^)]*\)/g, ' ')
    .replace(/\]\([^)]*\)/g, ' ')
    .replace(/&(amp|lt|gt|quot|nbsp);/g, ' ')
    .toLowerCase();
  return cleaned.match(/[\p{L}\p{N}]+/gu) ?? [];
}

export function wordRecall(expected: string, actual: string): { recall: number; found: number; total: number; missing: string[] } {
  const want = words(expected);
  const have = new Map<string, number>();
  for (const w of words(actual)) have.set(w, (have.get(w) ?? 0) + 1);
  let found = 0;
  const missing: string[] = [];
  for (const w of want) {
    const n = have.get(w) ?? 0;
    if (n > 0) {
      found++;
      have.set(w, n - 1);
    } else missing.push(w);
  }
  return { recall: want.length ? found / want.length : 1, found, total: want.length, missing };
}
