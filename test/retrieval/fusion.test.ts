import t from 'tap';
import { reciprocalRankFusion, RRF_K } from '../../src/retrieval/fusion.ts';

t.test('RRF sums 1/(k + rank) over lists, k = 60', async (t) => {
  t.equal(RRF_K, 60);
  const fused = reciprocalRankFusion([
    [7, 3, 5],
    [3, 9],
  ]);
  t.same(fused.map((f) => f.index), [3, 7, 9, 5]);
  const three = fused[0];
  t.ok(Math.abs(three.score - (1 / 62 + 1 / 61)) < 1e-12);
  t.same(three.ranks, [2, 1]);
  t.same(fused.find((f) => f.index === 5)!.ranks, [3, null]);
});

t.test('ties: better single rank first, then lower index', async (t) => {
  // 1 and 2 each appear once at rank 1 -> same score; 4 and 8 at rank 2 in different lists
  const fused = reciprocalRankFusion([
    [2, 8],
    [1, 4],
  ]);
  t.same(fused.map((f) => f.index), [1, 2, 4, 8]);
});

t.test('duplicates inside a list count once; empty lists are fine; custom k', async (t) => {
  const fused = reciprocalRankFusion([[1, 1, 2], []], 10);
  t.same(fused.map((f) => [f.index, f.ranks[0]]), [[1, 1], [2, 3]]);
  t.ok(Math.abs(fused[0].score - 1 / 11) < 1e-12);
  t.same(reciprocalRankFusion([]), []);
});
