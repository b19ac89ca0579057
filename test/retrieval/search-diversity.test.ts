import t from 'tap';
import { diversify, overlapCoefficient } from '../../src/retrieval/diversity.ts';

const ids = (...n: number[]) => Int32Array.from(n);

t.test('overlap coefficient over sorted id arrays', async (t) => {
  t.equal(overlapCoefficient(ids(1, 2, 3, 4), ids(2, 3, 4, 5, 6, 7, 8, 9)), 0.75);
  t.equal(overlapCoefficient(ids(1, 2), ids(1, 2, 3)), 1);
  t.equal(overlapCoefficient(ids(), ids(1)), 0);
});

t.test('drops a candidate whose terms are covered by a kept one, keeps order, stops at limit', async (t) => {
  const terms: Record<string, Int32Array> = {
    a: ids(1, 2, 3, 4, 5, 6, 7, 8, 9, 10),
    b: ids(1, 2, 3, 4, 5, 6, 7, 8, 9, 11), // 9/10 shared with a
    c: ids(20, 21, 22, 23, 24, 25),
    d: ids(30, 31, 32, 33, 34, 35),
    e: ids(40, 41, 42, 43, 44, 45),
  };
  const out = diversify(['a', 'b', 'c', 'd', 'e'], (x) => terms[x], 3, 0.9);
  t.same(out.kept, ['a', 'c', 'd']);
  t.same(out.dropped, [{ item: 'b', duplicateOf: 'a', overlap: 0.9 }]);
  const loose = diversify(['a', 'b'], (x) => terms[x], 5, 0.95);
  t.same(loose.kept, ['a', 'b']);
});

t.test('short items (fewer than minTerms) are never called duplicates', async (t) => {
  const out = diversify(['x', 'y'], () => ids(1, 2, 3), 5, 0.5);
  t.same(out.kept, ['x', 'y']);
});

t.test('a short chunk contained in a longer kept one is a duplicate', async (t) => {
  const out = diversify(['long', 'short'], (x) => (x === 'long' ? ids(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12) : ids(2, 4, 6, 8, 10)), 5);
  t.same(out.kept, ['long']);
});
