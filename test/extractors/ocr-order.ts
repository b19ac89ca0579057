/**
 * Reading order of an extraction against its reference: the share of the reference's word
 * 4-grams (multiset) found in the extraction. Interleaving two columns line by line breaks every
 * 4-gram that crosses a line, so this falls to about half while word recall stays at 1.
 * Used by the OCR tests and scripts/bench/ocr.bench.ts.
 */
import { words } from './word-recall.ts';

export function ngramOrder(expected: string, actual: string, n = 4): number {
  const grams = (ws: string[]) => {
    const out = new Map<string, number>();
    for (let i = 0; i + n <= ws.length; i++) {
      const g = ws.slice(i, i + n).join(' ');
      out.set(g, (out.get(g) ?? 0) + 1);
    }
    return out;
  };
  const want = grams(words(expected));
  const have = grams(words(actual));
  let total = 0;
  let found = 0;
  for (const [g, count] of want) {
    total += count;
    found += Math.min(count, have.get(g) ?? 0);
  }
  return total ? found / total : 1;
}
