/**
 * Open collection indexes stay within KB_INDEX_CACHE_MB: searching many collections once each
 * closes the least recently used ones, an evicted collection is reopened (from its snapshot) with
 * the same answers, and the collection in use is never the one closed.
 */
import t from 'tap';
import { overBudget } from '../../src/kb/index-budget.ts';
import { serve, startKb, TEXT_DOC, waitEnded } from './jobs-fixtures.ts';

t.test('overBudget picks the oldest entries until the rest fit, never the one just used nor one still opening', async (t) => {
  const m = new Map([
    ['a', { bytes: 40 }],
    ['b', { bytes: 0 }],
    ['c', { bytes: 30 }],
    ['d', { bytes: 50 }],
  ]);
  t.same(overBudget(m, 200, 'd'), [], 'within the budget: nothing');
  t.same(overBudget(m, 60, 'd'), ['a', 'c'], 'oldest first, the opening one (0 bytes) skipped');
  t.same(overBudget(m, 60, 'a'), ['c', 'd'], 'the one just used is kept even when oldest');
  t.same(overBudget(new Map([['x', { bytes: 500 }]]), 10, 'x'), [], 'a single collection larger than the budget stays while in use');
});

t.test('many collections searched once each stay within the budget and answer again after eviction', async (t) => {
  const fx = await startKb(t, { KB_INDEX_CACHE_MB: '1' });
  const N = 24;
  const words = Array.from({ length: N }, (_, i) => `topic${String.fromCharCode(97 + (i % 26))}${i}`);
  for (const w of words) serve(fx.server, `/${w}.txt`, TEXT_DOC(w), 'text/plain');
  for (const [i, w] of words.entries()) {
    fx.kb.createCollection(`c${i}`, null);
    const job = await fx.kb.addDocuments(`c${i}`, { urls: [`${fx.server.origin}/${w}.txt`] });
    t.equal((await waitEnded(fx.kb, job)).status, 'succeeded');
  }
  const search = (i: number) => fx.kb.search(`c${i}`, { query: words[i]!, top_k: 5 }, { signal: AbortSignal.timeout(30_000) });

  let largest = 0;
  for (let i = 0; i < N; i++) {
    const r = await search(i);
    t.equal(r.results.length, 1, `c${i} answers`);
    const s = fx.kb.stats() as Record<string, number>;
    largest = Math.max(largest, s.indexes_approx_bytes! / Math.max(1, s.indexes_open!));
    t.ok(s.indexes_approx_bytes! <= s.index_cache_max_bytes! + largest, `after c${i}: ${s.indexes_approx_bytes} bytes open, budget ${s.index_cache_max_bytes}`);
  }
  const s = fx.kb.stats() as Record<string, number>;
  // Only meaningful when one collection is smaller than the budget: then some must have been closed.
  t.ok(largest > 0 && largest < s.index_cache_max_bytes!, `one small collection holds ${Math.round(largest)} bytes, under the 1 MB budget`);
  const fit = Math.max(1, Math.floor(s.index_cache_max_bytes! / largest));
  if (fit < N) t.ok(s.indexes_open! < N, `${s.indexes_open} of ${N} collections open`);

  // The first collections were closed; they answer as before (reopened from the store or snapshot).
  const again = await search(0);
  t.equal(again.results.length, 1);
  t.match(again.results[0]!.source, new RegExp(`${words[0]}\\.txt$`));
  t.ok((fx.kb.stats() as Record<string, number>).indexes_open! <= N);
});
